/**
 * An agent CLI (`harness:NAME`) inside the task's container, as Harbor runs its installed agents:
 * the container is the CLI's sandbox. The bridge (src/harness/bridge) starts the CLI through the
 * `Sandbox` service; during a Harbor protocol that service is this one, which
 *
 * - starts the Attempt's container with the CLI's installation bound read-only and its private
 *   state folder (config, session files, home) bound writable, both at their host paths, so the
 *   bridge reads the CLI's session files afterwards as it does on the host; a Node program
 *   (gemini, qwen) also gets the host's Node, which runs it (the image's own `node` only where
 *   the host's does not run);
 * - relays the host's loopback ports the CLI must reach (the bridge's model proxy and MCP server)
 *   into the container's own loopback (src/container/Relay.ts), and nothing else: a task without
 *   internet keeps none;
 * - answers the command line `podman exec --env-file F CONTAINER BINARY ARGS…`: the CLI runs in
 *   the task's working directory with its own shell and file tools acting on the task's files.
 *
 * The CLI's model calls are the bridge's `model/generate:agent` effects as anywhere else: metered,
 * capped, faulted, recorded, replayed without a CLI or a container.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import type * as Engine from "../../src/container/Engine.ts"
import { relayLoopback } from "../../src/container/Relay.ts"
import { RUN_TOKEN_VARIABLE } from "../../src/harness/Process.ts"
import { type Bind, bindOf, SandboxError, type SandboxService, type SandboxSpec } from "../../src/sandbox/Sandbox.ts"
import type { AttemptContainer } from "./container.ts"

const mountsOf = (binds: ReadonlyArray<Bind | string> | undefined, readOnly: boolean): Array<Engine.Mount> =>
  (binds ?? []).map((b) => ({ ...bindOf(b), readOnly }))

/** The interpreter a file names after `#!` (a script: it must run in the container), or null. */
const interpreterOf = (file: string): string | null => {
  const head = Buffer.alloc(256)
  const fd = fs.openSync(file, "r")
  try {
    const n = fs.readSync(fd, head, 0, head.length, 0)
    const text = head.subarray(0, n).toString("utf8")
    if (!text.startsWith("#!")) return null
    const line = text.slice(2).split("\n")[0]!.trim().split(/\s+/)
    if (line[0]?.endsWith("/env") !== true) return line[0] ?? null
    // `#!/usr/bin/env -S node --flag`: the program is the first word after env's own options.
    return line.slice(1).find((w) => !w.startsWith("-")) ?? null
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Where the host's Node is bound, read-only, in a container whose agent CLI is a Node program
 * (gemini, qwen): the Node the CLI was installed and checked with, which needs only glibc 2.28
 * and the libstdc++ every Debian or Ubuntu image has (apt depends on it). A path of assay's own,
 * so it shadows nothing of the task's.
 */
const HOST_NODE = "/.assay/node"

/** The environment as an `--env-file`: one `KEY=value` a line (a value cannot hold a newline there). */
const envFileText = (env: Readonly<Record<string, string>>): string | SandboxError => {
  const lines: Array<string> = []
  for (const [k, v] of Object.entries(env)) {
    if (v.includes("\n")) return new SandboxError({ reason: "spawn-failed", detail: `the variable ${k} holds a newline, which an engine's env file cannot` })
    lines.push(`${k}=${v}`)
  }
  return lines.join("\n") + "\n"
}

/** The Sandbox service whose processes run in the Attempt's container. */
export const containerSandbox = (place: AttemptContainer): SandboxService => {
  const relayed = new Set<number>()
  const failed = (detail: string) => new SandboxError({ reason: "spawn-failed", detail: `in the task's container: ${detail}` })
  const prepare = (spec: SandboxSpec) =>
    Effect.gen(function*() {
      if (place.running() && relayed.size === 0) {
        return yield* failed("the container was started before the agent CLI, without its installation; the CLI must be the first to use it")
      }
      const binary = yield* Effect.try({ try: () => fs.realpathSync(spec.command), catch: (e) => failed(`the CLI ${spec.command}: ${String(e)}`) })
      const interpreter = yield* Effect.try({ try: () => interpreterOf(binary), catch: (e) => failed(`reading ${binary}: ${String(e)}`) })
      const node = interpreter === "node" ? yield* Effect.try({ try: () => fs.realpathSync(process.execPath), catch: (e) => failed(`the host's Node: ${String(e)}`) }) : null
      const container = yield* place.started([
        ...mountsOf(spec.readOnly, true),
        ...mountsOf(spec.writable, false),
        ...(node !== null ? [{ source: node, target: HOST_NODE, readOnly: true }] : [])
      ]).pipe(Effect.mapError((e) => failed(e.message)))
      const inContainer = (command: string) => place.engine.exec(container, { command, timeoutSeconds: 30 }).pipe(Effect.mapError((e) => failed(e.message)))
      let argv: ReadonlyArray<string> = [binary, ...spec.args]
      if (node !== null) {
        // The host's Node where it runs in the image; else the image's own, when it has one.
        const runs = yield* inContainer(`${HOST_NODE} --version`)
        if (runs.exitCode === 0) argv = [HOST_NODE, binary, ...spec.args]
        else if ((yield* inContainer("command -v node")).exitCode !== 0) {
          return yield* failed(
            `${path.basename(spec.command)} is a Node program; the host's Node does not run in the task's image (${runs.output.trim().split("\n")[0] ?? ""}) and the image has no node of its own; claude, codex and opencode run natively in any image`
          )
        }
      } else if (interpreter !== null && (yield* inContainer(`command -v ${interpreter}`)).exitCode !== 0) {
        return yield* failed(
          `${path.basename(spec.command)} is a ${interpreter} script and the task's image has no ${interpreter}; claude, codex and opencode run natively in any image`
        )
      }
      const ports = (spec.loopback ?? []).filter((p) => !relayed.has(p))
      if (ports.length > 0) {
        const pid = yield* place.engine.pid(container).pipe(Effect.mapError((e) => failed(e.message)))
        for (const port of ports) {
          const relay = yield* relayLoopback(pid, port).pipe(Effect.mapError((e) => failed(e.message)))
          relayed.add(port)
          yield* place.onRemove(relay.close)
        }
      }
      // The CLI's environment, in a file only this process reads (its values never in a process list).
      const { PWD: _pwd, ...env } = spec.env
      const text = envFileText(env)
      if (typeof text !== "string") return yield* text
      const dir = yield* Effect.try({ try: () => fs.mkdtempSync(path.join(os.tmpdir(), "assay-agent-env-")), catch: (e) => failed(`the env file: ${String(e)}`) })
      const envFile = path.join(dir, "env")
      yield* place.onRemove(Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      yield* Effect.try({ try: () => fs.writeFileSync(envFile, text, { mode: 0o600 }), catch: (e) => failed(`the env file: ${String(e)}`) })
      const line = place.engine.execCommand(container, argv, { envFile })
      const token = spec.env[RUN_TOKEN_VARIABLE]
      return {
        command: line.command,
        args: line.args,
        // The engine's client: the host's PATH and HOME; the run's marker, so ending the CLI finds it.
        env: {
          PATH: process.env["PATH"] ?? "/usr/bin:/bin",
          ...(process.env["HOME"] !== undefined ? { HOME: process.env["HOME"] } : {}),
          ...(token !== undefined ? { [RUN_TOKEN_VARIABLE]: token } : {})
        }
      }
    })
  return {
    isolation: "container",
    run: () => Effect.fail(new SandboxError({ reason: "unavailable", detail: "a task's container runs agent CLIs only (prepare)" })),
    prepare,
    check: Effect.void
  }
}
