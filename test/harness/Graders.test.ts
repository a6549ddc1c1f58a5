import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { findPython, grade, type Grader, runPythonCheck } from "../../src/harness/Graders.ts"
import { processesWithCmdline } from "../support/processes.ts"
import { tempDir } from "./support.ts"

const python = await Effect.runPromise(findPython())
if (python === undefined) throw new Error("these tests need python3 on PATH")

const setup = (files: Record<string, string>) => {
  const taskDir = tempDir("task")
  const workDir = tempDir("work")
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(taskDir, name), content)
  return { taskDir, workDir }
}

describe("graders", () => {
  it.effect("regex and JSON keys are judged on the final answer and on work-folder files", () =>
    Effect.gen(function* () {
      const { taskDir, workDir } = setup({})
      fs.writeFileSync(path.join(workDir, "out.json"), JSON.stringify({ a: 1, b: 2 }))
      const graders: ReadonlyArray<Grader> = [
        { kind: "regex", name: "says 42", pattern: "\\b42\\b" },
        { kind: "json-keys", name: "answer keys", keys: ["x", "y"] },
        { kind: "json-keys", name: "file keys", keys: ["a", "b"], file: "out.json" },
        { kind: "json-keys", name: "missing file", keys: ["a"], file: "nope.json" }
      ]
      const r = yield* grade(graders, { answer: 'It is 42. ```json\n{"x": 1, "y": {"z": "}"}}\n```', workDir, taskDir, python })
      expect(r.verdicts.map((v) => v.status)).toEqual(["passed", "passed", "passed", "failed"])
      expect(r.verdicts[3]?.reason).toContain("missing")
      expect(r.correctness).toBe(3 / 4)
    }))

  it.effect("a Python check passes on exit 0 and reports its last line", () =>
    Effect.gen(function* () {
      const { taskDir, workDir } = setup({
        "ok.py": "import sys\nprint('answer was', open(sys.argv[2]).read())\n",
        "bad.py": "print('wrong value')\nraise SystemExit(1)\n"
      })
      const r = yield* grade(
        [
          { kind: "python", name: "ok", script: "ok.py" },
          { kind: "python", name: "bad", script: "bad.py" }
        ],
        { answer: "hello", workDir, taskDir, python }
      )
      expect(r.verdicts).toMatchObject([
        { status: "passed", reason: "answer was hello" },
        { status: "failed", reason: "wrong value" }
      ])
    }))

  it.effect("a Python check that reads a secret from the environment finds nothing; HOME is the work folder", () =>
    Effect.gen(function* () {
      process.env.ASSAY_TEST_SECRET = "hunter2"
      process.env.OPENAI_API_KEY ??= "sk-test-not-real"
      const { taskDir, workDir } = setup({
        "env.py": [
          "import os, sys",
          "leaks = [k for k in ('ASSAY_TEST_SECRET', 'OPENAI_API_KEY') if os.environ.get(k)]",
          "assert not leaks, f'leaked {leaks}'",
          "assert os.environ['HOME'] == sys.argv[1], os.environ['HOME']",
          "print(sorted(os.environ))"
        ].join("\n")
      })
      const r = yield* grade([{ kind: "python", name: "env", script: "env.py" }], { answer: "", workDir, taskDir, python })
      delete process.env.ASSAY_TEST_SECRET
      expect(r.verdicts[0]?.status, r.verdicts[0]?.reason).toBe("passed")
      expect(r.verdicts[0]?.reason).not.toContain("SECRET")
    }))

  it.live("a Python check runs in the sandbox: no key in any environ it can read, no file of the task folder but its script", () =>
    Effect.gen(function* () {
      const key = `sk-assay-grader-fake-${randomBytes(6).toString("hex")}`
      const before = process.env.OPENAI_API_KEY
      process.env.OPENAI_API_KEY = key
      const { taskDir, workDir } = setup({
        "expected.txt": "the answer key",
        "peek.py": [
          "import glob, os, sys",
          "seen = ''",
          "for f in glob.glob('/proc/*/environ'):",
          "    try: seen += open(f, 'rb').read().decode('latin1')",
          "    except OSError: pass",
          "found = ['key'] if 'OPENAI' in seen else []",
          "found += ['expected'] if os.path.exists(os.path.join(os.path.dirname(sys.argv[0]), 'expected.txt')) else []",
          `found += ['repo'] if os.path.exists(${JSON.stringify(path.resolve("package.json"))}) else []`,
          "print('found: ' + ', '.join(found) if found else 'isolated')",
          "sys.exit(1 if found else 0)"
        ].join("\n")
      })
      const r = yield* grade([{ kind: "python", name: "peek", script: "peek.py" }], { answer: "", workDir, taskDir, python }).pipe(
        Effect.ensuring(Effect.sync(() => {
          if (before === undefined) delete process.env.OPENAI_API_KEY
          else process.env.OPENAI_API_KEY = before
        }))
      )
      expect(r.verdicts[0]).toMatchObject({ status: "passed", reason: "isolated" })
      const out = yield* runPythonCheck({ python, script: path.join(taskDir, "peek.py"), workDir, answerFile: path.join(taskDir, "peek.py"), timeoutMs: 30_000 })
      expect(out.reason).toBe("isolated")
      expect(JSON.stringify(r)).not.toContain(key)
    }))

  it.live("a Python check that loops forever is killed at the timeout together with its child", () =>
    Effect.gen(function* () {
      // The check runs in the sandbox's PID namespace: its processes are found from outside by a
      // marker in their command lines (the child's) and the script's path (the check's).
      const marker = `assay-loop-${randomBytes(6).toString("hex")}`
      const { taskDir, workDir } = setup({
        "loop.py": [
          "import subprocess, sys, os, time",
          `child = subprocess.Popen([sys.executable, '-c', 'import time\\nwhile True: time.sleep(1)', '${marker}'])`,
          "open(os.path.join(sys.argv[1], 'pids'), 'w').write(f'{os.getpid()} {child.pid}')",
          "while True: time.sleep(0.05)"
        ].join("\n")
      })
      const started = Date.now()
      const outcome = yield* runPythonCheck({
        python,
        script: path.join(taskDir, "loop.py"),
        workDir,
        answerFile: path.join(taskDir, "loop.py"),
        // Room for Python to start and spawn its child before the kill on a loaded machine (a
        // Python start took up to 1.1 s at load 8-10 on 2 cores).
        timeoutMs: 4000
      })
      expect(outcome).toMatchObject({ status: "failed", timedOut: true })
      expect(Date.now() - started).toBeLessThan(10_000)
      const pids = fs.readFileSync(path.join(workDir, "pids"), "utf8").split(" ").map(Number)
      expect(pids).toHaveLength(2)
      expect(processesWithCmdline(marker)).toEqual([])
      expect(processesWithCmdline(path.join(taskDir, "loop.py"))).toEqual([])
    }))

  it.live("a check's timeout ends every process it started, setsid'd and backgrounded ones too", () =>
    Effect.gen(function* () {
      // A sleep length of its own marks this test's processes in /proc/*/cmdline.
      const marker = `300.${randomBytes(4).readUInt32BE(0)}`
      const { taskDir, workDir } = setup({
        "scatter.py": [
          "import os, subprocess, sys, time",
          "out = os.path.join(sys.argv[1], 'left')",
          // One that left the group under a shell that exited (reparented), one in the background
          // of the group, one that also cleared its environment.
          `subprocess.run(['sh', '-c', 'setsid sleep ${marker} & echo $! >> "$0"; sleep ${marker} & echo $! >> "$0"; (env -i setsid sleep ${marker} &)', out])`,
          "while True: time.sleep(0.05)"
        ].join("\n")
      })
      // Room for Python to start and the shell to background both sleeps before the kill on a
      // loaded machine (a Python start took up to 1.1 s at load 8-10 on 2 cores).
      const timeoutSecs = 3
      const started = Date.now()
      const r = yield* grade([{ kind: "python", name: "scatter", script: "scatter.py", timeoutSecs }], {
        answer: "",
        workDir,
        taskDir,
        python
      })
      const returnedAt = Date.now()
      expect(r.verdicts[0]).toMatchObject({ status: "failed", reason: `timed out after ${timeoutSecs * 1000} ms` })
      const pids = fs.readFileSync(path.join(workDir, "left"), "utf8").trim().split("\n")
      expect(pids).toHaveLength(2)
      // Right when grade returns, seen from outside: no process of the check is left.
      expect(processesWithCmdline(`sleep ${marker}`)).toEqual([])
      expect(processesWithCmdline(path.join(taskDir, "scatter.py"))).toEqual([])
      const overshoot = returnedAt - started - timeoutSecs * 1000
      console.log(`grader timeout overshoot: ${overshoot} ms from the deadline to grade's return, every process gone`)
      expect(overshoot).toBeLessThan(3_000)
    }))

  it.effect("without python3, Python checks are skipped with the reason and do not count", () =>
    Effect.gen(function* () {
      const { taskDir, workDir } = setup({ "ok.py": "pass\n" })
      const r = yield* grade(
        [
          { kind: "python", name: "ok", script: "ok.py" },
          { kind: "regex", name: "yes", pattern: "yes" }
        ],
        { answer: "yes", workDir, taskDir, python: undefined }
      )
      expect(r.verdicts[0]).toMatchObject({ status: "skipped", reason: "python3 not found on PATH" })
      expect(r).toMatchObject({ passed: 1, evaluated: 1, correctness: 1 })
      expect(yield* findPython("/nonexistent")).toBeUndefined()
    }))
})
