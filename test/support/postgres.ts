/**
 * A real Postgres server of the test's own: Debian's `postgresql` binaries (tools/postgres/ensure.mjs
 * installs them before the tests), `initdb` into a temp folder, a free loopback port, trust auth.
 * Run as the `postgres` user when the tests run as root (Postgres refuses to run as root). Stopped
 * (fast shutdown) and its folder removed when the scope closes.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Scope } from "effect"

/** The newest Postgres in /usr/lib/postgresql (Debian's layout), or $PG_BIN. */
export const binDir = (): string => {
  if (process.env.PG_BIN !== undefined) return process.env.PG_BIN
  const root = "/usr/lib/postgresql"
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a)) : []
  if (versions[0] === undefined) throw new Error("no Postgres in /usr/lib/postgresql: run node tools/postgres/ensure.mjs (apt-get install postgresql)")
  return join(root, versions[0], "bin")
}

const freePort = (): Promise<number> =>
  new Promise((ok, fail) => {
    const server = createServer()
    server.once("error", fail)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => ok(port))
    })
  })

/** Who the server runs as: the postgres user when we are root, else ourselves. */
const runAs = (): { uid: number; gid: number } | null => {
  if (process.getuid?.() !== 0) return null
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim())
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim())
  return { uid, gid }
}

export interface PgServer {
  /** The server's URL with the database `postgres`. */
  readonly url: string
  readonly port: number
  /** The URL of a new, empty database on this server. */
  readonly database: (name: string) => string
  readonly pid: number
}

const user = "assay"

/** Starts a server for the scope; its data folder is removed after. */
export const start: Effect.Effect<PgServer, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(async () => {
    const bin = binDir()
    const owner = runAs()
    // Not under the run's TMPDIR: that folder is root's alone (0700) and the server runs as
    // postgres. Removed when the scope closes.
    const dir = mkdtempSync(join(owner === null ? tmpdir() : "/tmp", "assay-pg-"))
    const data = join(dir, "data")
    if (owner !== null) chownSync(dir, owner.uid, owner.gid)
    const ids = owner === null ? {} : owner
    const init = spawnSync(join(bin, "initdb"), ["-D", data, "-U", user, "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"], {
      ...ids,
      encoding: "utf8"
    })
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`)
    const port = await freePort()
    const child = spawn(
      join(bin, "postgres"),
      ["-D", data, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
        "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=300", "-c", "shared_buffers=32MB"],
      { ...ids, stdio: ["ignore", "ignore", "pipe"] }
    )
    let log = ""
    child.stderr.on("data", (b: Buffer) => (log = (log + b.toString()).slice(-4000)))
    const deadline = Date.now() + 20_000
    for (;;) {
      const ready = spawnSync(join(bin, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-U", user, "-d", "postgres"])
      if (ready.status === 0) break
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`postgres did not start: ${log}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    let n = 0
    const base = `postgres://${user}@127.0.0.1:${port}`
    const server: PgServer = {
      url: `${base}/postgres`,
      port,
      pid: child.pid!,
      database: (name) => {
        const db = `${name.replace(/[^a-z0-9_]/gi, "_").toLowerCase()}_${++n}`
        const made = spawnSync(join(bin, "createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", user, db], { encoding: "utf8" })
        if (made.status !== 0) throw new Error(`createdb ${db} failed: ${made.stderr}`)
        return `${base}/${db}`
      }
    }
    return { server, child, dir }
  }),
  ({ child, dir }) =>
    Effect.promise(async () => {
      if (child.exitCode === null) {
        const exited = new Promise<void>((ok) => child.once("exit", () => ok()))
        child.kill("SIGINT") // fast shutdown: ends the sessions, no checkpoint wait on our data
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))])
        if (child.exitCode === null) child.kill("SIGKILL")
      }
      rmSync(dir, { recursive: true, force: true })
    })
).pipe(Effect.map(({ server }) => server))
