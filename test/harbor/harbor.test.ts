/**
 * The Harbor-format provider on three tasks written here (test/harbor/fixtures: a git repair, a
 * file transformation whose test.sh needs the network as Terminal-Bench 2's do, a failing test to
 * fix), built and run with podman: each Dockerfile is FROM python:3.13-slim-bookworm, substituted by
 * the local Debian base image tools/containers/ensure.mjs builds (npm test's pretest). Skipped, saying
 * so, only where podman cannot run a container at all.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import type { Json } from "../../src/content/Canonical.ts"
import * as Engine from "../../src/container/Engine.ts"
import * as Agent from "../../src/evaluation/Agent.ts"
import type { Message } from "../../src/evaluation/Conversation.ts"
import { evaluate } from "../../src/evaluation/evaluate.ts"
import type { Provider } from "../../src/evaluation/Provider.ts"
import * as Model from "../../src/model/Model.ts"
import { modelAgent } from "../../src/model/ModelAgent.ts"
import * as Registry from "../../src/model/Registry.ts"
import type { AgentDef } from "../../src/schema/AgentDef.ts"
import type { Attempt } from "../../src/schema/Attempt.ts"
import { type EnvironmentDef, noLimits, withEffects } from "../../src/schema/EnvironmentDef.ts"
import * as harbor from "../../providers/harbor/index.ts"
import { VerifierResult } from "../../providers/harbor/container.ts"
import { tempDir } from "../support/tempDirs.ts"
import { baseTag, containersOf, fixtures, images, podman, unable } from "./podman.ts"

const provider: Provider = harbor.make({ dir: fixtures, engine: "podman", images })

const REF = "openai:gpt-4o-mini-2024-07-18"
const model = Effect.runSync(
  Effect.flatMap(Registry.fixture, (file) => Either.match(Registry.resolveIn(file, REF), { onLeft: (e) => Effect.dieMessage(e.message), onRight: Effect.succeed }))
)
const agentDef: AgentDef = { name: "openai:gpt-4o-mini", kind: "llm", model: model.ref, actionSpace: "tools", prompt: "", limits: noLimits }

const envOf = (task: string) => Effect.map(provider.environments, (es) => es.find((e) => e.task === task)!)

const roster = (task: string, name: "gold" | "echo") =>
  Effect.gen(function*() {
    const env = yield* envOf(task)
    const agent = yield* provider.scripted(name, env)
    return yield* evaluate(env, { capabilities: provider.capabilities, agentDef: Agent.referenceDef(name), agent, repetition: 0 })
  })

/** The built-in agent against a scripted model: each turn's commands through the terminal tool, then an answer. */
const modelRun = (env: EnvironmentDef, turns: ReadonlyArray<ReadonlyArray<string>>, replay?: Attempt["recording"]) =>
  evaluate(env, {
    capabilities: provider.capabilities,
    agentDef,
    agent: modelAgent(agentDef.name, model),
    repetition: 0,
    registryEntry: model as unknown as Json,
    ...(replay !== undefined ? { replay } : {})
  }).pipe(Effect.provide(Model.layerScripted(replay !== undefined ? [] : [
    ...turns.map((commands) => ({ toolCalls: commands.map((command) => ({ name: "terminal", arguments: { command } })) })),
    { text: "Done." }
  ])))

const solution = (task: string) => fs.readFileSync(path.join(fixtures, task, "solution/solve.sh"), "utf8")
const keys = (a: Attempt) => a.recording.filter((r) => r.kind === "process/spawn").map((r) => r.key)
const verifierOf = (a: Attempt) => Schema.decodeUnknownSync(VerifierResult)((a.recording.find((r) => r.key === "verifier")!.outcome as { ok: unknown }).ok)
const toolMessages = (a: Attempt) => (a.output as { transcript: ReadonlyArray<Message> }).transcript.filter((m) => m.role === "tool")

/** Containers of this process still there: none once each Attempt is over. */
const ours = () => containersOf(process.pid)

const TASKS = ["csv-totals", "fix-failing-test", "git-repair"]

describe.skipIf(unable !== null)(`Harbor-format tasks in podman${unable !== null ? ` (skipped: ${unable})` : ""}`, { timeout: 300_000 }, () => {
  afterAll(() => {
    expect(ours()).toBe("")
  })

  it.effect("gold (solution/solve.sh, as one oracle effect) scores 1 on every task; the substitution and the verifier mode are on each cell", () =>
    Effect.gen(function*() {
      expect((yield* provider.environments).map((e) => e.task)).toEqual(TASKS)
      for (const task of TASKS) {
        const a = yield* roster(task, "gold")
        expect([task, a.verdict.reward, a.verdict.ended]).toEqual([task, 1, null])
        expect(keys(a)).toEqual(["oracle", "verifier"])
        const evidence = a.evidence as Record<string, Json>
        expect(evidence["tier"]).toBe("calibration")
        expect(evidence["substituted"]).toEqual([`python:3.13-slim-bookworm=${baseTag}`])
        // csv-totals's test.sh fetches uv as Terminal-Bench 2's do: its test file runs with the image's pytest instead, said so.
        expect([task, evidence["verifier"]]).toEqual([task, task === "csv-totals" ? "provided-pytest" : "test.sh"])
        if (task === "csv-totals") expect(evidence["verifierWhy"]).toContain("uv")
        expect(ours()).toBe("")
      }
    }))

  it.effect("the do-nothing candidate scores 0 on every task: the verifier ran and wrote 0", () =>
    Effect.gen(function*() {
      for (const task of TASKS) {
        const a = yield* roster(task, "echo")
        expect([task, a.verdict.reward, verifierOf(a).reward]).toEqual([task, 0, 0])
        expect(keys(a)).toEqual(["verifier"])
      }
    }))

  it.effect("the built-in agent, its model issuing the solution's commands through the terminal tool, scores 1; each command is a recorded process/spawn", () =>
    Effect.gen(function*() {
      for (const task of TASKS) {
        const env = yield* envOf(task)
        // A first look whose output is longer than the terminal keeps: cut in the middle as terminus cuts it.
        const a = yield* modelRun(env, [["seq 1 5000"], [solution(task)]])
        expect([task, a.verdict.reward]).toEqual([task, 1])
        expect(keys(a)).toEqual(["terminal", "terminal", "verifier"])
        const [look, solve] = toolMessages(a)
        expect(look?.content).toMatch(/^\[exit code 0\]\n1\n2\n/)
        expect(look?.content).toMatch(/\[\.\.\. output limited to 10000 bytes; \d+ interior bytes omitted \.\.\.\]\n/)
        expect(look?.content.endsWith("4999\n5000\n")).toBe(true)
        expect([task, solve?.error]).toEqual([task, false])
      }
    }))

  it.effect("the task's cpu and memory limits are the container's (task.toml: cpus = 1, memory_mb = 512)", () =>
    Effect.gen(function*() {
      const cgroup = "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max"
      // One cpu: a CFS quota of one period (100 ms) per period.
      const quota = "cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null || cut -d' ' -f1 /sys/fs/cgroup/cpu.max"
      const a = yield* modelRun(yield* envOf("fix-failing-test"), [[cgroup, quota]])
      expect(toolMessages(a).map((m) => m.content)).toEqual([`[exit code 0]\n${512 * 1024 * 1024}\n`, "[exit code 0]\n100000\n"])
    }))

  it.effect("with every process/spawn faulted, the candidate's command gets the fault as a tool error, the Attempt ends at the verifier, and no container is left", () =>
    Effect.gen(function*() {
      const env = withEffects(yield* envOf("git-repair"), { admission: "all", faults: { seed: 1, rate: 1, only: ["process/spawn"], kinds: ["server-error"] } })
      const a = yield* modelRun(env, [["git status"]])
      expect(toolMessages(a)[0]?.content).toBe("Error: server-error injected on process/spawn terminal #1")
      expect(a.verdict.ended?.detail).toContain("verifier")
      expect(a.faults.map((f) => f.key)).toEqual(["process/spawn:terminal", "process/spawn:verifier"])
      expect(ours()).toBe("")
    }))

  it.effect("a recorded Attempt replays with no container: the same commands answered from the recording, the same reward", () =>
    Effect.gen(function*() {
      const env = yield* envOf("fix-failing-test")
      const live = yield* modelRun(env, [[solution("fix-failing-test")]])
      expect(live.verdict.reward).toBe(1)
      const replayed = yield* modelRun(env, [], live.recording)
      expect([replayed.verdict.reward, replayed.verdict.ended]).toEqual([1, null])
      expect(replayed.recording).toEqual(live.recording)
    }))

  it.effect("provided-pytest runs test.sh itself (its own setup steps, its reward), with uvx, pip and uv's installer stood in and its PyPI packages taken from Debian", () =>
    Effect.gen(function*() {
      const dir = tempDir("assay-harbor-")
      fs.cpSync(path.join(fixtures, "csv-totals"), path.join(dir, "stand-ins"), { recursive: true })
      // A setup step of test.sh's own (a helper copied next to the tests), and a package from PyPI (yaml).
      fs.writeFileSync(path.join(dir, "stand-ins/tests/helper.py"), "EXPECTED = {'ada': 20.0, 'bob': 7.0, 'cy': 10.0}\n")
      fs.writeFileSync(
        path.join(dir, "stand-ins/tests/test_outputs.py"),
        ["import json, sys, yaml", "sys.path.insert(0, '/app')", "from helper import EXPECTED", "", "def test_totals():", "    assert yaml.safe_load(open('/app/totals.json')) == EXPECTED", ""].join("\n")
      )
      fs.writeFileSync(
        path.join(dir, "stand-ins/tests/test.sh"),
        [
          "#!/bin/bash",
          "curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh",
          "source $HOME/.local/bin/env",
          "cp /tests/helper.py /app/helper.py",
          "pip install pyyaml==6.0.2",
          "uvx -p 3.13 --index https://download.pytorch.org/whl/cpu --index-strategy unsafe-best-match -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 -w pyyaml==6.0.2 pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA",
          "if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi",
          ""
        ].join("\n")
      )
      const p = harbor.make({ dir, engine: "podman", images })
      const env = (yield* p.environments)[0]!
      const a = yield* evaluate(env, { capabilities: p.capabilities, agentDef: Agent.referenceDef("gold"), agent: yield* p.scripted("gold", env), repetition: 0 })
      const evidence = a.evidence as { readonly verifier: string; readonly verifierStandIns: ReadonlyArray<string> }
      expect(evidence.verifier).toBe("provided-pytest")
      expect(evidence.verifierStandIns).toEqual(["pyyaml==6.0.2 -> Debian python3-yaml"])
      const log = (a.verdict.details as { readonly log: string }).log
      expect(log, log).toMatch(/provided-pytest: installed from Debian: python3-yaml; could not install: none/)
      expect(log).toMatch(/provided-pytest: not installing from PyPI: pyyaml==6.0.2/)
      expect(a.verdict.reward, log).toBe(1)
    }))

  it.effect("a task whose environment does not build is not run: the cell says so with the build's last lines", () =>
    Effect.gen(function*() {
      const dir = tempDir("assay-harbor-")
      fs.cpSync(path.join(fixtures, "git-repair"), path.join(dir, "broken"), { recursive: true })
      fs.writeFileSync(path.join(dir, "broken/environment/Dockerfile"), `FROM ${baseTag}\nRUN echo "the mirror is gone" && exit 3\n`)
      const broken = harbor.make({ dir, engine: "podman" })
      const env = (yield* broken.environments)[0]!
      const a = yield* evaluate(env, { capabilities: broken.capabilities, agentDef: Agent.referenceDef("gold"), agent: yield* broken.scripted("gold", env), repetition: 0 })
      expect(a.verdict.ended?.reason).toBe("setup-failed")
      expect(a.verdict.ended?.detail).toContain("the environment was not built, so the task is not run")
      expect(a.verdict.ended?.detail).toContain("the mirror is gone")
      expect(a.recording).toEqual([])
    }))

  it.effect("the sweep at an engine's start removes the containers of an assay process no longer alive, and no other's", () =>
    Effect.gen(function*() {
      // A pid that was alive and is not any more: a child that has exited.
      const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout
      const started = podman(...["run", "-d", "--label", "assay=1", "--label", `assay.pid=${dead}`, "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024", "--entrypoint", "sleep", baseTag, "infinity"])
      expect(started.status).toBe(0)
      const leftover = started.stdout.trim()
      const engine = yield* Engine.make({ engine: "podman" })
      const mine = yield* engine.start({ image: baseTag, cpus: 1, memoryMb: 256, network: false })
      yield* Engine.make({ engine: "podman" }).pipe(Effect.flatMap((e) => e.sweep))
      // Gone once the sweep returns. Not asserted: that this sweep was the one to remove it. Every
      // engine sweeps as it starts (the harbor provider's too), so another test file running
      // meanwhile may have removed it first; the sweep's count then was 0 (seen once in CI).
      expect(podman("container", "exists", leftover).status).not.toBe(0)
      // This process is alive: its container stays until it removes it.
      expect(podman("container", "exists", mine).status).toBe(0)
      yield* engine.remove(mine)
      expect(podman("container", "exists", mine).status).not.toBe(0)
    }))
})

describe.skipIf(unable !== null)("the container engine's layer", () => {
  it.effect("finds the engine asked for (and sweeps as it starts)", () =>
    Effect.gen(function*() {
      const engine = yield* Effect.provide(Engine.Engine, Engine.layer({ engine: "podman" }))
      expect(engine.name).toBe("podman")
    }))
})
