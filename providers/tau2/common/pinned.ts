/**
 * Reading a tau2 domain's pinned upstream files: each file's text, its sha256 checked against
 * the value recorded in the domain's `data.ts`, and the domain's data error (one per domain, so
 * a caller's error channel names the domain it loaded).
 */
import * as NodeBuffer from "node:buffer"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Effect, Schema } from "effect"
import { DataRoot } from "../../../src/index.ts"

/** The upstream repository, and the revision every tau2 domain's files are pinned at. */
export const upstreamRepository = "sierra-research/tau2-bench"
export const upstreamRevision = "a2c024725189473d2d7cea3a5cfdbcc67478e41f"

export interface PinnedFile {
  /** Path under the domain's data folder (see the domain's `readPinned`). */
  readonly name: string
  /** Where `assay data pull` fetches it; null for files generated from upstream code (no upstream blob). */
  readonly url: string | null
  readonly sha256: string
}

/** What a data error says to the user about its domain. */
export interface PinnedDomain {
  /** The benchmark id `assay data pull` takes, e.g. "tau2-retail". */
  readonly pull: string
  /** The folder under `$ASSAY_DATA_DIR` holding the domain's files, e.g. "tau2/retail/". */
  readonly folder: string
  readonly upstreamRevision: string
  /** Whether a hash mismatch also names the pull command. */
  readonly pullOnMismatch: boolean
  /** How its files are pulled: by URL (its generated files made from upstream's pinned sources), or only from a local copy. */
  readonly pullKind: DataRoot.PullKind
}

/** The data root: `dataDir` when given, else `ASSAY_DATA_DIR` or the default (src/evaluation/DataRoot.ts). */
export const dataRoot = (dataDir?: string): string => dataDir ?? DataRoot.dataRoot()

/** The fields of every domain's data error. */
export const pinnedErrorFields = {
  file: Schema.String,
  reason: Schema.Literal("missing", "hash-mismatch", "invalid"),
  expected: Schema.optional(Schema.String),
  actual: Schema.optional(Schema.String),
  detail: Schema.optional(Schema.String),
  /** The data root the file was looked for in. */
  root: Schema.optional(Schema.String)
}

/**
 * A domain data error's message. `missing` and `hash-mismatch` come from `readPinnedFrom`,
 * `invalid` from the domain's decoders.
 */
export const pinnedErrorMessage = (domain: PinnedDomain, e: Schema.Struct.Type<typeof pinnedErrorFields>): string => {
  switch (e.reason) {
    case "missing":
      return DataRoot.missingDataMessage(domain.pull, domain.pullKind, e.file, e.root ?? dataRoot())
    case "hash-mismatch":
      return `${e.file} has sha256 ${e.actual}, expected ${e.expected} (upstream ${domain.upstreamRevision})` +
        (domain.pullOnMismatch ? `: run ${DataRoot.pullCommand(domain.pull, domain.pullKind)} to put the pinned file in place` : "")
    case "invalid":
      return `${e.file} is not what upstream's loader accepts: ${e.detail ?? ""}`
  }
}

/** A file of upstream's repository at the pinned revision (or `revision`), as a raw URL. */
export const upstreamUrl = (path: string, revision: string = upstreamRevision): string =>
  `https://raw.githubusercontent.com/${upstreamRepository}/${revision}/${path}`

/** The fields of a domain's data error. */
export type PinnedFailure = Schema.Struct.Type<typeof pinnedErrorFields>

/**
 * A domain's readers of its pinned files: each file's text (`readPinned`) or bytes
 * (`readPinnedBytes`) from `folder` (the data root unless given; errors name the data root), and
 * the domain's error for a file upstream's loader would refuse (`invalid`).
 */
export const pinnedReaders = <E>(error: (fields: PinnedFailure) => E, folder: (dataDir?: string) => string = dataRoot) => ({
  readPinned: (file: PinnedFile, dataDir?: string): Effect.Effect<string, E> => readPinnedFrom(folder(dataDir), file, error, dataRoot(dataDir)),
  readPinnedBytes: (file: PinnedFile, dataDir?: string): Effect.Effect<Buffer, E> =>
    readPinnedBytesFrom(folder(dataDir), file, error, dataRoot(dataDir)),
  invalid: (file: PinnedFile, detail: string): E => error({ file: file.name, reason: "invalid", detail })
})

/** The fields of a read failure, for the domain's error constructor. */
export interface ReadFailure {
  readonly file: string
  readonly reason: "missing" | "hash-mismatch"
  readonly expected?: string
  readonly actual?: string
  readonly detail?: string
  readonly root?: string
}

/**
 * One pinned file's text from `folder`, its hash checked; failures name the full path and the data
 * root (`folder` unless the caller's folder is under it).
 */
export const readPinnedFrom = <E>(
  folder: string,
  file: PinnedFile,
  failure: (fields: ReadFailure) => E,
  root: string = folder
): Effect.Effect<string, E> => Effect.map(readPinnedBytesFrom(folder, file, failure, root), textOf)

/** The same file's bytes, hash checked (for a reader that decodes only the parts it needs). */
export const readPinnedBytesFrom = <E>(
  folder: string,
  file: PinnedFile,
  failure: (fields: ReadFailure) => E,
  root: string = folder
): Effect.Effect<Buffer, E> =>
  Effect.gen(function* () {
    const path = join(folder, file.name)
    // Read at once: a few milliseconds at most for these files, where fs/promises' chunked read
    // of the 2.8 MB retail DB costs ~10 ms of CPU.
    const { bytes, noted, state } = yield* Effect.try({
      try: () => {
        const state = DataRoot.fileState(resolve(path))
        return { bytes: readFileSync(path), state, noted: DataRoot.notedSha256(resolve(path)) }
      },
      catch: (e) => failure({ file: path, reason: "missing", detail: String(e), root })
    })
    // A large file hashed before in exactly its present state (DataRoot.notedSha256: device, inode,
    // size, modification and change times, unchanged while it was read) is not hashed again.
    const unchanged = noted === file.sha256 && DataRoot.fileState(resolve(path)) === state
    const actual = unchanged ? file.sha256 : createHash("sha256").update(bytes).digest("hex")
    if (actual !== file.sha256) return yield* Effect.fail(failure({ file: path, reason: "hash-mismatch", expected: file.sha256, actual }))
    if (!unchanged && bytes.length >= NOTED_SIZE) DataRoot.noteSha256(resolve(path), actual, state)
    return bytes
  })

/** Files from this size on get a note of their sha256 (db.json files); smaller ones hash in well under a millisecond. */
const NOTED_SIZE = 256 * 1024

const isAscii: ((bytes: Uint8Array) => boolean) | undefined = (NodeBuffer as { readonly isAscii?: (bytes: Uint8Array) => boolean }).isAscii

/**
 * The bytes' UTF-8 text. ASCII bytes (every tau2 DB file) are copied as Latin-1, the same
 * string made without decoding: a fraction of a millisecond for db.json, against ~10 ms.
 */
export const textOf = (bytes: Buffer): string => (isAscii !== undefined && isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8"))
