/**
 * The Attempt's container, as `process/spawn` effects. Every use of it goes through the Attempt's
 * WorldEffects stack (recorded, faultable, answered from the recording in a replay), keyed:
 *
 *   terminal   a command of the candidate's terminal tool
 *   oracle     gold: solution/ copied to /solution and `bash /solution/solve.sh` run
 *   verifier   tests/ copied to /tests, the verifier run, /logs/verifier/reward.txt read
 *
 * The live handler is made per Attempt (by setup) and holds its container, started at the first
 * effect that needs it; requests name no container, so a replay's requests match the recorded ones.
 * The container is a resource of the protocol's run: the handler, which runs in the protocol's
 * fiber, registers its removal with `withContainers`, which removes it when the protocol ends, however
 * it ends. Not an effect: a fault or a refusal injected on it would keep the container.
 */
import * as path from "node:path"
import { Effect, FiberRef, Schema } from "effect"
import type * as Engine from "../../src/container/Engine.ts"
import * as WE from "../../src/world/WorldEffects.ts"
import { type HarborTask, type VerifierDependencies, verifierDependencies } from "./tasks.ts"
import { openShell, type Shell } from "./terminal.ts"

/** What a command answers the model: Harbor's terminus agent keeps 10,000 bytes, the head and tail halves. */
export const OUTPUT_LIMIT_BYTES = 10_000

/** Output cut as terminus-2 cuts a terminal's output: the first and last halves of the limit, the interior counted. */
export const limitOutput = (output: string, maxBytes = OUTPUT_LIMIT_BYTES): string => {
  const bytes = Buffer.from(output, "utf8")
  if (bytes.length <= maxBytes) return output
  const half = Math.floor(maxBytes / 2)
  // A multi-byte character cut at either edge is dropped (decoded leniently, then re-encoded to count).
  const first = new TextDecoder("utf-8", { fatal: false }).decode(bytes.subarray(0, half)).replace(/\uFFFD$/, "")
  const last = new TextDecoder("utf-8", { fatal: false }).decode(bytes.subarray(bytes.length - half)).replace(/^\uFFFD/, "")
  const omitted = bytes.length - Buffer.byteLength(first) - Buffer.byteLength(last)
  return `${first}\n[... output limited to ${maxBytes} bytes; ${omitted} interior bytes omitted ...]\n${last}`
}

export const TerminalRequest = Schema.Struct({ task: Schema.String, command: Schema.String, timeoutSeconds: Schema.Number })
export const OracleRequest = Schema.Struct({ task: Schema.String })
export const VerifierRequest = Schema.Struct({ task: Schema.String, mode: Schema.Literal("test.sh", "provided-pytest") })

/** A command's result, as recorded. */
export const CommandResult = Schema.Struct({
  exitCode: Schema.NullOr(Schema.Number),
  timedOut: Schema.Boolean,
  output: Schema.String
})
export type CommandResult = typeof CommandResult.Type

export const VerifierResult = Schema.Struct({
  /** The number in reward.txt; null when the verifier wrote none (or not a number). */
  reward: Schema.NullOr(Schema.Number),
  exitCode: Schema.NullOr(Schema.Number),
  timedOut: Schema.Boolean,
  /** The verifier's output, its last lines. */
  log: Schema.String
})
export type VerifierResult = typeof VerifierResult.Type

/** The removals of the containers started during a protocol's run; null outside one. */
const removals = FiberRef.unsafeMake<Array<Effect.Effect<void>> | null>(null)

/** Runs `body` and then removes every container its effects started, however it ends. */
export const withContainers = <A, E, R>(body: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const started: Array<Effect.Effect<void>> = []
    return body.pipe(
      Effect.locally(removals, started),
      Effect.ensuring(Effect.suspend(() => Effect.forEach(started, (remove) => remove, { discard: true })))
    )
  })

const VERIFIER_LOG_LINES = 40

const shellWord = (w: string): string => `'${w.replace(/'/g, `'\\''`)}'`

/**
 * Stand-ins for what a Terminal-Bench verifier fetches from the internet, put first on test.sh's
 * PATH: `uvx`/`uv run` run their command with the image's Python (pytest as `python3 -m pytest`,
 * without the JSON report plugin's `--ctrf FILE`, as a bare `pytest` is too), `pip install`
 * installs nothing from PyPI, and
 * `curl` of astral.sh's installer answers an empty script; anything else goes to the real program.
 */
const shims: Readonly<Record<string, string>> = {
  uvx: [
    "#!/bin/bash",
    "# assay's provided-pytest stand-in for uvx: the image's Python, no download.",
    "while [ $# -gt 0 ]; do case \"$1\" in -p|--python|-w|--with|--from|--index|--index-url|--extra-index-url|--default-index|--index-strategy|--with-requirements|--with-editable|--python-preference|--constraints|--overrides) shift 2;; --*=*) shift;; -*) shift;; *) break;; esac; done",
    "tool=\"$1\"; shift",
    "args=(); while [ $# -gt 0 ]; do case \"$1\" in --ctrf) shift 2;; --ctrf=*) shift;; *) args+=(\"$1\"); shift;; esac; done",
    "if [ \"$tool\" = pytest ]; then exec python3 -m pytest \"${args[@]}\"; fi",
    "exec \"$tool\" \"${args[@]}\""
  ].join("\n"),
  uv: [
    "#!/bin/bash",
    "# assay's provided-pytest stand-in for uv: `uv run CMD` runs CMD with the image's Python; `uv pip install` installs nothing.",
    "if [ \"$1\" = run ]; then shift; while [ $# -gt 0 ]; do case \"$1\" in -p|--python|-w|--with|--from|--index|--index-url|--extra-index-url|--default-index|--index-strategy|--with-requirements|--with-editable|--python-preference) shift 2;; -*) shift;; *) break;; esac; done; exec /tmp/assay-shims/uvx \"$@\"; fi",
    "if [ \"$1\" = pip ] && [ \"$2\" = install ]; then echo \"provided-pytest: not installing from PyPI: ${*:3}\"; exit 0; fi",
    "echo \"provided-pytest: uv $1 is not stood in\" >&2; exit 1"
  ].join("\n"),
  pip: [
    "#!/bin/bash",
    "# assay's provided-pytest stand-in for pip install: nothing from PyPI (Debian's packages stand in).",
    "if [ \"$1\" = install ]; then echo \"provided-pytest: not installing from PyPI: ${*:2}\"; exit 0; fi",
    "exec python3 -m pip \"$@\""
  ].join("\n"),
  pytest: [
    "#!/bin/bash",
    "# assay's provided-pytest stand-in for pytest: the image's pytest, without the JSON report plugin's --ctrf FILE.",
    "args=(); while [ $# -gt 0 ]; do case \"$1\" in --ctrf) shift 2;; --ctrf=*) shift;; *) args+=(\"$1\"); shift;; esac; done",
    "exec python3 -m pytest \"${args[@]}\""
  ].join("\n"),
  curl: [
    "#!/bin/bash",
    "# assay's provided-pytest stand-in for curl: uv's installer is not fetched; the rest goes to curl.",
    "for a in \"$@\"; do case \"$a\" in *astral.sh*) exit 0;; esac; done",
    "PATH=\"${PATH#/tmp/assay-shims:}\" exec curl \"$@\""
  ].join("\n")
}

/**
 * The provided-pytest verifier: test.sh itself (its own setup steps and its reward), with what it
 * would fetch from the internet stood in:
 * - what it would install and the image lacks (its apt packages; the Python packages of
 *   `uvx -w` and `pip install`, as Debian's python3-* packages) installed from Debian, each on
 *   its own, where apt can; a marker line says what was installed and what could not be;
 * - uv, uvx, pip and uv's installer replaced by the stand-ins above, so its tests run with the
 *   image's pytest.
 */
export const providedPytest = (deps: VerifierDependencies): string => {
  const python = deps.python.map((d) => `${d.module}:${d.debian}`).join(" ")
  const writeShims = [...Object.entries(shims), ["pip3", shims["pip"]!] as const].map(([name, text]) =>
    `printf '%s\\n' ${shellWord(text)} > /tmp/assay-shims/${name} && chmod +x /tmp/assay-shims/${name}`
  )
  return [
    `missing=""`,
    ...(deps.apt.length > 0 ? [`for p in ${deps.apt.map(shellWord).join(" ")}; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done`] : []),
    ...(python !== "" ? [`for pair in ${python}; do python3 -c "import \${pair%%:*}" 2>/dev/null || missing="$missing \${pair#*:}"; done`] : []),
    `if [ -n "$missing" ] && command -v apt-get >/dev/null; then`,
    `  apt-get update -qq > /tmp/assay-verifier-deps.log 2>&1`,
    `  for p in $missing; do`,
    `    if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" >> /tmp/assay-verifier-deps.log 2>&1; then installed="$installed $p"; else failed="$failed $p"; fi`,
    `  done`,
    `  echo "provided-pytest: installed from Debian:\${installed:- none}; could not install:\${failed:- none}"`,
    `fi`,
    `mkdir -p /tmp/assay-shims "$HOME/.local/bin" && touch "$HOME/.local/bin/env"`,
    ...writeShims,
    `PATH="/tmp/assay-shims:$PATH" bash /tests/test.sh`
  ].join("\n")
}

export interface ContainerPlan {
  readonly task: HarborTask
  readonly image: string
}

/**
 * One Attempt's container: started at the first use that needs it (with the mounts an agent CLI
 * running inside asks for, when that is the first), removed with the protocol's run, and what else
 * must end with it (a relay of the host's loopback).
 */
export interface AttemptContainer {
  readonly engine: Engine.Engine
  readonly plan: ContainerPlan
  /** The container, started now if not yet; `mounts` only when it is the first to start it. */
  readonly started: (mounts?: ReadonlyArray<Engine.Mount>) => Effect.Effect<string, Engine.EngineError>
  /** Whether the container is running already. */
  readonly running: () => boolean
  /** Runs `end` when the container is removed. */
  readonly onRemove: (end: Effect.Effect<void>) => Effect.Effect<void>
}

export const attemptContainer = (engine: Engine.Engine, plan: ContainerPlan): AttemptContainer => {
  let container: string | null = null
  const ends: Array<Effect.Effect<void>> = []
  const { task } = plan
  const started = (mounts?: ReadonlyArray<Engine.Mount>) =>
    Effect.suspend(() =>
      container !== null
        ? Effect.succeed(container)
        : Effect.tap(
          engine.start({ image: plan.image, cpus: task.cpus, memoryMb: task.memoryMb, network: task.network, ...(mounts !== undefined ? { mounts } : {}) }),
          (c) =>
            Effect.flatMap(FiberRef.get(removals), (list) =>
              Effect.sync(() => {
                container = c
                // A failed removal is left to the engine's exit hook and the next run's sweep.
                list?.push(Effect.suspend(() => {
                  container = null
                  return Effect.forEach(ends.splice(0), (end) => end, { discard: true }).pipe(Effect.zipRight(Effect.ignore(engine.remove(c))))
                }))
              }))
        )
    )
  return {
    engine,
    plan,
    started,
    running: () => container !== null,
    onRemove: (end) => Effect.sync(() => void ends.push(end))
  }
}

/**
 * The Attempts' containers by their setup's evidence (the one object setup hands on to the
 * protocol), so the protocol can run an agent CLI in the same container the handler uses.
 */
const places = new WeakMap<object, AttemptContainer>()
export const register = (evidence: object, place: AttemptContainer): void => void places.set(evidence, place)
export const placeOf = (evidence: unknown): AttemptContainer | undefined =>
  typeof evidence === "object" && evidence !== null ? places.get(evidence) : undefined

/** The live `process/spawn` handler of one Attempt's container. */
export const containerHandler = (place: AttemptContainer): WE.Handler => {
  const { engine, plan } = place
  const { task } = plan
  const started = place.started()
  // The terminal's shell, kept between calls (terminal.ts); one per container.
  let shell: { readonly container: string; readonly shell: Shell } | null = null
  return (effect) =>
    Effect.gen(function*() {
      const failed = (detail: string) => new WE.EffectFailed({ kind: effect.kind, key: effect.key, reason: "handler", detail })
      const decode = <A, I>(schema: Schema.Schema<A, I>) => Schema.decodeUnknown(schema)(effect.request).pipe(Effect.mapError((e) => failed(e.message)))
      const engineFailed = (e: Engine.EngineError) => failed(e.message)
      switch (effect.key) {
        case "terminal": {
          const request = yield* decode(TerminalRequest)
          const c = yield* started.pipe(Effect.mapError(engineFailed))
          if (shell === null || shell.container !== c) {
            const opened = { container: c, shell: openShell(engine, c) }
            shell = opened
            yield* place.onRemove(opened.shell.close)
          }
          const r = yield* shell.shell.run(request.command, request.timeoutSeconds).pipe(Effect.mapError(engineFailed))
          return Schema.encodeSync(CommandResult)({ exitCode: r.exitCode, timedOut: r.timedOut, output: limitOutput(r.output) })
        }
        case "oracle": {
          yield* decode(OracleRequest)
          const c = yield* started.pipe(Effect.mapError(engineFailed))
          yield* engine.copyIn(c, path.join(task.dir, "solution"), "/solution").pipe(Effect.mapError(engineFailed))
          const r = yield* engine.exec(c, { command: "bash /solution/solve.sh", timeoutSeconds: task.agentTimeoutSeconds }).pipe(Effect.mapError(engineFailed))
          return Schema.encodeSync(CommandResult)({ exitCode: r.exitCode, timedOut: r.timedOut, output: limitOutput(r.output) })
        }
        case "verifier": {
          const request = yield* decode(VerifierRequest)
          const c = yield* started.pipe(Effect.mapError(engineFailed))
          yield* engine.copyIn(c, path.join(task.dir, "tests"), "/tests").pipe(Effect.mapError(engineFailed))
          const prepared = yield* engine.exec(c, { command: "mkdir -p /logs/verifier /logs/agent && rm -f /logs/verifier/reward.txt", timeoutSeconds: 30 }).pipe(
            Effect.mapError(engineFailed)
          )
          if (prepared.exitCode !== 0) return yield* failed(`preparing /logs/verifier: ${prepared.output.trim()}`)
          const command = request.mode === "test.sh" ? "bash /tests/test.sh" : providedPytest(verifierDependencies(task.testScript))
          const r = yield* engine.exec(c, { command, timeoutSeconds: task.verifierTimeoutSeconds }).pipe(Effect.mapError(engineFailed))
          const read = yield* engine.exec(c, { command: "cat /logs/verifier/reward.txt", timeoutSeconds: 30 }).pipe(Effect.mapError(engineFailed))
          const text = read.exitCode === 0 ? read.output.trim() : ""
          const reward = text !== "" && Number.isFinite(Number(text)) ? Number(text) : null
          const lines = r.output.trimEnd().split("\n")
          // What the provided-pytest mode installed, kept above the tail however long the log is.
          const standIns = lines.find((l) => l.startsWith("provided-pytest: installed from Debian:"))
          const kept = lines.slice(-VERIFIER_LOG_LINES)
          const log = (standIns !== undefined && !kept.includes(standIns) ? [standIns, "[...]", ...kept] : kept).join("\n")
          return Schema.encodeSync(VerifierResult)({ reward, exitCode: r.exitCode, timedOut: r.timedOut, log })
        }
        default:
          return yield* failed(`no container effect ${effect.key}`)
      }
    })
}
