/**
 * A tau2 domain's pinned upstream files, read through the kit's one reader (PinnedData,
 * src/data/Pinned.ts): each file's sha256 checked against the value recorded in the domain's
 * `data.ts`, and one `DataError` (with its `reason`) for every domain.
 */
import { Effect } from "effect"
import { type Benchmark, DataRoot, PinnedData } from "../../../src/index.ts"

/** The upstream repository, and the revision every tau2 domain's files are pinned at. */
export const upstreamRepository = "sierra-research/tau2-bench"
export const upstreamRevision = "a2c024725189473d2d7cea3a5cfdbcc67478e41f"

export interface PinnedFile {
  /** Path under the domain's data folder (see the domain's `FileReader` prefix). */
  readonly name: string
  /** Where `assay data pull` fetches it; null for files generated from upstream code (no upstream blob). */
  readonly url: string | null
  readonly sha256: string
}

/** The data root: `dataDir` when given, else `ASSAY_DATA_DIR` or the default (src/evaluation/DataRoot.ts). */
export const dataRoot = (dataDir?: string): string => dataDir ?? DataRoot.dataRoot()

/** A file of upstream's repository at the pinned revision (or `revision`), as a raw URL. */
export const upstreamUrl = (path: string, revision: string = upstreamRevision): string =>
  `https://raw.githubusercontent.com/${upstreamRepository}/${revision}/${path}`

/** A domain's view of the reader: its files as its `data.ts` names them. */
export interface FileReader {
  /** The file's text, its sha256 checked. */
  readonly text: (file: PinnedFile) => Effect.Effect<string, PinnedData.DataError>
  /** The file's bytes, its sha256 checked (for a reader that decodes only the parts it needs). */
  readonly bytes: (file: PinnedFile) => Effect.Effect<Uint8Array, PinnedData.DataError>
  /** The error of a pinned file upstream's loader would refuse. */
  readonly invalid: (file: PinnedFile | string, detail: string) => PinnedData.DataError
}

/**
 * The files through the kit's reader (paths under the data root; `prefix` is the folder the
 * domain's names are relative to, e.g. "tau2/").
 */
export const filesOf = (read: Benchmark.Reader, prefix = ""): FileReader => ({
  text: (file) => read.text(prefix + file.name),
  bytes: (file) => read.bytes(prefix + file.name),
  invalid: (file, detail) => read.invalid(typeof file === "string" ? file : prefix + file.name, detail)
})

/**
 * The same reader over a given data folder (the data root unless given): what tests, the bench
 * and `assay equivalence` read through, outside the provider.
 */
export const filesAt = (benchmark: string, dataDir?: string, prefix = ""): FileReader => {
  const source: PinnedData.Source = { benchmark, pull: "download" }
  const service = PinnedData.make(dataRoot(dataDir))
  return {
    text: (file) => service.text(source, { path: prefix + file.name, sha256: file.sha256 }),
    bytes: (file) => service.bytes(source, { path: prefix + file.name, sha256: file.sha256 }),
    invalid: (file, detail) => PinnedData.invalid(source, typeof file === "string" ? file : prefix + file.name, detail)
  }
}

/** A file's bytes as a Buffer (no copy): the DB parsers take one. */
export const bufferOf = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))

/** The bytes' UTF-8 text (PinnedData's: ASCII bytes copied as Latin-1, without decoding). */
export const textOf = (bytes: Uint8Array): string => PinnedData.textOf(bytes)
