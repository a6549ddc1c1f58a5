/**
 * The candidate's workspace and its commands. The workspace is the Attempt's world (table
 * `files`: path -> text), so file tools are pure tools and a replay rebuilds it from the recorded
 * writes. A command runs as a `process/spawn` effect: its live handler writes the workspace to a
 * fresh temp folder, runs the command there in the sandbox (src/sandbox/Sandbox.ts: bubblewrap,
 * where only that folder is writable and nothing of assay, its data or the user is visible, no
 * network, a cleared environment, and the whole namespace killed at the timeout), removes the
 * folder, and answers the output and the files the command changed, which
 * the protocol applies to the world. The request carries the workspace as its difference from
 * the task's files, so a replay that reached another workspace fails loudly (replay-mismatch).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Schema, type Scope } from "effect"
import type { Json } from "../../src/content/Canonical.ts"
import { findPython, type Python } from "../../src/harness/Graders.ts"
import * as Sandbox from "../../src/sandbox/Sandbox.ts"
import * as World from "../../src/world/World.ts"
import * as WE from "../../src/world/WorldEffects.ts"
import { type Files, loadTasks } from "./repos.ts"

export const FILES = "files"

/** A command's time limit unless it asks for another, and the most it may ask for. */
export const DEFAULT_TIMEOUT_SECONDS = 30
export const MAX_TIMEOUT_SECONDS = 120
/** What a tool answers of each output stream: the head and the tail, the middle elided. */
const OUTPUT_KEEP = 8 * 1024
/** A file larger than this (or not UTF-8 text) is not carried back from a command. */
const MAX_FILE_BYTES = 256 * 1024
/** Folders a command's writes in are not carried back (caches, installed packages). */
const SKIPPED_DIRS = new Set(["node_modules", "__pycache__", ".git", ".cache"])

export const worldOf = (files: Files): World.World =>
  World.make({ [FILES]: Object.fromEntries([...files].map(([p, text]) => [p, text as Json])) })

export const filesOf = (world: World.World): Map<string, string> =>
  new Map(World.entries(world, FILES).flatMap(([p, text]) => (typeof text === "string" ? [[p, text] as const] : [])))

/** A path a file tool accepts: relative, normalized, inside the workspace. */
export const normalPath = (raw: string): string | undefined => {
  const p = path.posix.normalize(raw.replaceAll("\\", "/")).replace(/^\.\//, "")
  if (p === "" || p === "." || p.startsWith("/") || p === ".." || p.startsWith("../") || p.endsWith("/")) return undefined
  return p
}

/** What differs from `base` in `files`: changed or new files with their text, removed ones as null. */
export const difference = (base: Files, files: Files): Record<string, string | null> => {
  const changed: Record<string, string | null> = {}
  for (const [p, text] of files) if (base.get(p) !== text) changed[p] = text
  for (const p of base.keys()) if (!files.has(p)) changed[p] = null
  return changed
}

export const applyDifference = (base: Files, changed: Readonly<Record<string, string | null>>): Map<string, string> => {
  const files = new Map(base)
  for (const [p, text] of Object.entries(changed)) {
    if (text === null) files.delete(p)
    else files.set(p, text)
  }
  return files
}

/** Writes files under a folder (which must exist). */
export const materialize = (dir: string, files: Files): void => {
  for (const [p, text] of files) {
    const full = path.join(dir, ...p.split("/"))
    fs.mkdirSync(path.dirname(full), { recursive: true })
    fs.writeFileSync(full, text)
  }
}

/** The text files under a folder a command may have changed (no caches, no binaries, no huge files). */
const textTree = (root: string): Map<string, string> => {
  const files = new Map<string, string>()
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(full)
      } else if (entry.isFile() && fs.statSync(full).size <= MAX_FILE_BYTES) {
        const bytes = fs.readFileSync(full)
        const text = bytes.toString("utf8")
        // Not valid UTF-8: a binary the workspace cannot hold as text.
        if (Buffer.from(text, "utf8").equals(bytes)) files.set(path.relative(root, full).split(path.sep).join("/"), text)
      }
    }
  }
  walk(root)
  return files
}

const SYSTEM_PATH = ["/usr/local/bin", "/usr/bin", "/bin"]

/**
 * The node that runs the JavaScript repositories: this process's own under Node; under another
 * runtime (Deno, whose execPath is deno), the first `node` on the caller's PATH or the system's.
 */
export const nodeExecutable: string = (() => {
  if (!("Deno" in globalThis)) return process.execPath
  const dirs = [...(process.env["PATH"] ?? "").split(path.delimiter), ...SYSTEM_PATH].filter((d) => d !== "")
  for (const d of dirs) {
    const candidate = path.join(d, "node")
    try {
      fs.accessSync(candidate, fs.constants.X_OK)
      return candidate
    } catch {
      // Not here: the next folder.
    }
  }
  return "node"
})()

/** The PATH of a command: where node and python3 are, then the system's. */
export const commandPath = (python: Python | undefined): string =>
  [...new Set([path.dirname(nodeExecutable), ...(python ? [path.dirname(python.executable)] : []), ...SYSTEM_PATH])].join(":")

/**
 * The whole environment a command sees: nothing of the caller's (no keys reach it). HOME is the
 * sandbox's own folder, so what tools keep there (caches, histories) stays out of the workspace.
 */
export const commandEnv = (python: Python | undefined): Record<string, string> => ({
  PATH: commandPath(python),
  LANG: "C.UTF-8",
  PYTHONDONTWRITEBYTECODE: "1"
})

let pythonFound: Promise<Python | undefined> | undefined
/** python3 on the system's PATH, resolved to its real executable once per process. */
export const python: Effect.Effect<Python | undefined> = Effect.suspend(() =>
  Effect.promise(() => (pythonFound ??= Effect.runPromise(findPython(SYSTEM_PATH.join(":")))))
)

const keep = (text: string): string =>
  text.length <= 2 * OUTPUT_KEEP
    ? text
    : `${text.slice(0, OUTPUT_KEEP)}\n[... ${text.length - 2 * OUTPUT_KEEP} characters elided ...]\n${text.slice(-OUTPUT_KEEP)}`

export const CommandRequest = Schema.Struct({
  task: Schema.String,
  command: Schema.String,
  timeoutSeconds: Schema.Number,
  /** The workspace as its difference from the task's files. */
  workspace: Schema.Record({ key: Schema.String, value: Schema.NullOr(Schema.String) })
})
export type CommandRequest = typeof CommandRequest.Type

/** What a command answers (portable: recorded, replayed). */
export const CommandResult = Schema.Struct({
  exitCode: Schema.NullOr(Schema.Number),
  signal: Schema.NullOr(Schema.String),
  timedOut: Schema.Boolean,
  stdout: Schema.String,
  stderr: Schema.String,
  wallMs: Schema.Number,
  /** Processes of the command still alive when the sweep gave up (0: every one was ended). */
  remaining: Schema.Number,
  /** Files the command changed, created (text) or removed (null). */
  changes: Schema.Record({ key: Schema.String, value: Schema.NullOr(Schema.String) })
})
export type CommandResult = typeof CommandResult.Type

/** A fresh temp folder, removed with the scope. */
export const tempFolder = (prefix: string): Effect.Effect<string, string, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({ try: () => fs.mkdtempSync(path.join(os.tmpdir(), prefix)), catch: (e) => `temp folder: ${String(e)}` }),
    (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
  )

/** What a command and the hidden tests may read besides the system: node's and python's install folders. */
export const interpreterBinds = (python: Python | undefined): ReadonlyArray<Sandbox.Bind> =>
  [nodeExecutable, ...(python ? [python.executable] : [])].flatMap((exe) => Sandbox.installFolder(exe) ?? [])

/** Runs a shell command in a temp copy of the files, removed afterwards. */
export const runCommand = (files: Files, command: string, timeoutSeconds: number): Effect.Effect<CommandResult, string> =>
  Effect.scoped(
    Effect.gen(function*() {
      const py = yield* python
      const dir = yield* tempFolder("assay-repair-")
      yield* Effect.try({ try: () => materialize(dir, files), catch: (e) => `workspace: ${String(e)}` })
      const before = textTree(dir)
      const outcome = yield* Sandbox.run({
        command: "/bin/sh",
        args: ["-c", command],
        work: dir,
        env: commandEnv(py),
        timeoutMs: timeoutSeconds * 1000,
        readOnly: interpreterBinds(py),
        maxOutputBytes: 1024 * 1024
      }).pipe(Effect.mapError((e) => e.message))
      const after = yield* Effect.try({ try: () => textTree(dir), catch: (e) => `workspace: ${String(e)}` })
      return {
        exitCode: outcome.exitCode,
        signal: outcome.signal,
        timedOut: outcome.timedOut,
        stdout: keep(outcome.stdout),
        stderr: keep(outcome.stderr),
        wallMs: outcome.wallMs,
        remaining: outcome.remaining,
        changes: difference(before, after)
      }
    })
  )

/** The live `process/spawn` handler of a workspace's commands. */
export const commandHandler: WE.Handler = (effect) =>
  Effect.gen(function*() {
    const failed = (detail: string) => new WE.EffectFailed({ kind: effect.kind, key: effect.key, reason: "handler", detail })
    const request = yield* Schema.decodeUnknown(CommandRequest)(effect.request).pipe(Effect.mapError((e) => failed(e.message)))
    const tasks = yield* loadTasks().pipe(Effect.mapError((e) => failed(e.message)))
    const task = tasks.find((t) => t.id === request.task)
    if (task === undefined) return yield* failed(`no coding-repair task ${request.task}`)
    const files = applyDifference(task.workspace, request.workspace)
    const result = yield* runCommand(files, request.command, request.timeoutSeconds).pipe(Effect.mapError(failed))
    return Schema.encodeSync(CommandResult)(result) as unknown as Json
  })
