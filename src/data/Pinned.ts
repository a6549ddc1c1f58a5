/**
 * The one reader of pinned upstream files: a file under the data folder (src/evaluation/DataRoot.ts),
 * read whole and checked against its sha256 before a provider sees a byte. Every provider reads
 * its data through this service, so a missing or changed file says the same thing everywhere:
 * which file, in which folder, and the `assay data pull` that fixes it.
 */
import * as NodeBuffer from "node:buffer"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Context, Effect, Layer, Schema } from "effect"
import * as DataRoot from "../evaluation/DataRoot.ts"
import type { PinnedFile } from "../evaluation/Provider.ts"

/**
 * A data file that cannot be used. `missing`: not in the data folder; `hash-mismatch`: its bytes
 * are not the pinned ones; `invalid`: pinned, but not what the provider's loader accepts.
 */
export class DataError extends Schema.TaggedError<DataError>()("DataError", {
  benchmark: Schema.String,
  file: Schema.String,
  reason: Schema.Literal("missing", "hash-mismatch", "invalid"),
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

/** What a provider tells the reader about itself, so that an error names the pull that fixes it. */
export interface Source {
  /** The benchmark id `assay data pull` takes. */
  readonly benchmark: string
  /** The folder under the data root its `PinnedFile.path`s are relative to ("" for the root). */
  readonly folder?: string
  /** "local-copy" when some of its files have no download URL (made from upstream code). */
  readonly pull?: DataRoot.PullKind
}

export interface PinnedDataService {
  /** The data folder read from. */
  readonly root: string
  /** The file's bytes, its sha256 checked. */
  readonly bytes: (source: Source, file: Pick<PinnedFile, "path" | "sha256">) => Effect.Effect<Uint8Array, DataError>
  /** The file's text (UTF-8), its sha256 checked. */
  readonly text: (source: Source, file: Pick<PinnedFile, "path" | "sha256">) => Effect.Effect<string, DataError>
}

export class PinnedData extends Context.Tag("assay/PinnedData")<PinnedData, PinnedDataService>() {}

/** Files from this size on get a note of their sha256 (DataRoot.notedSha256): smaller ones hash in well under a millisecond. */
const NOTED_SIZE = 256 * 1024

const isAscii: ((bytes: Uint8Array) => boolean) | undefined = (NodeBuffer as { readonly isAscii?: (bytes: Uint8Array) => boolean }).isAscii

/** UTF-8 text of bytes; ASCII bytes (most data files) are copied as Latin-1, the same string without decoding. */
export const textOf = (bytes: Uint8Array): string => {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return isAscii !== undefined && isAscii(buffer) ? buffer.toString("latin1") : buffer.toString("utf8")
}

/** The reader over the folder `root`. */
export const make = (root: string): PinnedDataService => {
  const bytes = (source: Source, file: Pick<PinnedFile, "path" | "sha256">): Effect.Effect<Uint8Array, DataError> =>
    Effect.suspend(() => {
      const relative = source.folder === undefined || source.folder === "" ? file.path : join(source.folder, file.path)
      const path = resolve(root, relative)
      const fail = (reason: DataError["reason"], detail: string) => Effect.fail(new DataError({ benchmark: source.benchmark, file: path, reason, detail }))
      let read: { readonly bytes: Buffer; readonly state: string | undefined; readonly noted: string | undefined }
      try {
        const state = DataRoot.fileState(path)
        read = { bytes: readFileSync(path), state, noted: DataRoot.notedSha256(path) }
      } catch {
        return fail("missing", DataRoot.missingDataMessage(source.benchmark, source.pull ?? "download", path, root))
      }
      // A large file hashed before in exactly its present state is not hashed again.
      const unchanged = read.noted === file.sha256 && DataRoot.fileState(path) === read.state
      const actual = unchanged ? file.sha256 : createHash("sha256").update(read.bytes).digest("hex")
      if (actual !== file.sha256) {
        return fail(
          "hash-mismatch",
          `${path} has sha256 ${actual}, expected the pinned ${file.sha256}: run ${DataRoot.pullCommand(source.benchmark, source.pull ?? "download")} to put the pinned file in place`
        )
      }
      if (!unchanged && read.bytes.length >= NOTED_SIZE) DataRoot.noteSha256(path, actual, read.state)
      return Effect.succeed(read.bytes)
    })
  return { root, bytes, text: (source, file) => Effect.map(bytes(source, file), textOf) }
}

/** The reader of the folder `ASSAY_DATA_DIR` names (else the user's cache folder). */
export const layer: Layer.Layer<PinnedData> = Layer.effect(
  PinnedData,
  Effect.map(Effect.orDie(DataRoot.dataRootConfig), make)
)

/** The reader of a given folder (tests, `--from` checks). */
export const layerAt = (root: string): Layer.Layer<PinnedData> => Layer.succeed(PinnedData, make(root))

/** A file the provider cannot use although its bytes are the pinned ones. */
export const invalid = (source: Source, file: string, detail: string): DataError =>
  new DataError({ benchmark: source.benchmark, file, reason: "invalid", detail: `${file} is not what ${source.benchmark}'s loader accepts: ${detail}` })
