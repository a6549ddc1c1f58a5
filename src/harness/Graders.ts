/**
 * Deterministic graders of a harness run: a regex on the final answer, required JSON keys (in the
 * answer or in a file of the work folder) and Python checks.
 *
 * A Python check is `python3 -I -B check.py WORK_DIR ANSWER_FILE`, run in the work folder in the
 * sandbox (src/sandbox/Sandbox.ts), since it runs the candidate's code: a cleared environment
 * (HOME = the work folder, nothing of the caller's: no keys reach it), only the work folder
 * writable, the check script and the answer read-only, nothing else of assay or the user visible,
 * no network; at the timeout the whole namespace is killed. Exit 0 passes; the last output line is
 * the reason.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Schema } from "effect"
import { isObject } from "./Harness.ts"
import * as Sandbox from "../sandbox/Sandbox.ts"
import { runProcess } from "./Process.ts"

export const Grader = Schema.Union(
  Schema.Struct({
    kind: Schema.Literal("regex"),
    name: Schema.String,
    pattern: Schema.String,
    flags: Schema.optional(Schema.String)
  }),
  Schema.Struct({
    kind: Schema.Literal("json-keys"),
    name: Schema.String,
    keys: Schema.Array(Schema.String),
    /** Omitted: the final answer (its first JSON object); otherwise a path in the work folder. */
    file: Schema.optional(Schema.String)
  }),
  Schema.Struct({
    kind: Schema.Literal("python"),
    name: Schema.String,
    /** Path of the script relative to the task folder. */
    script: Schema.String,
    timeoutSecs: Schema.optional(Schema.Number)
  })
)
export type Grader = typeof Grader.Type

export type VerdictStatus = "passed" | "failed" | "skipped"

export interface GraderVerdict {
  readonly name: string
  readonly kind: Grader["kind"]
  readonly status: VerdictStatus
  readonly reason: string
}

export interface GradeReport {
  readonly verdicts: ReadonlyArray<GraderVerdict>
  readonly passed: number
  readonly evaluated: number
  /** passed / evaluated; undefined when nothing was evaluated. */
  readonly correctness: number | undefined
}

/** A Python interpreter resolved to its real executable (pyenv shims need the caller's env). */
export interface Python {
  readonly executable: string
  readonly version: string
}

export interface GradeInput {
  readonly answer: string
  readonly workDir: string
  /** Folder holding the task's check scripts. */
  readonly taskDir: string
  /** `undefined` = python3 absent: Python checks are skipped with that reason. */
  readonly python: Python | undefined
  /** Default timeout of a Python check when the grader names none. */
  readonly pythonTimeoutMs?: number
}

export const report = (verdicts: ReadonlyArray<GraderVerdict>): GradeReport => {
  const evaluated = verdicts.filter((v) => v.status !== "skipped").length
  const passed = verdicts.filter((v) => v.status === "passed").length
  return { verdicts, passed, evaluated, correctness: evaluated === 0 ? undefined : passed / evaluated }
}

/** Finds python3 on the given PATH and asks it for its real executable. */
export const findPython = (
  searchPath: string = process.env.PATH ?? ""
): Effect.Effect<Python | undefined> =>
  Effect.gen(function* () {
    for (const dir of searchPath.split(path.delimiter)) {
      if (dir === "") continue
      const candidate = path.join(dir, "python3")
      if (!isExecutable(candidate)) continue
      const probe = yield* runProcess({
        command: candidate,
        args: ["-c", "import sys; print(sys.executable); print('%d.%d.%d' % sys.version_info[:3])"],
        cwd: os.tmpdir(),
        env: { PATH: searchPath, HOME: process.env.HOME ?? os.tmpdir() },
        timeoutMs: 10_000
      }).pipe(Effect.option)
      if (probe._tag === "None" || probe.value.exitCode !== 0) continue
      const [executable, version] = probe.value.stdout.trim().split("\n")
      if (executable !== undefined && version !== undefined) return { executable, version }
    }
    return undefined
  })

const isExecutable = (p: string): boolean => {
  try {
    fs.accessSync(p, fs.constants.X_OK)
    return fs.statSync(p).isFile()
  } catch {
    // Not there or not executable: not a candidate.
    return false
  }
}

/** The whole environment a Python check sees. */
export const pythonEnv = (workDir: string): Record<string, string> => ({
  HOME: workDir,
  PATH: "/usr/local/bin:/usr/bin:/bin",
  LANG: "C.UTF-8"
})

export interface PythonCheckOutcome {
  readonly status: "passed" | "failed"
  readonly reason: string
  readonly timedOut: boolean
}

export const runPythonCheck = (input: {
  readonly python: Python
  readonly script: string
  readonly workDir: string
  readonly answerFile: string
  readonly timeoutMs: number
}): Effect.Effect<PythonCheckOutcome> =>
  Sandbox.run({
    command: input.python.executable,
    // -I: isolated (no user site, no PYTHON* variables, script dir not on sys.path); -B: no .pyc in the work folder.
    args: ["-I", "-B", input.script, input.workDir, input.answerFile],
    work: input.workDir,
    env: pythonEnv(input.workDir),
    timeoutMs: input.timeoutMs,
    readOnly: [input.script, input.answerFile, ...[Sandbox.installFolder(input.python.executable) ?? []].flat()],
    maxOutputBytes: 256 * 1024
  }).pipe(
    Effect.map((o): PythonCheckOutcome => {
      const lastLine = (o.stdout.trim() + "\n" + o.stderr.trim()).trim().split("\n").pop() ?? ""
      if (o.timedOut) return { status: "failed", reason: `timed out after ${input.timeoutMs} ms`, timedOut: true }
      return o.exitCode === 0
        ? { status: "passed", reason: lastLine === "" ? "ok" : lastLine, timedOut: false }
        : { status: "failed", reason: lastLine === "" ? `exit ${o.exitCode ?? o.signal}` : lastLine, timedOut: false }
    }),
    Effect.catchAll((e) => Effect.succeed<PythonCheckOutcome>({ status: "failed", reason: e.message, timedOut: false }))
  )

/** The first JSON object in a text (bare or inside a ``` fence). */
export const firstJsonObject = (text: string): Record<string, unknown> | undefined => {
  for (let i = text.indexOf("{"); i !== -1; i = text.indexOf("{", i + 1)) {
    let depth = 0
    let inString = false
    for (let j = i; j < text.length; j++) {
      const c = text[j]
      if (inString) {
        if (c === "\\") j++
        else if (c === '"') inString = false
      } else if (c === '"') inString = true
      else if (c === "{") depth++
      else if (c === "}" && --depth === 0) {
        try {
          const v: unknown = JSON.parse(text.slice(i, j + 1))
          if (isObject(v)) return v as Record<string, unknown>
        } catch {
          // Not JSON after all: try the next opening brace.
        }
        break
      }
    }
  }
  return undefined
}

const jsonKeysVerdict = (
  g: Extract<Grader, { kind: "json-keys" }>,
  answer: string,
  workDir: string
): GraderVerdict => {
  const verdict = (status: VerdictStatus, reason: string): GraderVerdict => ({ name: g.name, kind: g.kind, status, reason })
  let value: Record<string, unknown> | undefined
  if (g.file === undefined) {
    value = firstJsonObject(answer)
    if (value === undefined) return verdict("failed", "no JSON object in the answer")
  } else {
    const file = path.resolve(workDir, g.file)
    if (!file.startsWith(workDir + path.sep)) return verdict("failed", `${g.file} is outside the work folder`)
    let text: string
    try {
      text = fs.readFileSync(file, "utf8")
    } catch {
      return verdict("failed", `${g.file} is missing`)
    }
    try {
      const v: unknown = JSON.parse(text)
      if (!isObject(v)) return verdict("failed", `${g.file} is not a JSON object`)
      value = v as Record<string, unknown>
    } catch {
      return verdict("failed", `${g.file} is not valid JSON`)
    }
  }
  const missing = g.keys.filter((k) => !(k in value))
  return missing.length === 0 ? verdict("passed", "all keys present") : verdict("failed", `missing keys: ${missing.join(", ")}`)
}

export const grade = (graders: ReadonlyArray<Grader>, input: GradeInput): Effect.Effect<GradeReport> =>
  Effect.gen(function* () {
    const verdicts: Array<GraderVerdict> = []
    let answerFile: string | undefined
    // Removed however grading ends: an interrupted check (a cancelled run) must not leave it in /tmp.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (answerFile !== undefined) fs.rmSync(path.dirname(answerFile), { recursive: true, force: true })
      })
    )
    for (const g of graders) {
      switch (g.kind) {
        case "regex": {
          const ok = new RegExp(g.pattern, g.flags ?? "").test(input.answer)
          verdicts.push({
            name: g.name,
            kind: g.kind,
            status: ok ? "passed" : "failed",
            reason: ok ? `answer matches /${g.pattern}/` : `answer does not match /${g.pattern}/`
          })
          break
        }
        case "json-keys":
          verdicts.push(jsonKeysVerdict(g, input.answer, input.workDir))
          break
        case "python": {
          if (input.python === undefined) {
            verdicts.push({ name: g.name, kind: g.kind, status: "skipped", reason: "python3 not found on PATH" })
            break
          }
          if (answerFile === undefined) {
            // Outside the work folder so the check reads the answer without it being part of the diff.
            const dir = fs.mkdtempSync(path.join(os.tmpdir(), "assay-answer-"))
            answerFile = path.join(dir, "answer.txt")
            fs.writeFileSync(answerFile, input.answer)
          }
          const outcome = yield* runPythonCheck({
            python: input.python,
            script: path.join(input.taskDir, g.script),
            workDir: input.workDir,
            answerFile,
            timeoutMs: g.timeoutSecs !== undefined ? g.timeoutSecs * 1000 : (input.pythonTimeoutMs ?? 30_000)
          })
          verdicts.push({ name: g.name, kind: g.kind, status: outcome.status, reason: outcome.reason })
          break
        }
      }
    }
    return report(verdicts)
  }).pipe(Effect.scoped)
