/**
 * Finding an agent CLI and deciding whether it can run: absent (no binary), disabled (the caller
 * turned it off, or the binary does not answer `--version`), live otherwise.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import { adapters } from "./adapters/index.ts"
import type { Detection, HarnessAdapter, HarnessName } from "./Harness.ts"
import { currentEnv, runProcess } from "./Process.ts"

export interface DetectOptions {
  /** Folders searched before PATH, e.g. a project's `node_modules/.bin`. */
  readonly binDirs?: ReadonlyArray<string>
  /** The PATH to search; default the current one. */
  readonly path?: string
  /** Harnesses turned off by the caller, with the reason reported. */
  readonly disabled?: Partial<Readonly<Record<HarnessName, string>>>
  /** Limit for `--version`; default 20 s (some CLIs start slowly). */
  readonly versionTimeoutMs?: number
}

const isExecutableFile = (p: string): boolean => {
  try {
    fs.accessSync(p, fs.constants.X_OK)
    return fs.statSync(p).isFile()
  } catch {
    // Missing or not executable: keep looking.
    return false
  }
}

/** The first executable named `binary` in binDirs then PATH. */
export const findBinary = (binary: string, options: DetectOptions = {}): string | undefined => {
  const dirs = [...(options.binDirs ?? []), ...(options.path ?? process.env.PATH ?? "").split(path.delimiter)]
  for (const dir of dirs) {
    if (dir === "") continue
    const candidate = path.resolve(dir, binary)
    if (isExecutableFile(candidate)) return candidate
  }
  return undefined
}

/** A version number from `--version` output (`codex-cli 0.171.0` -> `0.171.0`). */
export const parseVersion = (output: string): string | undefined => {
  const m = /\d+\.\d+(?:\.\d+)?(?:[-+][\w.]+)?/.exec(output)
  return m?.[0] ?? (output.trim().split("\n")[0]?.trim() || undefined)
}

export const detect = (adapter: HarnessAdapter, options: DetectOptions = {}): Effect.Effect<Detection> =>
  Effect.gen(function* () {
    const binary = findBinary(adapter.binary, options)
    if (binary === undefined) {
      const where = [...(options.binDirs ?? []), ...(options.path === "" ? [] : ["PATH"])].join(", ")
      return {
        harness: adapter.name,
        binary: undefined,
        version: undefined,
        liveness: { status: "absent", reason: `no \`${adapter.binary}\` binary in ${where} (npm package ${adapter.npmPackage})` }
      }
    }
    const disabledReason = options.disabled?.[adapter.name]
    if (disabledReason !== undefined) {
      return { harness: adapter.name, binary, version: undefined, liveness: { status: "disabled", reason: disabledReason } }
    }
    // node's folder first: npm shims (`#!/usr/bin/env node`) must find the same node. A private
    // HOME, so a CLI that sets up its state on first start does it in a folder removed afterwards.
    const home = fs.mkdtempSync(path.join(os.tmpdir(), `assay-detect-${adapter.name}-`))
    const env = {
      ...currentEnv(),
      PATH: [path.dirname(process.execPath), options.path ?? process.env.PATH ?? ""].join(path.delimiter),
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, ".config"),
      XDG_DATA_HOME: path.join(home, ".local", "share"),
      XDG_STATE_HOME: path.join(home, ".local", "state"),
      XDG_CACHE_HOME: path.join(home, ".cache"),
      CODEX_HOME: path.join(home, ".codex"),
      CLAUDE_CONFIG_DIR: path.join(home, ".claude"),
      PI_CODING_AGENT_DIR: path.join(home, ".pi")
    }
    const outcome = yield* runProcess({
      command: binary,
      args: ["--version"],
      cwd: home,
      env,
      timeoutMs: options.versionTimeoutMs ?? 20_000
    }).pipe(
      Effect.either,
      Effect.ensuring(Effect.sync(() => fs.rmSync(home, { recursive: true, force: true })))
    )
    if (outcome._tag === "Left") {
      return { harness: adapter.name, binary, version: undefined, liveness: { status: "disabled", reason: outcome.left.message } }
    }
    const o = outcome.right
    const text = `${o.stdout}\n${o.stderr}`.trim()
    if (o.timedOut || o.exitCode !== 0) {
      const why = o.timedOut ? "timed out" : `exited ${o.exitCode ?? o.signal}`
      const detail = text.split("\n").slice(-1)[0] ?? ""
      return {
        harness: adapter.name,
        binary,
        version: undefined,
        liveness: { status: "disabled", reason: `\`${adapter.binary} --version\` ${why}${detail === "" ? "" : `: ${detail}`}` }
      }
    }
    const version = parseVersion(o.stdout.trim() === "" ? o.stderr : o.stdout)
    return { harness: adapter.name, binary, version, liveness: { status: "live", reason: `${binary} ${version ?? ""}`.trim() } }
  })

/** Detection of every harness (default: all six adapters), in adapter order. */
export const detectAll = (
  options: DetectOptions = {},
  list: ReadonlyArray<HarnessAdapter> = Object.values(adapters)
): Effect.Effect<ReadonlyArray<Detection>> => Effect.forEach(list, (a) => detect(a, options), { concurrency: 4 })
