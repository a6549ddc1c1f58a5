/**
 * `assay harnesses` lists the agent CLIs assay pins (tools/harnesses/package.json and its lock
 * file), each with its pinned version, the version installed beside it, and whether its binary
 * starts (`--version`). `assay harnesses install [NAME...]` installs the pinned ones there, as the
 * tests' pretest does, but only those named: npm installs from the one lock file a package.json
 * holding the named CLIs and those already installed (brought to their pins), so every transitive
 * version stays pinned and nothing installed is removed.
 */
import { spawn } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Either, Option, Schema } from "effect"
import { detectAll } from "../harness/Detect.ts"
import { adapters } from "../harness/adapters/index.ts"
import { type Detection, harnessNames, type HarnessName, isHarnessName } from "../harness/Harness.ts"
import { UsageError } from "./benchmarks.ts"
import { harnessBinDirs, harnessToolsDir } from "./harnessBin.ts"

export const harnessesDocs = {
  harnesses: {
    about: "The agent CLIs assay pins for harness runs (harness:NAME, --harness): list them (the default) or install them."
  },
  "harnesses list": {
    about: "List each pinned agent CLI: its pinned version, the version installed in tools/harnesses (or how to install it), and " +
      "whether its binary starts (`--version`; found in tools/harnesses, else on PATH). Also plain `assay harnesses`.",
    flags: {
      "--json": { about: "Print one JSON document: { tools, harnesses: [{ name, package, pinned, installed, binary, version, starts, reason }] }" }
    }
  },
  "harnesses install": {
    about: "Install the pinned agent CLIs into tools/harnesses with npm, from its lock file (what npm test's pretest does), " +
      "only the ones named; those already at their pinned version are left as they are. Needs npm's registry (the network).",
    args: { NAME: `Which CLIs: ${harnessNames.join(", ")}, or all (the default; all six take ~1.4 GB)` }
  }
} as const

/** Why the pinned CLIs cannot be listed or installed. */
export class HarnessesError extends Schema.TaggedError<HarnessesError>()("HarnessesError", {
  reason: Schema.Literal("no-pins", "offline", "npm-failed"),
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

const PackageFile = Schema.parseJson(Schema.Struct({
  dependencies: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { default: () => ({}) })
}))
const Manifest = Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
const InstalledPackage = Schema.parseJson(Schema.Struct({ version: Schema.String }))

/** One agent CLI as the tools folder pins and holds it. */
export interface PinnedCli {
  readonly name: HarnessName
  readonly package: string
  /** The version tools/harnesses/package.json pins (null: not pinned there). */
  readonly pinned: string | null
  /** The version installed in tools/harnesses/node_modules (null: not installed). */
  readonly installed: string | null
}

const readText = (file: string): string | null => {
  try {
    return readFileSync(file, "utf8")
  } catch {
    return null // absent: said by the caller
  }
}

/** The pinned CLIs of a tools folder, in adapter order. */
export const pinnedClis = (dir: string): Effect.Effect<ReadonlyArray<PinnedCli>, HarnessesError> =>
  Effect.gen(function*() {
    const file = path.join(dir, "package.json")
    const text = readText(file)
    if (text === null) {
      return yield* new HarnessesError({
        reason: "no-pins",
        detail: `no ${file}: the pinned agent CLIs are part of a checkout of assay (or set ASSAY_HARNESS_TOOLS_DIR to a folder holding tools/harnesses' package.json and lock file)`
      })
    }
    const pins = yield* Schema.decodeUnknown(PackageFile)(text).pipe(
      Effect.mapError((e) => new HarnessesError({ reason: "no-pins", detail: `${file}: ${e.message.split("\n")[0]}` }))
    )
    return harnessNames.map((name): PinnedCli => {
      const pkg = adapters[name].npmPackage
      const installed = readText(path.join(dir, "node_modules", pkg, "package.json"))
      const version = installed === null ? null : Either.getOrNull(Either.map(Schema.decodeUnknownEither(InstalledPackage)(installed), (p) => p.version))
      return { name, package: pkg, pinned: pins.dependencies[pkg] ?? null, installed: version }
    })
  })

const isCurrent = (c: PinnedCli): boolean => c.pinned !== null && c.installed === c.pinned

// ---------------------------------------------------------------------------------------------
// list

interface Row extends PinnedCli {
  readonly binary: string | null
  readonly version: string | null
  readonly starts: boolean
  readonly reason: string
}

const installedText = (r: Row): string =>
  r.pinned === null
    ? "not pinned in tools/harnesses"
    : r.installed === null
    ? `not installed: run assay harnesses install ${r.name}`
    : r.installed !== r.pinned
    ? `${r.installed}, not the pinned version: run assay harnesses install ${r.name}`
    : r.installed

const startsText = (r: Row, tools: string): string =>
  r.starts
    ? `yes, ${r.version ?? "no version printed"}${r.binary !== null && !r.binary.startsWith(tools + path.sep) ? ` (${r.binary}, on PATH)` : ""}`
    : r.binary === null
    ? "no binary"
    : `no: ${r.reason}`

const rowsOf = (clis: ReadonlyArray<PinnedCli>, detections: ReadonlyArray<Detection>): ReadonlyArray<Row> =>
  clis.map((c) => {
    const d = detections.find((x) => x.harness === c.name)
    return {
      ...c,
      binary: d?.binary ?? null,
      version: d?.version ?? null,
      starts: d?.liveness.status === "live",
      reason: d?.liveness.reason ?? "not looked for"
    }
  })

const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? []
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ").trimEnd()).join("\n")
}

const list = (json: boolean) =>
  Effect.gen(function*() {
    const tools = harnessToolsDir()
    const clis = yield* pinnedClis(tools)
    const rows = rowsOf(clis, yield* detectAll({ binDirs: harnessBinDirs() }, clis.map((c) => adapters[c.name])))
    if (json) return yield* Console.log(JSON.stringify({ tools, harnesses: rows }, null, 2))
    yield* Console.log(table([
      ["harness", "package", "pinned", "installed", "starts"],
      ...rows.map((r) => [r.name, r.package, r.pinned ?? "-", installedText(r), startsText(r, tools)])
    ]))
  })

const json = Options.boolean("json")

export const harnessesListCommand = Command.make("list", { json }, (opts) => list(opts.json)).pipe(
  Command.withDescription(harnessesDocs["harnesses list"].about)
)

// ---------------------------------------------------------------------------------------------
// install

const NETWORK = /\b(ENOTCACHED|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH)\b/

/** npm, its output passed on to stderr (stdout stays the command's); the exit code and stderr's tail. */
const npm = (args: ReadonlyArray<string>): Effect.Effect<{ readonly code: number | null; readonly tail: string }, HarnessesError> =>
  Effect.async((resume) => {
    const child = spawn("npm", args, { stdio: ["ignore", "pipe", "pipe"] })
    let tail = ""
    child.stdout.on("data", (d: Buffer) => process.stderr.write(d))
    child.stderr.on("data", (d: Buffer) => {
      process.stderr.write(d)
      tail = (tail + d.toString()).slice(-8192)
    })
    child.on("error", (e) => resume(Effect.fail(new HarnessesError({ reason: "npm-failed", detail: `cannot run npm: ${e.message}` }))))
    child.on("close", (code) => resume(Effect.succeed({ code, tail })))
    // Interrupted (Ctrl-C): npm stops, and the folder is put back by the caller's finalizer.
    return Effect.sync(() => child.kill("SIGTERM"))
  })

/**
 * Installs `wanted` at their pinned versions into the tools folder `dir`, keeping `keep` (the CLIs
 * installed at their pins): npm runs in a staging folder holding the lock file and a package.json
 * of both, with the folder's node_modules moved in and moved back whatever happens.
 */
export const install = (dir: string, wanted: ReadonlyArray<PinnedCli>, keep: ReadonlyArray<PinnedCli>): Effect.Effect<void, HarnessesError> =>
  Effect.gen(function*() {
    const staging = path.join(dir, ".install")
    const modules = path.join(dir, "node_modules")
    const staged = path.join(staging, "node_modules")
    const manifest = yield* Schema.decodeUnknown(Manifest)(readText(path.join(dir, "package.json"))).pipe(
      Effect.mapError((e) => new HarnessesError({ reason: "no-pins", detail: `${path.join(dir, "package.json")}: ${e.message.split("\n")[0]}` }))
    )
    const dependencies = Object.fromEntries([...wanted, ...keep].flatMap((c) => (c.pinned === null ? [] : [[c.package, c.pinned]])))
    const failed = (what: string) => (e: unknown) =>
      new HarnessesError({ reason: "npm-failed", detail: `${what} in ${dir}: ${e instanceof Error ? e.message : String(e)}` })
    const putBack = Effect.try({
      try: () => {
        if (existsSync(staged) && !existsSync(modules)) renameSync(staged, modules)
        rmSync(staging, { recursive: true, force: true })
      },
      catch: failed("cannot put node_modules back from .install")
    })
    // A staging folder left by an install that was killed: its node_modules is the folder's.
    yield* putBack
    const ran = yield* Effect.try({
      try: () => {
        mkdirSync(staging)
        writeFileSync(path.join(staging, "package.json"), JSON.stringify({ ...manifest, dependencies }, null, 2) + "\n")
        copyFileSync(path.join(dir, "package-lock.json"), path.join(staging, "package-lock.json"))
        if (existsSync(modules)) renameSync(modules, staged)
      },
      catch: failed("cannot stage the install")
    }).pipe(
      // npm install, not npm ci: one CLI lists optional per-platform packages the registry lacks,
      // which npm ci refuses; the lock file still pins every version.
      Effect.zipRight(npm(["install", "--prefix", staging, "--no-audit", "--no-fund"])),
      Effect.ensuring(Effect.orDie(putBack))
    )
    if (ran.code === 0) return
    const names = wanted.map((c) => c.name).join(", ")
    const network = NETWORK.exec(ran.tail)
    return yield* network !== null
      ? new HarnessesError({
        reason: "offline",
        detail: `could not install ${names}: npm cannot reach its registry (${network[1]}); connect to the network (or set npm's registry or proxy) and run again. ` +
          `${path.join(dir, "node_modules")} is as it was`
      })
      : new HarnessesError({ reason: "npm-failed", detail: `could not install ${names}: npm exited ${ran.code ?? "on a signal"} (its output is above)` })
  })

const installCommandHandler = (names: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const unknown = names.filter((n) => n !== "all" && !isHarnessName(n))
    if (unknown.length > 0) {
      return yield* new UsageError({ detail: `harnesses install: unknown harness ${unknown.join(", ")}: choose among ${harnessNames.join(", ")}, or all` })
    }
    const dir = harnessToolsDir()
    const clis = yield* pinnedClis(dir)
    const chosen = names.length === 0 || names.includes("all") ? clis : clis.filter((c) => names.includes(c.name))
    const unpinned = chosen.filter((c) => c.pinned === null)
    if (unpinned.length > 0) return yield* new HarnessesError({ reason: "no-pins", detail: `${unpinned.map((c) => c.package).join(", ")} not pinned in ${path.join(dir, "package.json")}` })
    const named = chosen.filter((c) => !isCurrent(c))
    const pinnedLine = (cs: ReadonlyArray<PinnedCli>) => cs.map((c) => `${c.name} ${c.pinned}`).join(", ")
    if (named.length === 0) return yield* Console.log(`already installed at the pinned versions: ${pinnedLine(chosen)} (${dir})`)
    // An installed CLI off its pin (a checkout installed before the pin moved) goes to its pin too:
    // the lock file holds the CLIs together, and npm would otherwise remove it.
    const stale = clis.filter((c) => c.installed !== null && !isCurrent(c) && !named.includes(c))
    const wanted = [...named, ...stale]
    yield* Console.error(
      `assay: installing ${pinnedLine(named)} into ${dir} with npm, from its lock file` +
        (stale.length > 0 ? `; also ${stale.map((c) => `${c.name} ${c.installed} -> ${c.pinned}`).join(", ")} (off its pin, which npm would otherwise remove)` : "")
    )
    yield* install(dir, wanted, clis.filter((c) => isCurrent(c)))
    const after = yield* pinnedClis(dir)
    const missing = after.filter((c) => wanted.some((w) => w.name === c.name) && !isCurrent(c))
    if (missing.length > 0) {
      return yield* new HarnessesError({ reason: "npm-failed", detail: `npm finished but ${missing.map((c) => `${c.name} is ${c.installed ?? "not installed"}`).join(", ")}` })
    }
    yield* Console.log(`installed: ${pinnedLine(wanted)} (${dir}); assay harnesses says whether each starts`)
  })

export const harnessesInstallCommand = Command.make(
  "install",
  { names: Args.text({ name: "NAME" }).pipe(Args.repeated, Args.optional) },
  (opts) => installCommandHandler(Option.getOrElse(opts.names, () => []))
).pipe(Command.withDescription(harnessesDocs["harnesses install"].about))

export const harnessesSubcommands = [harnessesListCommand, harnessesInstallCommand] as const

/** `assay harnesses` alone lists, as `assay harnesses list` does. */
export const harnessesCommand = Command.make("harnesses", { json }, (opts) => list(opts.json)).pipe(
  Command.withSubcommands(harnessesSubcommands),
  Command.withDescription(harnessesDocs["harnesses"].about)
)
