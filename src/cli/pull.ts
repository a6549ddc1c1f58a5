/**
 * `assay data pull`: a benchmark's pinned files into the data folder, all or nothing. Every file is
 * fetched (or copied from `--from DIR`) into a staging folder beside the data folder and checked
 * against its sha256, the derived files are made and checked, and only then is each moved into
 * place; a pull that fails before that leaves the data folder as it was.
 */
import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { basename, dirname, join, resolve } from "node:path"
import { Effect, Either, Schema } from "effect"
import { sha256Hex } from "../content/ContentId.ts"
import { pullCommand } from "../evaluation/DataRoot.ts"
import type { PinnedFile, Provider } from "../evaluation/Provider.ts"
import { downloadToFile, type Progress, unpack } from "./pullArchive.ts"
import { counted } from "./words.ts"

export class PullError extends Schema.TaggedError<PullError>()("PullError", {
  benchmark: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `data pull ${this.benchmark}: ${this.detail}; the data folder is unchanged`
  }
}

export interface PullOptions {
  /** The data folder (`dataRoot()`). */
  readonly target: string
  /** A local copy laid out like the data folder, instead of downloading. */
  readonly from: string | null
  /** A mirror of the upstream hosts: `https://HOST/PATH` is fetched from `MIRROR/HOST/PATH`. */
  readonly mirror: string | null
  readonly log: (line: string) => Effect.Effect<void>
}

/** Where a pinned URL is fetched from, given a mirror. */
export const mirroredUrl = (url: string, mirror: string | null): string =>
  mirror === null ? url : `${mirror.replace(/\/+$/, "")}/${url.replace(/^[a-z]+:\/\//, "")}`

/**
 * Benchmarks whose databases have no published checksum (BIRD's Mini-Dev `minidev.zip`): a pull
 * `--from DIR` copies each `<db>/<db>.sqlite` from the first of `under` that DIR holds into
 * `into/<db>/<db>.sqlite` and records the sha256 it found in `into/SHA256SUMS`; a pull `--real`
 * downloads `archive` and unpacks each `…/dev_databases/<db>/<db>.sqlite` entry there the same way.
 * `into/ORIGIN.json` says where the databases came from (and whether the archive was pinned).
 */
const localDatabases: Readonly<
  Record<string, { readonly under: ReadonlyArray<string>; readonly into: string; readonly archive: string; readonly ids: ReadonlyArray<string> }>
> = {
  bird: {
    under: ["bird/databases", "dev_databases", "MINIDEV/dev_databases", "minidev/MINIDEV/dev_databases", "sqlite/dev_databases"],
    into: "bird/databases",
    // Upstream's own download (README badge, llm/mini_dev_data/README.md); the Google Drive mirrors need a browser.
    archive: "https://bird-bench.oss-cn-beijing.aliyuncs.com/minidev.zip",
    ids: [
      "california_schools", "card_games", "codebase_community", "debit_card_specializing", "european_football_2", "financial",
      "formula_1", "student_club", "superhero", "thrombosis_prediction", "toxicology"
    ]
  }
}

/** The databases a `--from DIR` holds for `benchmark`, as (source, data-folder path) pairs, or null. */
const databasesIn = (benchmark: string, from: string | null): ReadonlyArray<readonly [string, string]> | null => {
  const spec = localDatabases[benchmark]
  if (spec === undefined || from === null) return null
  const dir = spec.under.map((u) => join(from, u)).find((d) => spec.ids.every((id) => existsSync(join(d, id, `${id}.sqlite`))))
  return dir === undefined ? null : spec.ids.map((id) => [join(dir, id, `${id}.sqlite`), `${spec.into}/${id}/${id}.sqlite`] as const)
}

/** Why a host could not be reached at all (no name, no route, refused), or null for any other failure. */
const unreachable = (e: unknown): string | null => {
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : null
  const code = cause !== null && "code" in cause && typeof cause.code === "string" ? cause.code : null
  if (code !== null && ["ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ENETUNREACH", "EHOSTUNREACH", "ETIMEDOUT", "UND_ERR_CONNECT_TIMEOUT"].includes(code)) {
    return `${code}${cause !== null && cause.message !== code ? ` (${cause.message})` : ""}`
  }
  // Deno's fetch says it in words, with no code.
  const text = [e instanceof Error ? e.message : "", cause?.message ?? ""].join(" ")
  const said = /connection refused|dns error|failed to lookup address|name or service not known|network is unreachable|no route to host/i.exec(text)
  return said === null ? null : said[0]
}

/**
 * Downloads `url`. A host found unreachable once is not asked again in the same pull (`hosts`
 * keeps why), so a pull of many files without network ends in one wait, not one per file.
 */
const download = (url: string, hosts: Map<string, string>): Effect.Effect<Uint8Array, string> =>
  Effect.suspend(() => {
    const host = new URL(url).host
    const known = hosts.get(host)
    if (known !== undefined) return Effect.fail(`cannot reach ${host}: ${known}`)
    return Effect.tryPromise({
      try: async () => {
        const response = await fetch(url)
        if (!response.ok) throw new Error(`HTTP ${response.status}`)
        return new Uint8Array(await response.arrayBuffer())
      },
      catch: (e) => {
        const why = unreachable(e)
        if (why !== null) {
          if (!hosts.has(host)) hosts.set(host, why)
          return `cannot reach ${host}: ${hosts.get(host)}`
        }
        return `cannot download ${url}: ${e instanceof Error ? e.message : String(e)}`
      }
    })
  })

/** Lines for the files left out: one each, or one per reason where many share it. */
const skippedLines = (skipped: ReadonlyArray<readonly [string, string]>): ReadonlyArray<string> => {
  const byWhy = new Map<string, Array<string>>()
  for (const [path, why] of skipped) byWhy.set(why, [...(byWhy.get(why) ?? []), path])
  return [...byWhy].flatMap(([why, paths]) =>
    paths.length <= 5 ? paths.map((p) => `skipped ${p}: ${why}`) : [`skipped ${paths.length} files (${paths[0]}, ${paths[1]}, …): ${why}`]
  )
}

/** What the pull does with one pinned file. */
type Step = { readonly file: PinnedFile; readonly action: "fetch" | "copy" } | { readonly file: PinnedFile; readonly action: "skip"; readonly why: string }

/** Moves every staged file into the data folder; on a failure, puts back what it had replaced. */
const moveIntoPlace = (staging: string, target: string, paths: ReadonlyArray<string>): Either.Either<void, string> => {
  const previous = join(staging, ".previous")
  const done: Array<{ readonly path: string; readonly replaced: boolean }> = []
  try {
    for (const path of paths) {
      const dest = join(target, path)
      mkdirSync(dirname(dest), { recursive: true })
      const replaced = existsSync(dest)
      if (replaced) {
        mkdirSync(dirname(join(previous, path)), { recursive: true })
        renameSync(dest, join(previous, path))
      }
      done.push({ path, replaced })
      renameSync(join(staging, path), dest)
    }
    return Either.right(undefined)
  } catch (e) {
    for (const { path, replaced } of done.reverse()) {
      try {
        const dest = join(target, path)
        if (existsSync(join(staging, path)) === false && existsSync(dest)) rmSync(dest, { force: true })
        if (replaced) renameSync(join(previous, path), dest)
      } catch {
        // Best effort: the error below names the failure.
      }
    }
    return Either.left(`cannot move the files into ${target}: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/** Pulls `provider`'s files into `options.target`; returns how many files are now in place. */
export const pullData = (provider: Provider, options: PullOptions): Effect.Effect<number, PullError> =>
  Effect.gen(function*() {
    const fail = (detail: string) => new PullError({ benchmark: provider.name, detail })
    const files = provider.data ?? []
    const derived = provider.derived
    if (files.length === 0 && derived === undefined) {
      yield* options.log(`${provider.name} needs no upstream data`)
      return 0
    }
    const { from, target } = options
    const inFrom = (path: string) => from !== null && existsSync(join(from, path))
    const databases = databasesIn(provider.name, from)
    // A folder of databases alone (an unzipped minidev.zip) is enough once the pinned files are in place.
    const inPlace = (file: PinnedFile) =>
      databases !== null && existsSync(join(target, file.path)) && sha256Hex(new Uint8Array(readFileSync(join(target, file.path)))) === file.sha256

    // What to do with each file, decided before anything is written.
    const deriveHere = derived !== undefined &&
      (from === null || files.filter((f) => f.derivationInput === true).every((f) => inFrom(f.path)) ||
        !derived.files.every((f) => inFrom(f.path)))
    const steps: Array<Step> = files.map((file): Step => {
      if (file.derivationInput === true && !deriveHere) return { file, action: "skip", why: `not needed: ${from} holds the files derived from it` }
      if (from !== null) {
        if (inFrom(file.path)) return { file, action: "copy" }
        if (inPlace(file)) return { file, action: "skip", why: "already in the data folder with its pinned sha256" }
        if (file.optional !== undefined) return { file, action: "skip", why: `not in ${from}: ${file.optional} cannot run without it` }
        return file.oracle === true
          ? { file, action: "skip", why: `not in ${from} (only \`assay equivalence\` reads it)` }
          : { file, action: "copy" } // reported missing below
      }
      if (file.url !== "") return { file, action: "fetch" }
      return file.oracle === true
        ? { file, action: "skip", why: "no download URL (made by running upstream's code): `assay equivalence` needs it, bring it with --from DIR" }
        : { file, action: "fetch" } // refused below
    })
    if (from !== null) {
      const missing = steps.filter((s) => s.action === "copy" && !inFrom(s.file.path)).map((s) => join(from, s.file.path))
      if (missing.length > 0) {
        return yield* fail(`${missing.length} file(s) missing from ${from}: ${missing.slice(0, 3).join(", ")}${missing.length > 3 ? ", ..." : ""}`)
      }
    } else {
      const noUrl = steps.filter((s) => s.action === "fetch" && s.file.url === "").map((s) => s.file.path)
      if (noUrl.length > 0) {
        return yield* fail(
          `${noUrl.length} of its files have no download URL (they are made from upstream code), e.g. ${noUrl.slice(0, 3).join(", ")}: run ` +
            pullCommand(provider.name, "local-copy")
        )
      }
    }

    // Staging, beside the data folder so that the final moves are renames on one file system.
    const parent = dirname(resolve(target))
    yield* Effect.try({ try: () => mkdirSync(parent, { recursive: true }), catch: (e) => fail(`cannot create ${parent}: ${String(e)}`) })
    const staging = join(parent, `.${basename(target)}.pull-${randomBytes(6).toString("hex")}`)
    const removeStaging = Effect.sync(() => rmSync(staging, { recursive: true, force: true }))
    const stage = (path: string, bytes: Uint8Array): Effect.Effect<void, string> =>
      Effect.try({
        try: () => {
          mkdirSync(dirname(join(staging, path)), { recursive: true })
          writeFileSync(join(staging, path), bytes)
        },
        catch: (e) => `cannot write ${join(staging, path)}: ${String(e)}`
      })

    const placed = yield* Effect.gen(function*() {
      const wanted = steps.filter((s) => s.action !== "skip")
      const unavailable = new Map<string, string>()
      const hosts = new Map<string, string>()
      const downloads = wanted.filter((s) => s.action === "fetch").length
      if (downloads > 0) yield* options.log(`downloading ${downloads} file${downloads === 1 ? "" : "s"}`)
      yield* Effect.forEach(
        wanted,
        (step) =>
          Effect.gen(function*() {
            const { file } = step
            const source = step.action === "copy" ? join(from as string, file.path) : mirroredUrl(file.url, options.mirror)
            const fetched = step.action === "copy"
              ? yield* Effect.either(Effect.try({ try: () => new Uint8Array(readFileSync(source)), catch: (e) => `cannot read ${source}: ${String(e)}` }))
              : yield* Effect.either(download(source, hosts))
            // An optional file that cannot be had is said and left out; the others are pulled all the same.
            if (Either.isLeft(fetched) && file.optional !== undefined) {
              const host = step.action === "fetch" ? hosts.get(new URL(source).host) : undefined
              // Unreachable: one reason for every file of the host, so the lines below can say it once.
              unavailable.set(
                file.path,
                host !== undefined ? `cannot reach ${new URL(source).host}: ${host}; pull from a local copy with --from DIR` : `${fetched.left}: ${file.optional} cannot run without it`
              )
              return
            }
            const bytes = yield* fetched
            const actual = sha256Hex(bytes)
            if (actual !== file.sha256) return yield* Effect.fail(`${file.path} (from ${source}) has sha256 ${actual}, the pinned sha256 is ${file.sha256}`)
            yield* stage(file.path, bytes)
          }),
        // Copies are local reads, one at a time; downloads run eight at once.
        { concurrency: from !== null ? 1 : 8, discard: true }
      ).pipe(Effect.mapError(fail))
      const skipped: Array<readonly [string, string]> = []
      for (const step of steps) {
        const missing = unavailable.get(step.file.path)
        if (step.action === "skip") skipped.push([step.file.path, step.why])
        else if (missing !== undefined) skipped.push([step.file.path, missing])
        else yield* options.log(`ok ${step.file.path}`)
      }
      for (const line of skippedLines(skipped)) yield* options.log(line)
      const paths = wanted.map((s) => s.file.path).filter((path) => !unavailable.has(path))
      // Every file wanted was out of reach: the pull did nothing, which is a failure to say, not a success.
      if (wanted.length > 0 && paths.length === 0 && derived === undefined && databases === null) {
        const first = unavailable.get(wanted[0]!.file.path) ?? ""
        return yield* fail(`none of its ${wanted.length} files could be had (${first})`)
      }

      if (databases !== null) {
        // No checksum is published for these: the pull records what it copied.
        const sums: Array<string> = []
        for (const [source, path] of databases) {
          const bytes = yield* Effect.try({ try: () => new Uint8Array(readFileSync(source)), catch: (e) => fail(`cannot read ${source}: ${String(e)}`) })
          const sum = sha256Hex(bytes)
          yield* stage(path, bytes).pipe(Effect.mapError(fail))
          paths.push(path)
          sums.push(`${sum}  ${path.split("/").slice(-2).join("/")}`)
          yield* options.log(`ok ${path} (from ${source}): sha256 ${sum}, recorded (no published checksum)`)
        }
        const sumsPath = `${localDatabases[provider.name]!.into}/SHA256SUMS`
        yield* stage(sumsPath, new TextEncoder().encode(sums.join("\n") + "\n")).pipe(Effect.mapError(fail))
        const originPath = `${localDatabases[provider.name]!.into}/ORIGIN.json`
        yield* stage(originPath, originBytes({ source: "local copy", from: resolve(from as string) })).pipe(Effect.mapError(fail))
        paths.push(sumsPath, originPath)
      }

      if (derived !== undefined) {
        // Made from the staged files, or copied from a local copy that holds them and not what they are made from.
        const made: ReadonlyMap<string, Uint8Array> = deriveHere
          ? yield* Effect.try({
            try: () => derived.derive((path) => new Uint8Array(readFileSync(join(staging, path)))),
            catch: (e) => `cannot derive: ${e instanceof Error ? e.message : String(e)}`
          }).pipe(Effect.flatMap((r) => r), Effect.mapError(fail))
          : yield* Effect.try({
            try: () => new Map(derived.files.map((f) => [f.path, new Uint8Array(readFileSync(join(from as string, f.path)))])),
            catch: (e) => fail(`cannot read a derived file from ${from}: ${String(e)}`)
          })
        for (const f of derived.files) {
          const bytes = made.get(f.path)
          if (bytes === undefined) return yield* fail(`the derivation made no ${f.path}`)
          const actual = sha256Hex(bytes)
          const what = deriveHere ? `derived ${f.path}` : `${f.path} (from ${join(from as string, f.path)})`
          if (actual !== f.sha256) return yield* fail(`${what} has sha256 ${actual}, the pinned sha256 is ${f.sha256}`)
          yield* stage(f.path, bytes).pipe(Effect.mapError(fail))
          paths.push(f.path)
          yield* options.log(deriveHere ? `derived ${f.path}` : `ok ${f.path}`)
        }
      }

      yield* Either.match(moveIntoPlace(staging, target, paths), { onLeft: (e) => Effect.fail(fail(e)), onRight: () => Effect.void })
      return paths.length
    }).pipe(Effect.ensuring(removeStaging))
    yield* options.log(`${counted(placed, "file")} of ${provider.name} in ${target}`)
    return placed
  })

/** Where a benchmark's databases came from, as `ORIGIN.json` beside them records it. */
type Origin =
  | { readonly source: "local copy"; readonly from: string }
  | { readonly source: "download"; readonly url: string; readonly sha256: string; readonly pinned: boolean }

const originBytes = (origin: Origin): Uint8Array => new TextEncoder().encode(JSON.stringify(origin, null, 2) + "\n")

export interface ArchiveOptions {
  readonly target: string
  /** Where to download from; null: the benchmark's own URL (through `mirror` if one is given). */
  readonly url: string | null
  readonly mirror: string | null
  /** The sha256 the archive must have (`--sha256`); null: install what arrives, unpinned, and say so. */
  readonly sha256: string | null
  readonly log: (line: string) => Effect.Effect<void>
  readonly progress: { readonly progress: Progress; readonly done: () => void }
}

/**
 * `assay data pull BENCHMARK --real`: downloads the benchmark's database archive (no checksum is
 * published for it) into a staging folder beside the data folder, prints the sha256 it got, checks
 * it against `--sha256` when one is given, unpacks the databases, records their sha256 and the
 * archive's, and only then moves them into place, where a `--from DIR` pull puts them.
 */
export const pullArchive = (provider: Provider, options: ArchiveOptions): Effect.Effect<number, PullError> =>
  Effect.gen(function*() {
    const fail = (detail: string) => new PullError({ benchmark: provider.name, detail })
    const spec = localDatabases[provider.name]
    if (spec === undefined) return yield* fail("has no database archive to download (--real is for bird); its files are pinned: pull without --real")
    const wanted = options.sha256?.toLowerCase() ?? null
    if (wanted !== null && !/^[0-9a-f]{64}$/.test(wanted)) return yield* fail(`--sha256 ${options.sha256} is not 64 hex digits`)
    const url = options.url ?? mirroredUrl(spec.archive, options.mirror)
    const name = basename(new URL(url).pathname) || "archive.zip"

    const parent = dirname(resolve(options.target))
    yield* Effect.try({ try: () => mkdirSync(parent, { recursive: true }), catch: (e) => fail(`cannot create ${parent}: ${String(e)}`) })
    const staging = join(parent, `.${basename(options.target)}.pull-${randomBytes(6).toString("hex")}`)
    const placed = yield* Effect.gen(function*() {
      const zip = join(staging, ".download", name)
      yield* options.log(`downloading ${url}`)
      const got = yield* downloadToFile(url, zip, options.progress.progress).pipe(
        Effect.ensuring(Effect.sync(options.progress.done)),
        Effect.mapError(fail)
      )
      yield* options.log(`got ${name}: ${got.bytes} bytes, sha256 ${got.sha256}`)
      if (wanted !== null && got.sha256 !== wanted) return yield* fail(`${url} has sha256 ${got.sha256}, --sha256 gave ${wanted}`)

      const pattern = /(?:^|\/)dev_databases\/([^/]+)\/([^/]+)\.sqlite$/
      const pick = (entry: string): string | null => {
        const m = pattern.exec(entry)
        return m === null || entry.startsWith("__MACOSX/") || m[1] !== m[2] || !spec.ids.includes(m[1]!) ? null : `${spec.into}/${m[1]}/${m[1]}.sqlite`
      }
      const expected = spec.ids.map((id) => `${spec.into}/${id}/${id}.sqlite`)
      const unpacked = yield* unpack(zip, staging, pick, expected).pipe(Effect.mapError(fail))
      const paths: Array<string> = []
      for (const path of expected) {
        const u = unpacked.find((x) => x.path === path)!
        paths.push(path)
        yield* options.log(`ok ${path} (${u.entry} in ${name}): sha256 ${u.sha256}`)
      }
      const sums = expected.map((path) => `${unpacked.find((x) => x.path === path)!.sha256}  ${path.split("/").slice(-2).join("/")}`)
      const write = (path: string, bytes: Uint8Array) =>
        Effect.try({ try: () => writeFileSync(join(staging, path), bytes), catch: (e) => fail(`cannot write ${join(staging, path)}: ${String(e)}`) })
      yield* write(`${spec.into}/SHA256SUMS`, new TextEncoder().encode(sums.join("\n") + "\n"))
      yield* write(`${spec.into}/ORIGIN.json`, originBytes({ source: "download", url, sha256: got.sha256, pinned: wanted !== null }))
      paths.push(`${spec.into}/SHA256SUMS`, `${spec.into}/ORIGIN.json`)
      yield* Either.match(moveIntoPlace(staging, options.target, paths), { onLeft: (e) => Effect.fail(fail(e)), onRight: () => Effect.void })

      yield* options.log(`${expected.length} databases of ${provider.name} in ${join(options.target, spec.into)}`)
      yield* options.log(
        wanted !== null
          ? `pinned: ${name} matched --sha256 ${wanted} (recorded in ${spec.into}/ORIGIN.json)`
          : `installed UNPINNED: upstream publishes no checksum for ${name} and no --sha256 was given, so sha256 ${got.sha256} was checked ` +
            `against nothing (recorded in ${spec.into}/ORIGIN.json). To pin it, pass it next time: ` +
            `assay data pull ${provider.name} --real --sha256 ${got.sha256} (a download with other bytes then fails and changes nothing)`
      )
      const notYet = (provider.data ?? []).filter((f) => f.oracle !== true && !existsSync(join(options.target, f.path)))
      if (notYet.length > 0) {
        yield* options.log(`the questions and schemas are not in ${options.target} yet (e.g. ${notYet[0]!.path}): run ${pullCommand(provider.name, "download")}`)
      }
      return paths.length
    }).pipe(Effect.ensuring(Effect.sync(() => rmSync(staging, { recursive: true, force: true }))))
    return placed
  })
