/**
 * The sandbox every untrusted process runs in: a candidate's commands, graders that run candidate
 * code, and (later) an agent CLI's own shell. It is bubblewrap (`bwrap`, Debian's `bubblewrap`),
 * the tool Flatpak and the agent CLIs themselves use on Linux, not checks of our own.
 *
 * What a process in it gets:
 * - its own PID namespace: bwrap is its PID 1, started from here with an EMPTY environment, so
 *   /proc/1/environ and /proc/$PPID/environ hold nothing of ours, and no process outside is visible;
 * - its own mount namespace: the system read-only (/usr and the /bin, /lib* links, the pieces of
 *   /etc that programs need), a fresh /proc, a minimal /dev, a private /tmp (tmpfs, bounded), and
 *   the `work` folder writable at its own path. Nothing else: the repository, the data folder, the
 *   assay home and the user's home are absent (and hidden by an empty tmpfs should one of them lie
 *   inside a system folder); extra folders only as the caller binds them (`readOnly`, `writable`);
 * - no network (`--unshare-net`: a loopback of its own) unless `network: "host"`;
 * - exactly the environment the caller gives (`env`), plus HOME (a folder in its /tmp unless given)
 *   and TMPDIR=/tmp;
 * - limits: per process, address space (memory) and file size; processes (RLIMIT_NPROC of the
 *   sandbox's user); as root, the command runs as a uid/gid of that sandbox's own (the kernel
 *   does not apply RLIMIT_NPROC to root, and it drops every privilege besides; see `newSandboxId`),
 *   named `sandbox` in its /etc/passwd and /etc/group, so sandboxes running at once do not share
 *   their process limit; otherwise in a user namespace of its own, as the caller's uid;
 * - a deadline: at `timeoutMs` bwrap and the namespace's PID 1 are killed, and with PID 1 the kernel
 *   kills every process of the namespace (`setsid`, `nohup`, double forks, `env -i` alike). When the
 *   command exits by itself the namespace ends with it too: nothing it started outlives it.
 *
 * API, for the harness bridge and the providers:
 *
 * ```ts
 * const sandbox = yield* Sandbox            // a Context.Reference: bwrap on PATH unless provided
 * const outcome = yield* sandbox.run({      // Effect<SandboxOutcome, SandboxError>
 *   command: "/bin/sh", args: ["-c", "node --test"],
 *   work: dir,                               // writable, at its own path; the cwd unless `cwd`
 *   env: { PATH: "/usr/bin:/bin", LANG: "C.UTF-8" },
 *   timeoutMs: 30_000,
 *   network: "host",                         // default "none"
 *   readOnly: [installFolder(cliBinary)],    // a CLI's install folder (or { source, target })
 *   writable: [stateDir],                    // a CLI's state folder
 *   limits: { processes: 512, memoryBytes: 4 * 2 ** 30 }
 * })
 * yield* sandbox.check                      // fails with `unavailable` (one line naming the package)
 * Sandbox.layer({ unsandboxed: true })      // the user accepted the risk (--unsandboxed)
 * Sandbox.layer({ bwrap: "/path/to/bwrap" })  // or ASSAY_BWRAP=/path/to/bwrap
 * ```
 *
 * Where bwrap is missing or cannot create namespaces, `run` and `check` fail with `unavailable`,
 * one line that names the package; `unsandboxed` runs the command as before (Process.ts: cleared
 * environment, own process group, swept at the deadline) and its outcome says `isolation: "none"`.
 */
import { spawn } from "node:child_process"
import { randomInt } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Context, Deferred, Effect, Layer, Option, Schema } from "effect"
import { dataRoot } from "../evaluation/DataRoot.ts"
import { errnoOf } from "../harness/Proc.ts"
import { keptOutput, runProcess } from "../harness/Process.ts"

export class SandboxError extends Schema.TaggedError<SandboxError>()("SandboxError", {
  reason: Schema.Literal("unavailable", "spawn-failed", "bind"),
  detail: Schema.String
}) {
  override get message() {
    return this.reason === "unavailable" ? this.detail : `sandbox ${this.reason}: ${this.detail}`
  }
}

/** A host path mounted in the sandbox, at `target` (default: the same path). */
export interface Bind {
  readonly source: string
  readonly target?: string
}

export interface Limits {
  /** RLIMIT_NPROC of the sandbox's user (see the module comment for root). */
  readonly processes: number
  /** RLIMIT_AS of each process. */
  readonly memoryBytes: number
  /** RLIMIT_FSIZE: the largest file a process may write. */
  readonly fileBytes: number
  /** Size of the private /tmp (a tmpfs: memory). */
  readonly tmpBytes: number
}

export const defaultLimits: Limits = {
  processes: 512,
  memoryBytes: 4 * 2 ** 30,
  fileBytes: 1 * 2 ** 30,
  tmpBytes: 256 * 2 ** 20
}

export interface SandboxSpec {
  /** An absolute path inside the sandbox, or a name looked up on `env.PATH`. */
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** The host folder the process may write, bound at its own path. */
  readonly work: string
  /** Default: `work`. */
  readonly cwd?: string
  /** The whole environment (nothing of the caller's passes), but HOME and TMPDIR when not given. */
  readonly env: Readonly<Record<string, string>>
  readonly timeoutMs: number
  /** `none` (default): a network namespace with only its own loopback. `host`: the host's network
   * (a harness CLI reaching assay's loopback model proxy), every other isolation kept. */
  readonly network?: "none" | "host"
  /**
   * Ports of the host's loopback the process must reach (a harness CLI's model proxy and MCP
   * server). With `network: "host"` they are there already; a sandbox with a network of its own
   * (a task's container) relays them, and only them.
   */
  readonly loopback?: ReadonlyArray<number>
  readonly readOnly?: ReadonlyArray<Bind | string>
  readonly writable?: ReadonlyArray<Bind | string>
  readonly limits?: Partial<Limits>
  /** Output kept per stream; the rest is dropped (`truncated`). Default 8 MiB. */
  readonly maxOutputBytes?: number
}

export interface SandboxOutcome {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly timedOut: boolean
  readonly stdout: string
  readonly stderr: string
  readonly truncated: boolean
  readonly wallMs: number
  /** `bwrap`, or `none` when the user accepted running unsandboxed. */
  readonly isolation: "bwrap" | "none"
  /** Processes of the sandbox still alive when we stopped waiting for them (0: all gone). */
  readonly remaining: number
}

/** A sandboxed process's command line, for a caller that starts, watches and ends it itself. */
export interface Prepared {
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** The environment to start `command` with: empty for bwrap (the spec's is set inside). */
  readonly env: Readonly<Record<string, string>>
}

export interface SandboxService {
  /** `container`: a task's own container (providers/harbor), for agent CLIs only. */
  readonly isolation: "bwrap" | "none" | "container"
  readonly run: (spec: SandboxSpec) => Effect.Effect<SandboxOutcome, SandboxError>
  /**
   * The command line of a process that runs beside the caller (a harness CLI serving an Attempt):
   * the caller spawns it (detached, with `env`), and ends it by ending the process (bwrap is PID 1
   * of the namespace, so every process in it goes too); `timeoutMs` and `maxOutputBytes` are the
   * caller's to keep. As root, the folders it may write become the sandbox user's, and its
   * /etc/passwd and /etc/group wait in a temp folder that the process removes as it starts.
   */
  readonly prepare: (spec: SandboxSpec) => Effect.Effect<Prepared, SandboxError>
  /** Succeeds when `run` can isolate (or the user accepted `unsandboxed`); else `unavailable`. */
  readonly check: Effect.Effect<void, SandboxError>
}

export interface SandboxOptions {
  /** The bwrap executable. Default: $ASSAY_BWRAP, else `bwrap` on PATH, else /usr/bin/bwrap. */
  readonly bwrap?: string
  /** Run without isolation (the user passed --unsandboxed). */
  readonly unsandboxed?: boolean
  /** Host paths that must be absent inside. Default: `hiddenPaths()`. */
  readonly hidden?: ReadonlyArray<string>
}

/** The one line a user reads when there is no sandbox. */
export const INSTALL_HINT = "apt-get install bubblewrap"

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")

/** What no sandboxed process may see: assay's own files, its data, the user's home and folder. */
export const hiddenPaths = (): ReadonlyArray<string> =>
  [...new Set([repositoryRoot, dataRoot(), os.homedir(), process.cwd()].map((p) => path.resolve(p)))]

const within = (inner: string, outer: string): boolean => inner === outer || outer === "/" || inner.startsWith(outer + path.sep)

/**
 * The folder a program is installed in, to bind read-only: `PREFIX` of `PREFIX/bin/EXE` after
 * symlinks (node under ~/.nvm, python under ~/.pyenv). Undefined under /usr, which is bound anyway.
 */
export const installFolder = (executable: string): Bind | undefined => {
  let real: string
  try {
    real = fs.realpathSync(executable)
  } catch (e) {
    // Not a path (a name on PATH): nothing to bind; the command fails inside if it is not there.
    if (errnoOf(e) === "ENOENT") return undefined
    throw e
  }
  if (within(real, "/usr")) return undefined
  const dir = path.dirname(real)
  return { source: path.basename(dir) === "bin" ? path.dirname(dir) : dir }
}


/** A bind with its target made explicit (a bare path, or a bind without one, shows at its source). */
export const bindOf = (b: Bind | string): Required<Bind> =>
  typeof b === "string" ? { source: b, target: b } : { source: b.source, target: b.target ?? b.source }

/** System pieces of /etc programs read (the loader, users, names, certificates, time zone). */
const ETC = [
  "alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "passwd", "group", "nsswitch.conf",
  "hosts", "host.conf", "gai.conf", "resolv.conf", "ssl", "ca-certificates", "ca-certificates.conf", "mime.types"
]

const isRoot = process.getuid?.() === 0

/**
 * As root, the ids a sandbox's command runs as (the kernel exempts root from RLIMIT_NPROC): one
 * uid and gid per sandbox, since RLIMIT_NPROC counts every process and thread of a uid across
 * the system, and under one shared uid an agent CLI's threads could keep a test command beside it
 * from forking (a score depending on what else ran). [0x70000000, 0x7ffe0000) is left unused by
 * systemd's allocation (systemd.io/UIDS-GIDS: its container ranges end at 0x6fffffff, its foreign
 * range starts at 0x7ffe0000), lies far above the users useradd makes and the subordinate ids it
 * hands out (from 100000, 65536 at a time), and below 2^31, for programs keeping a uid in an int.
 */
const SANDBOX_IDS = { first: 0x7000_0000, end: 0x7ffe_0000 }

/** Whether every id of the range exists in our user namespace (root of a container may map only 65536). */
const mapped = (file: string): boolean => {
  let text: string
  try {
    text = fs.readFileSync(file, "utf8")
  } catch (e) {
    // A kernel without user namespaces: every id is the host's.
    if (errnoOf(e) === "ENOENT") return true
    throw e
  }
  // Each line: first id inside, first id outside, count (a blank line: NaN, which covers nothing).
  return text.split("\n").some((line) => {
    const fields = line.trim().split(/\s+/).map(Number)
    const inside = fields[0] ?? NaN
    return inside <= SANDBOX_IDS.first && SANDBOX_IDS.end <= inside + (fields[2] ?? NaN)
  })
}

let nextId: number | "nobody" | undefined

/**
 * The uid (and gid) of a new sandbox: a random start per process, then the next id for each one,
 * so no two sandboxes of a process share an id and two processes' ids seldom come near. Where the
 * range is not mapped, 65534 (nobody) for every sandbox: their process limit is shared then.
 */
const newSandboxId = (): number => {
  if (nextId === undefined) {
    nextId = mapped("/proc/self/uid_map") && mapped("/proc/self/gid_map")
      ? SANDBOX_IDS.first + randomInt(SANDBOX_IDS.end - SANDBOX_IDS.first)
      : "nobody"
  }
  if (nextId === "nobody") return 65534
  const id = nextId
  nextId = id + 1 === SANDBOX_IDS.end ? SANDBOX_IDS.first : id + 1
  return id
}

/** HOME inside: the caller's, else a folder in the private /tmp. */
const homeOf = (spec: SandboxSpec): string => spec.env["HOME"] ?? "/tmp/home"

/**
 * The sandbox's /etc/passwd and /etc/group: the host's, with an entry `sandbox` for its id, so a
 * program asking for its user (git without a configured name, python's getpass, ssh) finds one.
 */
const userDatabase = (id: number, home: string): { readonly passwd: string; readonly group: string } => {
  const hostLines = (name: string): Array<string> => {
    let text: string
    try {
      text = fs.readFileSync(`/etc/${name}`, "utf8")
    } catch (e) {
      // None on the host (bwrap's --ro-bind-try would have skipped it): only ours.
      if (errnoOf(e) === "ENOENT") return []
      throw e
    }
    // The id is the third field of both; ours alone answers to the name and the id.
    return text.split("\n").filter((l) => l !== "" && l.split(":")[0] !== "sandbox" && l.split(":")[2] !== String(id))
  }
  return {
    passwd: [...hostLines("passwd"), `sandbox:x:${id}:${id}:assay sandbox:${home}:/bin/sh`, ""].join("\n"),
    group: [...hostLines("group"), `sandbox:x:${id}:`, ""].join("\n")
  }
}

/**
 * As root, bwrap is started by this shell: it opens the sandbox's /etc/passwd and /etc/group
 * (bwrap copies them in from descriptors 3 and 4), removes their folder, and becomes bwrap; so
 * nothing of them is left on the host once the sandbox starts.
 */
const OPEN_USERS_THEN_BWRAP = 'exec 3<"$1/passwd" 4<"$1/group" && /bin/rm -rf -- "$1" && shift && exec "$@"'

/** Arguments of bwrap mounting the system: /usr, the top-level links into it, /etc's pieces. */
const systemArgs = (ownUsers: boolean): Array<string> => {
  const args = ["--ro-bind", "/usr", "/usr"]
  for (const top of ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]) {
    const st = fs.lstatSync(top, { throwIfNoEntry: false })
    if (st?.isSymbolicLink()) args.push("--symlink", fs.readlinkSync(top), top)
    else if (st?.isDirectory()) args.push("--ro-bind", top, top)
  }
  args.push("--perms", "0755", "--dir", "/etc")
  for (const name of ETC) {
    if (ownUsers && (name === "passwd" || name === "group")) continue
    args.push("--ro-bind-try", `/etc/${name}`, `/etc/${name}`)
  }
  if (ownUsers) args.push("--perms", "0644", "--ro-bind-data", "3", "/etc/passwd", "--perms", "0644", "--ro-bind-data", "4", "/etc/group")
  return args
}

const SYSTEM_ROOTS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"]

/** Gives the folder (and what is in it) to the sandbox's user, so it can write there as root. */
const chownTree = (root: string, id: number): void => {
  const walk = (p: string) => {
    const st = fs.lstatSync(p)
    fs.lchownSync(p, id, id)
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name))
  }
  walk(root)
}

/** A bind that would put a hidden path in the sandbox (the home, the repository, ...), refused. */
const exposing = (spec: SandboxSpec, hidden: ReadonlyArray<string>): SandboxError | undefined => {
  for (const b of [spec.work, ...(spec.readOnly ?? []), ...(spec.writable ?? [])].map(bindOf)) {
    const source = path.resolve(b.source)
    const exposed = hidden.find((h) => within(h, source))
    if (exposed !== undefined) return new SandboxError({ reason: "bind", detail: `binding ${b.source} would expose ${exposed}` })
  }
  return undefined
}

/**
 * bwrap's arguments for a spec (its binds checked by `exposing` first). With `id` (as root): the
 * command runs as that uid/gid, and /etc/passwd and /etc/group are read from descriptors 3 and 4.
 */
export const bwrapArgs = (spec: SandboxSpec, hidden: ReadonlyArray<string>, id?: number): Array<string> => {
  const limits = { ...defaultLimits, ...spec.limits }
  const readOnly = (spec.readOnly ?? []).map(bindOf)
  const writable = [{ source: spec.work, target: spec.work }, ...(spec.writable ?? []).map(bindOf)]
  const args = [
    "--die-with-parent",
    "--new-session",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(spec.network === "host" ? [] : ["--unshare-net"]),
    ...(id !== undefined
      ? ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
      : ["--unshare-user", "--disable-userns"]),
    ...systemArgs(id !== undefined),
    "--proc", "/proc",
    "--dev", "/dev",
    "--perms", "1777", "--size", String(limits.tmpBytes), "--tmpfs", "/tmp"
  ]
  // A hidden folder inside a system folder (a checkout under /usr/src): covered by an empty tmpfs.
  for (const h of hidden) if (SYSTEM_ROOTS.some((r) => within(h, r) && h !== r)) args.push("--tmpfs", h, "--remount-ro", h)
  // The folders leading to a bind, made traversable (bwrap makes them 0700, root's).
  const made = new Set<string>()
  for (const b of [...readOnly, ...writable]) {
    for (let dir = path.dirname(b.target); dir !== "/" && !made.has(dir); dir = path.dirname(dir)) {
      // Not into what is mounted already (the system, /proc, /dev), nor /tmp itself (it stays 1777).
      if (SYSTEM_ROOTS.some((r) => within(dir, r)) || within(dir, "/proc") || within(dir, "/dev") || dir === "/tmp") break
      made.add(dir)
    }
  }
  for (const dir of [...made].sort()) args.push("--perms", "0755", "--dir", dir)
  for (const b of readOnly) args.push("--ro-bind", b.source, b.target)
  for (const b of writable) args.push("--bind", b.source, b.target)
  const env: Record<string, string> = { ...spec.env, HOME: homeOf(spec), TMPDIR: "/tmp" }
  // Made by bwrap (root's, as root): open to the sandbox's user, alone in its private /tmp.
  if (env["HOME"] === "/tmp/home") args.push("--perms", "0777", "--dir", "/tmp/home")
  args.push("--chdir", spec.cwd ?? spec.work, "--clearenv")
  for (const [k, v] of Object.entries(env)) args.push("--setenv", k, v)
  if (id !== undefined) {
    // Without --no-new-privs a setuid program inside could take privileges back.
    args.push(
      "/usr/bin/setpriv", `--reuid=${id}`, `--regid=${id}`, "--clear-groups",
      "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"
    )
  }
  args.push(
    "/usr/bin/prlimit",
    `--nproc=${limits.processes}`,
    `--as=${limits.memoryBytes}`,
    `--fsize=${limits.fileBytes}`,
    "--core=0",
    "--",
    spec.command,
    ...spec.args
  )
  return args
}

const wallSleep = (ms: number): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const t = setTimeout(() => resume(Effect.void), ms)
    return Effect.sync(() => clearTimeout(t))
  })

/** After the kill, how long we wait for the namespace's processes to be gone. */
const SWEEP_LIMIT_MS = 5_000
const CLOSE_GRACE_MS = 2_000

/** Live (not zombie) processes in a PID namespace (as /proc/PID/ns/pid names it). */
const membersOf = (want: string): Array<number> => {
  const found: Array<number> = []
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (fs.readlinkSync(`/proc/${name}/ns/pid`) !== want) continue
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8")
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
      if (state !== "Z" && state !== "X") found.push(Number(name))
    } catch (e) {
      // Gone since the listing, or not ours to see (a container's init): not in the namespace.
      const code = errnoOf(e)
      if (code === "ENOENT" || code === "ESRCH" || code === "EACCES" || code === "EPERM") continue
      throw e
    }
  }
  return found
}

const kill = (pid: number): void => {
  try {
    process.kill(pid, "SIGKILL")
  } catch (e) {
    // Already gone.
    if (errnoOf(e) !== "ESRCH") throw e
  }
}

interface Running {
  readonly pid: number
  readonly exited: Deferred.Deferred<{ readonly code: number | null; readonly signal: string | null }>
  readonly closed: Deferred.Deferred<void>
  readonly output: () => { stdout: string; stderr: string; truncated: boolean }
  readonly closePipes: () => void
}

/** The PID namespace of bwrap's child (the namespace's PID 1), while bwrap lives. */
const namespaceOf = (bwrap: number): string | undefined => {
  const own = fs.readlinkSync("/proc/self/ns/pid")
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8")
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) !== bwrap) continue
      const ns = fs.readlinkSync(`/proc/${name}/ns/pid`)
      if (ns !== own) return ns
    } catch (e) {
      // Gone since the listing, or not ours to see: not bwrap's child.
      const code = errnoOf(e)
      if (code === "ENOENT" || code === "ESRCH" || code === "EACCES" || code === "EPERM") continue
      throw e
    }
  }
  return undefined
}

/**
 * Kills the namespace and waits until none of its processes is left; answers how many are. Once
 * bwrap has exited by itself there is nothing to do: it exits after the namespace's PID 1, and the
 * kernel ends every other process of the namespace before PID 1 is gone.
 */
const end = (r: Running): Effect.Effect<number> =>
  Effect.gen(function*() {
    if (yield* Deferred.isDone(r.exited)) return 0
    const namespace = namespaceOf(r.pid)
    // bwrap's own group (it started detached); with it gone, --die-with-parent kills PID 1.
    try {
      process.kill(-r.pid, "SIGKILL")
    } catch (e) {
      if (errnoOf(e) !== "ESRCH") throw e
    }
    if (namespace === undefined) return 0 // bwrap had not made the namespace yet
    const deadline = Date.now() + SWEEP_LIMIT_MS
    for (;;) {
      // PID 1 among them: its death makes the kernel kill the rest.
      const left = membersOf(namespace)
      if (left.length === 0 || Date.now() > deadline) return left.length
      for (const pid of left) kill(pid)
      yield* wallSleep(20)
    }
  })

const start = (command: string, args: ReadonlyArray<string>, maxOutput: number): Effect.Effect<Running, SandboxError> =>
  Effect.gen(function*() {
    const failed = (detail: string) => new SandboxError({ reason: "spawn-failed", detail })
    const exited = yield* Deferred.make<{ code: number | null; signal: string | null }>()
    const closed = yield* Deferred.make<void>()
    const child = yield* Effect.try({
      // An empty environment: bwrap is PID 1 inside, and its /proc/1/environ is readable there.
      try: () => spawn(command, [...args], { env: {}, cwd: "/", detached: true, stdio: ["ignore", "pipe", "pipe"] }),
      catch: (e) => failed(String(e))
    })
    const output = keptOutput(child, maxOutput)
    child.on("exit", (code, sig) => Deferred.unsafeDone(exited, Effect.succeed({ code, signal: sig })))
    child.on("close", () => Deferred.unsafeDone(closed, Effect.void))
    const pid = yield* Effect.async<number, SandboxError>((resume) => {
      child.once("spawn", () => (child.pid === undefined ? resume(Effect.fail(failed("no pid"))) : resume(Effect.succeed(child.pid))))
      child.once("error", (e) => resume(Effect.fail(failed(e.message))))
    })
    return {
      pid,
      exited,
      closed,
      output,
      closePipes: () => {
        child.stdout.destroy()
        child.stderr.destroy()
      }
    }
  })

interface Launch extends Prepared {
  /** As root, the folder of the sandbox's /etc/passwd and /etc/group, until its process starts. */
  readonly users: string | undefined
}

/**
 * The command line of a sandbox (its binds checked by `exposing` first). As root: a uid/gid of its
 * own, the folders it may write given to it, its user database, and the shell that hands that to
 * bwrap (`OPEN_USERS_THEN_BWRAP`).
 */
const launch = (bwrap: string, spec: SandboxSpec, hidden: ReadonlyArray<string>): Launch => {
  if (!isRoot) return { command: bwrap, args: bwrapArgs(spec, hidden), env: {}, users: undefined }
  const id = newSandboxId()
  for (const dir of [spec.work, ...(spec.writable ?? []).map((b) => bindOf(b).source)]) chownTree(dir, id)
  const users = fs.mkdtempSync(path.join(os.tmpdir(), "assay-sandbox-users-"))
  try {
    const db = userDatabase(id, homeOf(spec))
    fs.writeFileSync(path.join(users, "passwd"), db.passwd)
    fs.writeFileSync(path.join(users, "group"), db.group)
    return { command: "/bin/sh", args: ["-c", OPEN_USERS_THEN_BWRAP, "sh", users, bwrap, ...bwrapArgs(spec, hidden, id)], env: {}, users }
  } catch (e) {
    fs.rmSync(users, { recursive: true, force: true })
    throw e
  }
}

const runInBwrap = (bwrap: string, hidden: ReadonlyArray<string>, spec: SandboxSpec): Effect.Effect<SandboxOutcome, SandboxError> =>
  Effect.scoped(
    Effect.gen(function*() {
      const refused = exposing(spec, hidden)
      if (refused !== undefined) return yield* refused
      const launched = yield* Effect.acquireRelease(
        Effect.try({ try: () => launch(bwrap, spec, hidden), catch: (e) => new SandboxError({ reason: "bind", detail: String(e) }) }),
        // Gone already once the process started; not when it could not.
        (l) =>
          Effect.sync(() => {
            if (l.users !== undefined) fs.rmSync(l.users, { recursive: true, force: true })
          })
      )
      const started = Date.now()
      let ended: number | undefined
      // Interrupted (a cancelled run, a budget exceeded): the namespace ends with the scope.
      const running = yield* Effect.acquireRelease(
        start(launched.command, launched.args, spec.maxOutputBytes ?? 8 * 1024 * 1024),
        (r) => (ended === undefined ? end(r) : Effect.void)
      )
      const first = yield* Effect.raceFirst(
        Deferred.await(running.exited).pipe(Effect.map(Option.some)),
        wallSleep(spec.timeoutMs).pipe(Effect.as(Option.none()))
      )
      const timedOut = Option.isNone(first)
      // At the deadline the namespace goes; after an exit, its PID 1 has ended it already.
      ended = yield* end(running)
      const exit = Option.isSome(first)
        ? first.value
        : yield* Deferred.await(running.exited).pipe(Effect.raceFirst(wallSleep(CLOSE_GRACE_MS).pipe(Effect.as({ code: null, signal: null }))))
      yield* Deferred.await(running.closed).pipe(Effect.raceFirst(wallSleep(CLOSE_GRACE_MS)))
      running.closePipes()
      return {
        exitCode: timedOut ? null : exit.code,
        signal: timedOut ? "SIGKILL" : exit.signal,
        timedOut,
        ...running.output(),
        wallMs: Date.now() - started,
        isolation: "bwrap" as const,
        remaining: ended
      }
    })
  )

/** The first `bwrap` on PATH, else Debian's. */
const bwrapOnPath = (): string => {
  for (const dir of [...(process.env["PATH"] ?? "").split(path.delimiter), "/usr/bin"]) {
    if (dir === "") continue
    const candidate = path.join(dir, "bwrap")
    try {
      fs.accessSync(candidate, fs.constants.X_OK)
      return candidate
    } catch {
      // Not in this folder: the next one.
    }
  }
  return "/usr/bin/bwrap"
}

const probes = new Map<string, Promise<SandboxError | undefined>>()

/** Whether bwrap runs here with the namespaces we ask for: tried once per executable, with `true`. */
const probe = (bwrap: string, hidden: ReadonlyArray<string>): Effect.Effect<void, SandboxError> =>
  Effect.flatMap(
    Effect.promise(() => {
      let p = probes.get(bwrap)
      if (p === undefined) {
        p = Effect.runPromise(
          Effect.gen(function*() {
            if (!fs.existsSync(bwrap)) {
              return new SandboxError({
                reason: "unavailable",
                detail: `no sandbox for untrusted code: bubblewrap is not installed (no ${bwrap}); ${INSTALL_HINT}, or pass --unsandboxed to accept the risk`
              })
            }
            const dir = fs.mkdtempSync(path.join(os.tmpdir(), "assay-sandbox-probe-"))
            const o = yield* runInBwrap(bwrap, hidden, { command: "/bin/true", args: [], work: dir, env: {}, timeoutMs: 30_000 }).pipe(
              Effect.either,
              Effect.ensuring(Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
            )
            if (o._tag === "Right" && o.right.exitCode === 0) return undefined
            const why = o._tag === "Left" ? o.left.detail : (o.right.stderr.trim().split("\n")[0] ?? `exit ${o.right.exitCode}`)
            return new SandboxError({
              reason: "unavailable",
              detail: `no sandbox for untrusted code: ${bwrap} cannot create its namespaces here (${why}); ${INSTALL_HINT} and allow user namespaces, or pass --unsandboxed to accept the risk`
            })
          })
        )
        probes.set(bwrap, p)
      }
      return p
    }),
    (e) => (e === undefined ? Effect.void : Effect.fail(e))
  )

/** Runs without isolation: the user's choice (--unsandboxed). HOME and TMPDIR are fresh folders. */
const runUnsandboxed = (spec: SandboxSpec): Effect.Effect<SandboxOutcome, SandboxError> =>
  Effect.scoped(
    Effect.gen(function*() {
      const home = yield* Effect.acquireRelease(
        Effect.try({
          try: () => fs.mkdtempSync(path.join(os.tmpdir(), "assay-unsandboxed-home-")),
          catch: (e) => new SandboxError({ reason: "spawn-failed", detail: `temp folder: ${String(e)}` })
        }),
        (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
      )
      const o = yield* runProcess({
        command: spec.command,
        args: spec.args,
        cwd: spec.cwd ?? spec.work,
        env: { HOME: home, ...spec.env },
        timeoutMs: spec.timeoutMs,
        ...(spec.maxOutputBytes === undefined ? {} : { maxOutputBytes: spec.maxOutputBytes })
      }).pipe(Effect.mapError((e) => new SandboxError({ reason: "spawn-failed", detail: e.message })))
      return {
        exitCode: o.exitCode,
        signal: o.signal,
        timedOut: o.timedOut,
        stdout: o.stdout,
        stderr: o.stderr,
        truncated: o.truncated,
        wallMs: o.wallMs,
        isolation: "none" as const,
        remaining: o.termination.remaining
      }
    })
  )

export const make = (options: SandboxOptions = {}): SandboxService => {
  if (options.unsandboxed === true) {
    return {
      isolation: "none",
      run: runUnsandboxed,
      check: Effect.void,
      prepare: (spec) => Effect.succeed({ command: spec.command, args: spec.args, env: spec.env })
    }
  }
  const bwrap = options.bwrap ?? (process.env["ASSAY_BWRAP"] || bwrapOnPath())
  const hidden = options.hidden ?? hiddenPaths()
  const check = probe(bwrap, hidden)
  return {
    isolation: "bwrap",
    check,
    run: (spec) => Effect.zipRight(check, runInBwrap(bwrap, hidden, spec)),
    prepare: (spec) =>
      Effect.zipRight(
        check,
        Effect.suspend(() => {
          const refused = exposing(spec, hidden)
          if (refused !== undefined) return Effect.fail(refused)
          return Effect.try({
            try: (): Prepared => {
              const { command, args, env } = launch(bwrap, spec, hidden)
              return { command, args, env }
            },
            catch: (e) => new SandboxError({ reason: "bind", detail: String(e) })
          })
        })
      )
  }
}

/** The sandbox of untrusted processes: bwrap found on PATH unless a layer provides another. */
export class Sandbox extends Context.Reference<Sandbox>()("assay/Sandbox", {
  defaultValue: (): SandboxService => make()
}) {}

export const layer = (options: SandboxOptions = {}) => Layer.succeed(Sandbox, make(options))

/** Runs a spec in the sandbox in context. */
export const run = (spec: SandboxSpec): Effect.Effect<SandboxOutcome, SandboxError> => Effect.flatMap(Sandbox, (s) => s.run(spec))
