/**
 * The escapes of issue 39 replayed as commands through the sandbox: none of them may work. Each
 * command runs through `Sandbox.run`, the path the coding-repair commands, its hidden-test grader
 * and the harness graders take.
 */
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { randomBytes } from "node:crypto"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { dataRoot } from "../../src/evaluation/DataRoot.ts"
import * as Sandbox from "../../src/sandbox/Sandbox.ts"
import { tempDir } from "../support/tempDirs.ts"

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")
const solution = path.join(repo, "providers/coding-repair/repos/js-slugify/solution/src/slugify.js")

const sh = (command: string, options: Partial<Sandbox.SandboxSpec> = {}) =>
  Effect.gen(function*() {
    const work = options.work ?? tempDir("assay-sandbox-work-")
    return yield* Sandbox.run({ command: "/bin/sh", args: ["-c", command], work, env: { PATH: "/usr/bin:/bin" }, timeoutMs: 30_000, ...options })
  })

/** Forks until it may not, and says how far it got. */
const forks = [
  "import os, time",
  "n = 0",
  "try:",
  "    while n < 300:",
  "        if os.fork() == 0:",
  "            time.sleep(60)",
  "            os._exit(0)",
  "        n += 1",
  "    print('forked', n)",
  "except OSError:",
  "    print('stopped at', n)"
].join("\n")

/** Live processes whose command line holds the marker, as `ps` would show them. */
const processesWith = (marker: string): ReadonlyArray<string> =>
  fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n)).flatMap((n) => {
    try {
      const stat = fs.readFileSync(`/proc/${n}/stat`, "utf8")
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
      const cmdline = fs.readFileSync(`/proc/${n}/cmdline`, "latin1").replaceAll("\0", " ")
      return cmdline.includes(marker) && state !== "Z" ? [`${n}: ${cmdline}`] : []
    } catch {
      // Gone since the listing: not alive.
      return []
    }
  })

describe("a sandboxed command", () => {
  it.live("cannot read the parent's environment or any key: /proc/1/environ, /proc/$PPID/environ, env", () =>
    Effect.gen(function*() {
      const key = `sk-assay-fake-${randomBytes(8).toString("hex")}`
      const before = process.env["OPENAI_API_KEY"]
      process.env["OPENAI_API_KEY"] = key
      const o = yield* sh(
        "cat /proc/1/environ; cat /proc/$PPID/environ; env; for f in /proc/[0-9]*/environ; do cat $f; done; cat /proc/1/cmdline; ps -ef; echo done"
      ).pipe(Effect.ensuring(Effect.sync(() => {
        if (before === undefined) delete process.env["OPENAI_API_KEY"]
        else process.env["OPENAI_API_KEY"] = before
      })))
      expect(o.stdout).toContain("done")
      expect(o.isolation).toBe("bwrap")
      expect(`${o.stdout}\n${o.stderr}`).not.toContain(key)
      expect(`${o.stdout}\n${o.stderr}`).not.toContain("OPENAI_API_KEY")
      // What `env` shows is what the caller gave, and the sandbox's HOME and TMPDIR.
      const env = o.stdout.split("\n").filter((l) => /^[A-Z_]+=/.test(l)).map((l) => l.split("=")[0]).sort()
      expect(new Set(env)).toEqual(new Set(["HOME", "PATH", "PWD", "TMPDIR"]))
    }))

  it.live("cannot read the repository, the gold solution, the data folder or the user's home", () =>
    Effect.gen(function*() {
      const gold = fs.readFileSync(solution, "utf8")
      const o = yield* sh(`cat ${solution}; ls ${repo}; ls ${dataRoot()}; ls ${os.homedir()}; cat ${path.join(repo, "package.json")}; echo done`)
      expect(o.stdout.trim()).toBe("done")
      expect(o.stdout).not.toContain(gold.slice(0, 40))
      expect(o.stderr).toContain("No such file or directory")
    }))

  it.live("writes only its work folder: elsewhere is read-only or its own, gone afterwards", () =>
    Effect.gen(function*() {
      const work = tempDir("assay-sandbox-work-")
      const marker = `assay-escape-${randomBytes(6).toString("hex")}`
      const hostTmp = os.tmpdir()
      const o = yield* sh(
        [
          `echo pwned > /tmp/${marker} && echo wrote-tmp`,
          `echo pwned > ${hostTmp}/${marker}`,
          `echo pwned > /usr/${marker} || echo usr-refused`,
          `echo pwned > ${path.join(repo, marker)} || echo repo-refused`,
          `echo kept > ${work}/kept.txt`
        ].join("; "),
        { work }
      )
      expect(o.stdout).toContain("wrote-tmp")
      expect(o.stdout).toContain("usr-refused")
      expect(o.stdout).toContain("repo-refused")
      expect(fs.existsSync(path.join("/tmp", marker))).toBe(false)
      expect(fs.existsSync(path.join(hostTmp, marker))).toBe(false)
      expect(fs.existsSync(path.join("/usr", marker))).toBe(false)
      expect(fs.existsSync(path.join(repo, marker))).toBe(false)
      expect(fs.readFileSync(path.join(work, "kept.txt"), "utf8")).toBe("kept\n")
    }))

  it.live("cannot reach the network, not even the host's loopback; network: host can", () =>
    Effect.gen(function*() {
      const server = net.createServer((socket) => socket.end("hello from the host\n"))
      const port = yield* Effect.async<number>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as net.AddressInfo).port)))
      })
      const connect = `python3 -c "import socket; s = socket.create_connection(('127.0.0.1', ${port}), 5); print(s.recv(100).decode().strip())"`
      const cut = yield* sh(`${connect}; python3 -c "import socket; socket.create_connection(('1.1.1.1', 80), 5)"`).pipe(
        Effect.zip(sh(connect, { network: "host" })),
        Effect.ensuring(Effect.sync(() => server.close()))
      )
      const [none, host] = cut
      expect(none.stdout).not.toContain("hello from the host")
      expect(none.stderr).toContain("Connection refused")
      expect(none.stderr).toMatch(/Network is unreachable|unreachable/)
      expect(host.stdout).toContain("hello from the host")
    }))

  it.live("leaves no process after its deadline: setsid, nohup, double fork, env -i setsid", () =>
    Effect.gen(function*() {
      // A unique sleep length marks this test's processes in /proc/*/cmdline.
      const marker = `315.${randomBytes(4).readUInt32BE(0)}`
      const o = yield* sh(
        [
          `(env -i setsid sleep ${marker} &)`,
          `setsid sleep ${marker} &`,
          `nohup sleep ${marker} >/dev/null 2>&1 &`,
          `sh -c 'sh -c "sleep ${marker} &" &'`,
          "echo started",
          `sleep ${marker}`
        ].join("\n"),
        // Room for the shell to start every one of them on a loaded machine before the deadline.
        { timeoutMs: 5_000 }
      )
      expect(o.timedOut).toBe(true)
      expect(o.stdout).toContain("started")
      expect(o.remaining).toBe(0)
      expect(processesWith(`sleep ${marker}`)).toEqual([])
    }))

  it.live("leaves no process when it exits by itself either", () =>
    Effect.gen(function*() {
      const marker = `316.${randomBytes(4).readUInt32BE(0)}`
      const o = yield* sh(`(env -i setsid sleep ${marker} &); nohup sleep ${marker} >/dev/null 2>&1 & echo started`)
      expect(o).toMatchObject({ exitCode: 0, timedOut: false, stdout: "started\n", remaining: 0 })
      expect(processesWith(`sleep ${marker}`)).toEqual([])
    }))

  it.live("is held to its limits on processes and memory", () =>
    Effect.gen(function*() {
      const work = tempDir("assay-sandbox-work-")
      fs.writeFileSync(path.join(work, "forks.py"), forks)
      const p = yield* sh("python3 forks.py", { work, limits: { processes: 30 } })
      expect(p.stdout).toMatch(/^stopped at \d+/)
      expect(Number(/stopped at (\d+)/.exec(p.stdout)?.[1])).toBeLessThan(30)
      const m = yield* sh(`python3 -c "b = bytearray(512 * 2**20); print('allocated')"`, { limits: { memoryBytes: 256 * 2 ** 20 } })
      expect(m.stdout).not.toContain("allocated")
      expect(m.stderr).toContain("MemoryError")
    }))

  it.effect("refuses a bind that would expose the home or the repository", () =>
    Effect.gen(function*() {
      const e = yield* Effect.flip(sh("true", { readOnly: [os.homedir()] }))
      expect(e).toMatchObject({ _tag: "SandboxError", reason: "bind" })
      const r = yield* Effect.flip(sh("true", { writable: [path.dirname(repo)] }))
      expect(r).toMatchObject({ _tag: "SandboxError", reason: "bind" })
    }))
})

describe("sandboxes running at once", () => {
  const root = process.getuid?.() === 0

  // As root each has a uid of its own; otherwise each is the caller's uid, in a namespace of its own.
  it.live.runIf(root)("do not share a process limit: one holding 40 processes leaves another with a limit of 30 its own", () =>
    Effect.gen(function*() {
      // A unique sleep length marks the holder's processes in /proc/*/cmdline.
      const marker = `317.${randomBytes(4).readUInt32BE(0)}`
      const holderWork = tempDir("assay-sandbox-work-")
      const ready = path.join(holderWork, "ready")
      const holder = yield* Effect.fork(sh(
        `i=0; while [ $i -lt 40 ]; do sleep ${marker} & i=$((i + 1)); done; echo 40 > ready; wait`,
        { work: holderWork, limits: { processes: 100 }, timeoutMs: 120_000 }
      ))
      // Its 40 processes are running once it says so; should it end first, it never held them.
      const held = yield* Effect.raceFirst(
        Effect.gen(function*() {
          while (!fs.existsSync(ready) || fs.readFileSync(ready, "utf8") !== "40\n") yield* Effect.sleep("20 millis")
          return true
        }),
        Fiber.join(holder).pipe(Effect.as(false))
      )
      expect(held).toBe(true)
      const work = tempDir("assay-sandbox-work-")
      fs.writeFileSync(path.join(work, "forks.py"), forks)
      const p = yield* sh("python3 forks.py", { work, limits: { processes: 30 } }).pipe(
        Effect.ensuring(Fiber.interrupt(holder))
      )
      // Under one uid shared with the holder, it could not have started its shell's python at all.
      expect(p.stdout).toMatch(/^stopped at \d+/)
      const n = Number(/stopped at (\d+)/.exec(p.stdout)?.[1])
      expect(n).toBeGreaterThanOrEqual(25)
      expect(n).toBeLessThan(30)
      expect(processesWith(`sleep ${marker}`)).toEqual([])
    }))

  it.live("each runs as a user of its own, whom it can name (id, python's pwd, getpass)", () =>
    Effect.gen(function*() {
      const who = `id -u; id -un; python3 -c "import getpass, os, pwd; print(pwd.getpwuid(os.getuid()).pw_name, getpass.getuser())"; stat -c %u .`
      const [a, b] = yield* Effect.all([sh(who), sh(who)], { concurrency: 2 })
      for (const o of [a, b]) {
        const [uid, name, names, owner] = o.stdout.trim().split("\n")
        expect(o.exitCode).toBe(0)
        // Its work folder is its own; a name answers for its uid.
        expect(owner).toBe(uid)
        expect(name).toMatch(/^[a-z_][a-z0-9_-]*$/)
        expect(names).toBe(`${name} ${name}`)
        if (root) {
          expect(name).toBe("sandbox")
          expect(uid).not.toBe("0")
          expect(uid).not.toBe("65534")
        }
      }
      if (root) expect(a.stdout.split("\n")[0]).not.toBe(b.stdout.split("\n")[0])
    }))
})

describe("what a sandbox binds", () => {
  it.live("a hidden folder inside a system folder (a checkout under /usr) is covered by an empty one", () =>
    Effect.gen(function*() {
      const docs = fs.readdirSync("/usr/share").find((n) => fs.readdirSync(path.join("/usr/share", n)).length > 0)!
      const hidden = path.join("/usr/share", docs)
      const o = yield* sh(`ls -A ${hidden} | wc -l; ls /usr/share | wc -l`).pipe(Effect.provide(Sandbox.layer({ hidden: [hidden] })))
      const [inHidden, inShare] = o.stdout.trim().split("\n").map(Number)
      expect(inHidden).toBe(0)
      expect(inShare).toBeGreaterThan(0)
    }))

  it("an interpreter outside /usr is bound by its install folder (PREFIX of PREFIX/bin/EXE)", () => {
    expect(Sandbox.installFolder("/usr/bin/sh")).toBeUndefined()
    const prefix = tempDir("assay-sandbox-prefix-")
    fs.mkdirSync(path.join(prefix, "bin"))
    fs.writeFileSync(path.join(prefix, "bin", "tool"), "")
    expect(Sandbox.installFolder(path.join(prefix, "bin", "tool"))).toEqual({ source: prefix })
  })
})

describe("where bubblewrap is missing", () => {
  it.live("untrusted code is refused with one line naming the package", () =>
    Effect.gen(function*() {
      const missing = Sandbox.make({ bwrap: path.join(tempDir("assay-sandbox-"), "no-bwrap") })
      const checked = yield* Effect.flip(missing.check)
      expect(checked.reason).toBe("unavailable")
      expect(checked.message).toContain("apt-get install bubblewrap")
      expect(checked.message).toContain("--unsandboxed")
      expect(checked.message.split("\n")).toHaveLength(1)
      const ran = yield* Effect.flip(
        sh("echo ran", { work: tempDir("assay-sandbox-work-") }).pipe(Effect.provide(Sandbox.layer({ bwrap: "/nonexistent/bwrap" })))
      )
      expect(ran.reason).toBe("unavailable")
    }))

  it.live("--unsandboxed runs it, and says so in the outcome", () =>
    Effect.gen(function*() {
      const o = yield* sh("echo ran").pipe(Effect.provide(Sandbox.layer({ unsandboxed: true })))
      expect(o).toMatchObject({ exitCode: 0, stdout: "ran\n", isolation: "none" })
    }))
})
