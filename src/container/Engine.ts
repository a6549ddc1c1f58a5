/**
 * A container engine (podman or docker, driven through its command line) for benchmarks whose world
 * is a container: Harbor-format tasks (providers/harbor). What it does:
 *
 * - `build`: a Dockerfile folder into an image, tagged by the hash of the folder's content (and of
 *   the image substitutions applied to its FROM lines), so an unchanged folder is built once and a
 *   changed one is a new image; a failed build answers its last lines;
 * - `start`: a container per Attempt, kept alive with `sleep infinity`, labelled as assay's and as
 *   this process's (`assay.run`, `assay.pid`), with cpu and memory limits and explicit ulimits;
 * - `exec`: a command (bash -c) in it with a deadline (coreutils `timeout` inside, and the engine's
 *   client killed a little later should that not end it), its output kept to a bound;
 * - `copyIn` a host folder, `remove` the container;
 * - `sweep`: removes the containers of assay processes no longer alive (a SIGKILLed run), so none
 *   is left running at the next start; containers still held at this process's exit are removed then.
 *
 * On the Debian machines CI runs on, podman needs `--runtime runc --cgroup-manager=cgroupfs` (its
 * default runtime refuses hybrid cgroups) and explicit ulimits: `layer` adds them for podman.
 */
import { spawn, spawnSync } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Context, Effect, Layer, Schema } from "effect"
import { errnoOf, procPids, procTree } from "../harness/Proc.ts"

export class EngineError extends Schema.TaggedError<EngineError>()("EngineError", {
  reason: Schema.Literal("unavailable", "build-failed", "start-failed", "exec-failed", "copy-failed", "remove-failed"),
  detail: Schema.String
}) {
  override get message() {
    return `container engine: ${this.reason}: ${this.detail}`
  }
}

export type EngineName = "podman" | "docker"

/** `FROM` image substitutions: an image a Dockerfile names, and the local one used instead. */
export type Substitutions = Readonly<Record<string, string>>

export interface BuildSpec {
  /** The build context (a task's environment/ folder), holding the Dockerfile. */
  readonly context: string
  /** The image's repository name; its tag is the content hash. */
  readonly name: string
  readonly substitutions: Substitutions
  readonly timeoutSeconds: number
}

export interface Built {
  readonly image: string
  /** The substitutions that applied to this Dockerfile (FROM lines that named them). */
  readonly substituted: Readonly<Record<string, string>>
  /** False when the image was already there (built before with the same content). */
  readonly fresh: boolean
}

/** A host path shown inside the container (at `target`, default the same path). */
export interface Mount {
  readonly source: string
  readonly target?: string
  readonly readOnly: boolean
}

export interface StartSpec {
  readonly image: string
  readonly cpus: number | null
  readonly memoryMb: number | null
  readonly network: boolean
  /** Host folders or files bound into the container (an agent CLI's installation and state). */
  readonly mounts?: ReadonlyArray<Mount>
}

export interface ExecSpec {
  readonly command: string
  readonly timeoutSeconds: number
  /** The working directory; the image's WORKDIR by default. */
  readonly cwd?: string
  /** Output kept (stdout and stderr together, in order); the rest is dropped. Default 1 MiB. */
  readonly maxOutputBytes?: number
}

export interface ExecResult {
  readonly exitCode: number | null
  readonly timedOut: boolean
  /** stdout and stderr interleaved as a terminal shows them. */
  readonly output: string
}

export interface Engine {
  readonly name: EngineName
  /** The label every container of this process carries (`assay.run=…`), for a listing by label. */
  readonly runLabel: string
  readonly build: (spec: BuildSpec) => Effect.Effect<Built, EngineError>
  readonly start: (spec: StartSpec) => Effect.Effect<string, EngineError>
  readonly exec: (container: string, spec: ExecSpec) => Effect.Effect<ExecResult, EngineError>
  readonly copyIn: (container: string, from: string, to: string) => Effect.Effect<void, EngineError>
  readonly remove: (container: string) => Effect.Effect<void, EngineError>
  /** The host pid of the container's first process: its namespaces are /proc/PID/ns/*. */
  readonly pid: (container: string) => Effect.Effect<number, EngineError>
  /**
   * The command line that runs `argv` in the container as a process of the caller's (an agent CLI
   * the caller starts, watches and ends): the engine's client with `exec`, the environment read
   * from `envFile` (so no value shows in the host's process list); `interactive` keeps its stdin
   * open (a shell the caller writes commands to).
   */
  readonly execCommand: (
    container: string,
    argv: ReadonlyArray<string>,
    options: { readonly envFile?: string; readonly cwd?: string; readonly interactive?: boolean }
  ) => {
    readonly command: string
    readonly args: ReadonlyArray<string>
  }
  /** Removes the containers of assay processes that are no longer alive; answers how many. */
  readonly sweep: Effect.Effect<number, EngineError>
}

export const Engine = Context.GenericTag<Engine>("assay/container/Engine")

// ---------------------------------------------------------------------------------------------
// The engine's command line

const ULIMITS = ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"]
/** What an engine's own commands (not a task's) may take before they are ended. */
const ENGINE_TIMEOUT_MS = 120_000
const TAIL_LINES = 15

interface CliResult {
  readonly code: number | null
  readonly output: string
  readonly timedOut: boolean
}

/**
 * The overlay layers the processes of a tree have as their root (`.../overlay/LAYER/diff` as the
 * upper directory of their "/"): a build's RUN step runs in its working container's layer.
 */
const rootLayersOf = (pids: Iterable<number>): Set<string> => {
  const layers = new Set<string>()
  for (const pid of pids) {
    let info: string
    try {
      info = fs.readFileSync(`/proc/${pid}/mountinfo`, "utf8")
    } catch {
      // Gone, or not ours to read.
      continue
    }
    for (const line of info.split("\n")) {
      const fields = line.split(" ")
      if (fields[4] !== "/") continue
      const layer = /upperdir=[^,]*\/overlay\/([0-9a-f]{16,})\/diff/.exec(line)?.[1]
      if (layer !== undefined) layers.add(layer)
    }
  }
  return layers
}

/**
 * Kills a process and every descendant (SIGKILL), e.g. an image build's client and the RUN step
 * it runs, which the client's own death would leave running. Twice over, for what was forked
 * between the walk and the kill.
 */
export const killTree = (root: number): void => {
  for (let round = 0; round < 2; round++) {
    const found = procTree(root)
    for (const pid of found) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // Already gone.
      }
    }
  }
}

/** The argv of every process whose command line holds `needle` as one argument, by pid. */
const processesWithArg = (needle: string): Map<number, ReadonlyArray<string>> => {
  const out = new Map<number, ReadonlyArray<string>>()
  for (const pid of procPids()) {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
      if (argv.includes(needle) || argv.some((a) => a.startsWith(needle))) out.set(pid, argv)
    } catch {
      // Gone, or not ours to read.
      continue
    }
  }
  return out
}

/**
 * Runs the engine's client, its stdout and stderr kept together up to `maxBytes`, killed at
 * `timeoutMs` (or interrupted) with `stop` when given (a build: its RUN step and working container too).
 */
const cli = (
  binary: string,
  args: ReadonlyArray<string>,
  timeoutMs: number,
  maxBytes = 1024 * 1024,
  stop?: (pid: number) => void,
  env?: Readonly<Record<string, string>>
): Effect.Effect<CliResult, string> =>
  Effect.async<CliResult, string>((resume) => {
    const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"], ...(env !== undefined ? { env: { ...process.env, ...env } } : {}) })
    const chunks: Array<Buffer> = []
    let kept = 0
    let dropped = 0
    let timedOut = false
    const take = (b: Buffer) => {
      if (kept >= maxBytes) return void (dropped += b.length)
      const part = b.subarray(0, maxBytes - kept)
      chunks.push(part)
      kept += part.length
      dropped += b.length - part.length
    }
    child.stdout.on("data", take)
    child.stderr.on("data", take)
    const kill = () => (stop !== undefined && child.pid !== undefined ? stop(child.pid) : void child.kill("SIGKILL"))
    const timer = setTimeout(() => {
      timedOut = true
      kill()
    }, timeoutMs)
    child.on("error", (e) => {
      clearTimeout(timer)
      resume(Effect.fail(`${binary}: ${e.message}`))
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      const text = Buffer.concat(chunks).toString("utf8")
      resume(Effect.succeed({ code, timedOut, output: dropped > 0 ? `${text}\n[${dropped} bytes of output dropped]` : text }))
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      kill()
    })
  })

const tail = (text: string, lines = TAIL_LINES): string => text.trimEnd().split("\n").slice(-lines).join("\n")

/** Every file under a folder, as path and content, in a stable order (and `extra`): a build context's identity. */
export const folderDigest = (dir: string, extra = ""): string => {
  const hash = createHash("sha256").update(extra)
  const walk = (rel: string) => {
    const entries = fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const entry of entries) {
      const p = rel === "" ? entry.name : `${rel}/${entry.name}`
      if (entry.isDirectory()) walk(p)
      else if (entry.isFile()) {
        hash.update(`\0${p}\0`)
        hash.update(fs.readFileSync(path.join(dir, p)))
      }
    }
  }
  walk("")
  return hash.digest("hex").slice(0, 16)
}

/** The Dockerfile with every `FROM IMAGE` that names a substituted image rewritten, and what was. */
export const substitute = (dockerfile: string, substitutions: Substitutions): { readonly text: string; readonly applied: Record<string, string> } => {
  const applied: Record<string, string> = {}
  const text = dockerfile.replace(/^(\s*FROM\s+)(?:(--platform=\S+)\s+)?(\S+)/gim, (line, from: string, platform: string | undefined, image: string) => {
    const to = substitutions[image]
    if (to === undefined) return line
    applied[image] = to
    return `${from}${platform !== undefined ? `${platform} ` : ""}${to}`
  })
  return { text, applied }
}

/** Where a process's image builds keep their files. */
const buildDirOf = (pid: number): string => path.join(os.tmpdir(), `assay-builds-${pid}`)

/**
 * The builds' folder once its last build is done, so a process that builds and lives on leaves
 * none (its exit, or the next start's sweep, removes what a killed build left); a folder another
 * build still uses, or already gone, stays as it is.
 */
const removeIfEmpty = (dir: string): void => {
  try {
    fs.rmdirSync(dir)
  } catch (e) {
    const code = errnoOf(e)
    if (code !== "ENOTEMPTY" && code !== "EEXIST" && code !== "ENOENT") throw e
  }
}

/** Whether a process is alive (signal 0: no signal sent, only the check). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: alive, but another user's.
    return errnoOf(e) === "EPERM"
  }
}

export interface Options {
  /** The engine to use; the first of podman and docker found on PATH by default. */
  readonly engine?: EngineName
}

const onPath = (binary: string): boolean =>
  (process.env["PATH"] ?? "").split(path.delimiter).some((dir) => dir !== "" && fs.existsSync(path.join(dir, binary)))

/** The engine's client, checked once: `unavailable` names what is missing. */
export const make = (options: Options = {}): Effect.Effect<Engine, EngineError> =>
  Effect.gen(function*() {
    const name: EngineName | undefined = options.engine ?? (["podman", "docker"] as const).find(onPath)
    if (name === undefined || !onPath(name)) {
      return yield* new EngineError({
        reason: "unavailable",
        detail: `${options.engine ?? "podman or docker"} is not on PATH (Debian: apt-get install podman runc)`
      })
    }
    const global = name === "podman" ? ["--runtime", "runc", "--cgroup-manager=cgroupfs"] : []
    const run = (args: ReadonlyArray<string>, timeoutMs = ENGINE_TIMEOUT_MS, maxBytes?: number, stop?: (pid: number) => void, env?: Record<string, string>) =>
      cli(name, [...global, ...args], timeoutMs, maxBytes, stop, env)
    const version = yield* run(["version", "--format", "{{.Client.Version}}"], 30_000).pipe(
      Effect.mapError((detail) => new EngineError({ reason: "unavailable", detail }))
    )
    if (version.code !== 0) return yield* new EngineError({ reason: "unavailable", detail: `${name} version: ${tail(version.output, 3)}` })

    const pid = process.pid
    const runLabel = `${pid}-${randomBytes(4).toString("hex")}`
    // Containers this process started and has not removed: removed at its exit should nothing else have.
    const held = new Set<string>()
    // The builds' own folder (their Dockerfiles, and the builder's temporary files as its TMPDIR),
    // named by this process: removed at its exit, or by the next start's sweep after a SIGKILL.
    const buildDir = buildDirOf(pid)
    process.once("exit", () => {
      for (const container of held) spawnSync(name, [...global, "rm", "-f", "-t", "0", container], { stdio: "ignore" })
      fs.rmSync(buildDir, { recursive: true, force: true })
    })

    const failed = (reason: EngineError["reason"]) => (detail: string) => new EngineError({ reason, detail })

    /**
     * Ends an image build: its client and every process under it (the RUN step, which the client's
     * own death would leave running), then its working container, which podman keeps in storage
     * after a killed build. That container carries no label: it is the one whose layer the RUN
     * step runs in (matched through `podman mount`), so no other build's is touched; a build
     * stopped between RUN steps leaves it in storage (not running). docker's builder cleans up
     * after itself.
     */
    const stopBuild = (client: number): void => {
      const layers = rootLayersOf(procTree(client))
      const mounted = name === "podman" && layers.size > 0 ? spawnSync(name, [...global, "mount"], { encoding: "utf8", timeout: 30_000 }).stdout ?? "" : ""
      killTree(client)
      const working = mounted.split("\n").flatMap((line) => {
        const [id, mountpoint] = line.trim().split(/\s+/)
        const layer = /\/overlay\/([0-9a-f]{16,})\/merged/.exec(mountpoint ?? "")?.[1]
        return id !== undefined && layer !== undefined && layers.has(layer) ? [id] : []
      })
      if (working.length > 0) spawnSync(name, [...global, "rm", "-f", ...working], { stdio: "ignore", timeout: 60_000 })
    }

    // One build per image at a time in this process; a second Attempt of the task waits for it.
    const building = new Map<string, Effect.Effect<Built, EngineError>>()
    const build = (spec: BuildSpec): Effect.Effect<Built, EngineError> =>
      Effect.suspend(() => {
        const dockerfilePath = path.join(spec.context, "Dockerfile")
        let original: string
        try {
          original = fs.readFileSync(dockerfilePath, "utf8")
        } catch (e) {
          return Effect.fail(new EngineError({ reason: "build-failed", detail: `no Dockerfile in ${spec.context} (${String(e)})` }))
        }
        const { text, applied } = substitute(original, spec.substitutions)
        const image = `localhost/${spec.name.toLowerCase().replace(/[^a-z0-9._-]/g, "-")}:${folderDigest(spec.context, JSON.stringify(applied))}`
        const known = building.get(image)
        if (known !== undefined) return Effect.map(known, (b) => ({ ...b, fresh: false }))
        const once = Effect.gen(function*() {
          const exists = yield* run(["image", "exists", image]).pipe(Effect.mapError(failed("build-failed")))
          // docker has no `image exists`: `image inspect` answers the same by its exit code.
          const present = name === "podman" ? exists.code === 0 : (yield* run(["image", "inspect", image]).pipe(Effect.mapError(failed("build-failed")))).code === 0
          if (present) return { image, substituted: applied, fresh: false }
          const { dir, file } = yield* Effect.try({
            try: () => {
              fs.mkdirSync(buildDir, { recursive: true })
              const dir = fs.mkdtempSync(path.join(buildDir, "build-"))
              const file = path.join(dir, "Dockerfile")
              fs.writeFileSync(file, text)
              return { dir, file }
            },
            catch: (e) => new EngineError({ reason: "build-failed", detail: `writing the Dockerfile: ${String(e)}` })
          })
          const result = yield* run([
            "build",
            ...ULIMITS,
            // The image is tagged by its content and built once: no layer cache to keep, and a failed
            // build leaves no intermediate image or container behind.
            ...(name === "podman" ? ["--layers=false"] : []),
            "--force-rm",
            "--label",
            "assay=1",
            // Names this process in the client's command line: a build it left (SIGKILL) is found by it.
            "--label",
            `assay.pid=${pid}`,
            "-t",
            image,
            "-f",
            file,
            spec.context
          ], spec.timeoutSeconds * 1000, 4 * 1024 * 1024, stopBuild, { TMPDIR: dir }).pipe(
            Effect.ensuring(Effect.sync(() => {
              fs.rmSync(dir, { recursive: true, force: true })
              removeIfEmpty(buildDir)
            })),
            Effect.mapError(failed("build-failed"))
          )
          if (result.timedOut) {
            return yield* new EngineError({ reason: "build-failed", detail: `not built in ${spec.timeoutSeconds} s:\n${tail(result.output)}` })
          }
          if (result.code !== 0) return yield* new EngineError({ reason: "build-failed", detail: tail(result.output) })
          return { image, substituted: applied, fresh: true }
        })
        // Set before anything runs, so an Attempt of the same task started meanwhile waits on this build.
        const cached = Effect.runSync(Effect.cached(once))
        building.set(image, cached)
        return Effect.tapError(cached, () => Effect.sync(() => building.delete(image)))
      })

    const start = (spec: StartSpec): Effect.Effect<string, EngineError> =>
      Effect.gen(function*() {
        const container = `assay-${runLabel}-${randomBytes(4).toString("hex")}`
        held.add(container)
        const result = yield* run([
          "run",
          "-d",
          "--name",
          container,
          "--label",
          "assay=1",
          "--label",
          `assay.run=${runLabel}`,
          "--label",
          `assay.pid=${pid}`,
          ...ULIMITS,
          ...(spec.cpus !== null ? ["--cpus", String(spec.cpus)] : []),
          ...(spec.memoryMb !== null ? ["--memory", `${spec.memoryMb}m`] : []),
          ...(spec.network ? [] : ["--network", "none"]),
          ...(spec.mounts ?? []).flatMap((m) => ["-v", `${m.source}:${m.target ?? m.source}:${m.readOnly ? "ro" : "rw"}`]),
          "--entrypoint",
          "sleep",
          spec.image,
          "infinity"
        ]).pipe(Effect.mapError(failed("start-failed")))
        if (result.code !== 0) {
          yield* Effect.ignore(remove(container))
          return yield* new EngineError({ reason: "start-failed", detail: tail(result.output, 5) })
        }
        return container
      })

    const exec = (container: string, spec: ExecSpec): Effect.Effect<ExecResult, EngineError> =>
      Effect.gen(function*() {
        const seconds = Math.max(1, Math.round(spec.timeoutSeconds))
        const result = yield* run(
          ["exec", ...(spec.cwd !== undefined ? ["-w", spec.cwd] : []), container, "timeout", "-k", "5", String(seconds), "bash", "-c", spec.command],
          (seconds + 15) * 1000,
          spec.maxOutputBytes ?? 1024 * 1024
        ).pipe(Effect.mapError(failed("exec-failed")))
        // 124: coreutils timeout ended it; 137 after `-k`: it had to be killed.
        const timedOut = result.timedOut || result.code === 124
        return { exitCode: result.timedOut ? null : result.code, timedOut, output: result.output }
      })

    const copyIn = (container: string, from: string, to: string): Effect.Effect<void, EngineError> =>
      Effect.gen(function*() {
        const made = yield* run(["exec", container, "mkdir", "-p", to]).pipe(Effect.mapError(failed("copy-failed")))
        if (made.code !== 0) return yield* new EngineError({ reason: "copy-failed", detail: `mkdir ${to}: ${tail(made.output, 3)}` })
        const copied = yield* run(["cp", `${from}/.`, `${container}:${to}`]).pipe(Effect.mapError(failed("copy-failed")))
        if (copied.code !== 0) return yield* new EngineError({ reason: "copy-failed", detail: `${from} -> ${to}: ${tail(copied.output, 3)}` })
      })

    const remove = (container: string): Effect.Effect<void, EngineError> =>
      Effect.gen(function*() {
        const result = yield* run(["rm", "-f", "-t", "0", container]).pipe(Effect.mapError(failed("remove-failed")))
        if (result.code !== 0 && !/no such container/i.test(result.output)) {
          return yield* new EngineError({ reason: "remove-failed", detail: `${container}: ${tail(result.output, 3)}` })
        }
        held.delete(container)
      })

    const pidOf = (container: string): Effect.Effect<number, EngineError> =>
      Effect.gen(function*() {
        const result = yield* run(["inspect", "--format", "{{.State.Pid}}", container]).pipe(Effect.mapError(failed("exec-failed")))
        const found = Number(result.output.trim())
        if (result.code !== 0 || !Number.isInteger(found) || found <= 0) {
          return yield* new EngineError({ reason: "exec-failed", detail: `the pid of ${container}: ${tail(result.output, 3)}` })
        }
        return found
      })

    const execCommand: Engine["execCommand"] = (container, argv, options) => ({
      command: name,
      args: [
        ...global,
        "exec",
        ...(options.interactive === true ? ["-i"] : []),
        ...(options.envFile !== undefined ? ["--env-file", options.envFile] : []),
        ...(options.cwd !== undefined ? ["-w", options.cwd] : []),
        container,
        ...argv
      ]
    })

    const labelTemplate = name === "podman" ? `{{.ID}} {{index .Labels "assay.pid"}}` : `{{.ID}} {{.Label "assay.pid"}}`
    const sweep = Effect.gen(function*() {
      const listed = yield* run(["ps", "-a", "--filter", "label=assay.pid", "--format", labelTemplate]).pipe(Effect.mapError(failed("remove-failed")))
      if (listed.code !== 0) return yield* new EngineError({ reason: "remove-failed", detail: `listing assay's containers: ${tail(listed.output, 3)}` })
      const stale = listed.output.split("\n").flatMap((line) => {
        const [id, owner] = line.trim().split(/\s+/)
        const ownerPid = Number(owner)
        return id !== undefined && id !== "" && Number.isInteger(ownerPid) && ownerPid !== pid && !alive(ownerPid) ? [id] : []
      })
      yield* Effect.forEach(stale, remove, { discard: true })
      // Image builds of dead assay processes (SIGKILL leaves the client and its RUN step running).
      let builds = 0
      for (const [buildPid, argv] of processesWithArg("assay.pid=")) {
        const owner = Number(argv.find((a) => a.startsWith("assay.pid="))?.slice("assay.pid=".length))
        if (!argv.includes("build") || !Number.isInteger(owner) || owner === pid || alive(owner)) continue
        stopBuild(buildPid)
        builds++
      }
      // The build folders of dead assay processes.
      yield* Effect.try({
        try: () => {
          for (const entry of fs.readdirSync(os.tmpdir())) {
            const owner = /^assay-builds-(\d+)$/.exec(entry)?.[1]
            if (owner !== undefined && Number(owner) !== pid && !alive(Number(owner))) fs.rmSync(path.join(os.tmpdir(), entry), { recursive: true, force: true })
          }
        },
        catch: (e) => new EngineError({ reason: "remove-failed", detail: `the build folders of ended runs: ${String(e)}` })
      })
      return stale.length + builds
    })

    return { name, runLabel, build, start, exec, copyIn, remove, pid: pidOf, execCommand, sweep }
  })

/** The engine found (or named), with the containers of dead assay processes swept once at its start. */
export const layer = (options: Options = {}): Layer.Layer<Engine, EngineError> =>
  Layer.effect(Engine, Effect.tap(make(options), (engine) => engine.sweep))
