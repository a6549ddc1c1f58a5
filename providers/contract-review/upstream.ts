/**
 * The pinned upstream files of the case set and the gold derived from them, as
 * `../shared/data/cuad/SOURCE.md` ("How the gold was derived") describes: CUAD v1's
 * `master_clauses.csv` and the eight dev contract texts, from the copy of `CUAD_v1.zip`'s contents
 * in `maastrichtlawtech/law3027-advanced-legal-analytics` at a pinned commit.
 *
 * For each contract and clause type `T`, column `T` of its CSV row is a Python-literal list of the
 * annotated strings and `T-Answer` the answer; each string is one span, its offsets an exact
 * `str.find` in the decoded text (code points). The gold file is that record as Python's
 * `json.dumps(indent=2)` writes it, plus a newline. `assay data pull contract-review` derives it and
 * checks each file against the sha256 pinned here.
 */
import { Effect, Either } from "effect"
import { type Benchmark, ContentId, DataRoot, PinnedData, type Provider } from "../../src/index.ts"
import { type Case, caseOf, clauseTypes } from "./data.ts"

export const UPSTREAM_REPOSITORY = "maastrichtlawtech/law3027-advanced-legal-analytics"
export const UPSTREAM_COMMIT = "77c8f5a3cc2e6e5e3793b43f84a3bc097a414f9e"
const CSV_PATH = "data/CUAD_v1/master_clauses.csv"
const TEXT_FOLDER = "data/CUAD_v1/full_contract_txt"

const rawUrl = (path: string): string =>
  `https://raw.githubusercontent.com/${UPSTREAM_REPOSITORY}/${UPSTREAM_COMMIT}/${path.split("/").map(encodeURIComponent).join("/")}`

/** One dev contract: its short id, its names upstream, and the sha256 of its text and of its gold file. */
export interface DevContract {
  readonly id: string
  /** The text file's name in `full_contract_txt/`. */
  readonly sourceFile: string
  /** The CSV `Filename` (the PDF's name). */
  readonly csvFilename: string
  readonly textSha256: string
  readonly goldSha256: string
}

const contract = (id: string, stem: string, pdf: ".pdf" | ".PDF", textSha256: string, goldSha256: string): DevContract => ({
  id,
  sourceFile: `${stem}.txt`,
  csvFilename: `${stem}${pdf}`,
  textSha256,
  goldSha256
})

/** The eight dev contracts (SOURCE.md, "Dev contracts"), by id. */
export const devContracts: ReadonlyArray<DevContract> = [
  contract("americasshoppingmall-hosting", "AMERICASSHOPPINGMALLINC_12_10_1999-EX-10.2-SITE DEVELOPMENT AND HOSTING AGREEMENT", ".PDF",
    "800a8e3e69cecab83863c1f6ff97587419bd873245d7f98b59e460a747f03228", "4930d502bd4449831f6a705bbe73ef19d39734c1bc5c80a6093128f68c15c6aa"),
  contract("dynamex-transportation", "DYNAMEXINC_06_06_1996-EX-10.4-TRANSPORTATION SERVICES AGREEMENT", ".PDF",
    "b78b65221c6ae786e6c1274ca932d7a5ffef078da4d94d0b6617db6028764e96", "ad05eed2a7b56075ec2edb6881eca187a4c1b61e1b43a2e006e6591019fe8c63"),
  contract("glumobile-content-license-2", "GluMobileInc_20070319_S-1A_EX-10.09_436630_EX-10.09_Content License Agreement2", ".pdf",
    "ab313de5385c0998e3242d39c567f21c4297e4f1c9eafbda33998f330deda36c", "b69215e742bf9002f8a2d2aec639188f436ed3367c772daf8dca049bf7acf423"),
  contract("healthcentral-cobranding", "HealthcentralCom_19991108_S-1A_EX-10.27_6623292_EX-10.27_Co-Branding Agreement", ".pdf",
    "d4402382bb26ede59c4ba8f382d8fa23b6f815bc9fcd914181368d1e1e5aee73", "f42b360fada37350ef8279bd3da2be75ad0b92804fd5d9978b05b1adda20f660"),
  contract("hfenterprises-development", "HfEnterprisesInc_20191223_S-1_EX-10.22_11931299_EX-10.22_Development Agreement", ".pdf",
    "6c0d2d0e9da5975f82e5ab81cc2990cd20e41b5d75f389fd020247b2535eff18", "53e1bf030098d86ebff951e01efb3da79a0760c17770b8148145ec7a412453fe"),
  contract("orbsat-strategic-alliance", "ORBSATCORP_08_17_2007-EX-7.3-STRATEGIC ALLIANCE AGREEMENT", ".PDF",
    "bd707d51c1651939248b235e4a8903ad603134d00ab10d4dd8caf5473c81c6f3", "9a463ad03f935a64f889e28da7f09b3d5a38d286a624f597d0459a3574605ca9"),
  contract("virtuososurgical-license", "VirtuosoSurgicalInc_20191227_1-A_EX1A-6 MAT CTRCT_11933379_EX1A-6 MAT CTRCT_License Agreement", ".pdf",
    "f430f627738934e99e4ef645a86b95ed73b39f8c586b3c754a56400783256792", "3eda09e6c257739903b12500162d3dd47922eb67fed3927485605cd2a499b129"),
  contract("zondwind-maintenance-amendment", "ZONDWINDSYSTEMPARTNERSLTDSERIES85-B_04_03_2006-EX-10-MANAGEMENT AND MAINTENANCE AGREEMENT", ".PDF",
    "c94676ada8fc7266325de382be5a9344950f52e6ae5eef5f9cdc8cbb49a6dbae", "3506f85d684006305b24787ba7bd9de3333bc8cb49567a3944b980d7d072b2d8")
]

/** Where the files go under the data root. */
export const csvPath = "cuad/master_clauses.csv"
export const textPath = (id: string): string => `cuad/contracts/${id}.txt`
export const goldPath = (id: string): string => `cuad/gold/${id}.json`

/** What `assay data pull contract-review` fetches: the CSV (only to derive the gold) and the eight texts, renamed to their ids. */
export const data: ReadonlyArray<Provider.PinnedFile> = [
  {
    path: csvPath,
    url: rawUrl(CSV_PATH),
    sha256: "4da237bec677bf5b02212d523857cd57a801adde60e8021de063c8cc06823720",
    derivationInput: true
  },
  ...devContracts.map((c) => ({ path: textPath(c.id), url: rawUrl(`${TEXT_FOLDER}/${c.sourceFile}`), sha256: c.textSha256 }))
]

// ---------------------------------------------------------------------------------------------
// Reading the CSV (Python's csv module, default dialect)

/** The rows of a CSV text: `,` between fields, `"` around a field that holds `,`, `"` (doubled) or a line break. */
export const parseCsv = (text: string): Either.Either<ReadonlyArray<ReadonlyArray<string>>, string> => {
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let field = ""
  let i = 0
  const n = text.length
  while (i < n) {
    const c = text[i]!
    if (c === "\"" && field === "") {
      // A quoted field: up to the lone closing quote, then more unquoted text may follow (as csv does).
      i++
      for (;;) {
        if (i >= n) return Either.left(`unterminated quoted field in row ${rows.length + 1}`)
        const q = text[i]!
        if (q === "\"") {
          if (text[i + 1] === "\"") {
            field += "\""
            i += 2
            continue
          }
          i++
          break
        }
        field += q
        i++
      }
      continue
    }
    if (c === ",") {
      row.push(field)
      field = ""
      i++
      continue
    }
    if (c === "\n" || c === "\r") {
      row.push(field)
      rows.push(row)
      row = []
      field = ""
      i += c === "\r" && text[i + 1] === "\n" ? 2 : 1
      continue
    }
    field += c
    i++
  }
  if (field !== "" || row.length > 0) {
    row.push(field)
    rows.push(row)
  }
  return Either.right(rows)
}

// ---------------------------------------------------------------------------------------------
// Reading a column's span list (what `ast.literal_eval` reads: a Python list of str literals)

const simpleEscapes: Readonly<Record<string, string>> = {
  "\\": "\\", "'": "'", "\"": "\"", n: "\n", r: "\r", t: "\t", a: "\x07", b: "\b", f: "\f", v: "\v", "\n": ""
}

/** A Python list of string literals, e.g. `['a', "b's"]`, as the strings. */
export const parsePyStringList = (literal: string): Either.Either<ReadonlyArray<string>, string> => {
  let i = 0
  const n = literal.length
  const ws = () => {
    while (i < n && /\s/.test(literal[i]!)) i++
  }
  const hex = (len: number): number | undefined => {
    const digits = literal.slice(i, i + len)
    if (digits.length !== len || !/^[0-9a-fA-F]+$/.test(digits)) return undefined
    i += len
    return parseInt(digits, 16)
  }
  const str = (): Either.Either<string, string> => {
    const quote = literal[i]
    if (quote !== "'" && quote !== "\"") return Either.left(`a string literal expected at ${i}`)
    i++
    let out = ""
    for (;;) {
      if (i >= n) return Either.left("unterminated string literal")
      const c = literal[i]!
      if (c === quote) {
        i++
        return Either.right(out)
      }
      if (c !== "\\") {
        out += c
        i++
        continue
      }
      const e = literal[i + 1]
      i += 2
      if (e === undefined) return Either.left("a lone backslash at the end")
      const simple = simpleEscapes[e]
      if (simple !== undefined) out += simple
      else if (e === "x" || e === "u" || e === "U") {
        const code = hex(e === "x" ? 2 : e === "u" ? 4 : 8)
        if (code === undefined || code > 0x10ffff) return Either.left(`a bad \\${e} escape at ${i}`)
        out += String.fromCodePoint(code)
      } else if (/[0-7]/.test(e)) {
        let digits = e
        while (digits.length < 3 && /[0-7]/.test(literal[i] ?? "")) digits += literal[i++]
        out += String.fromCodePoint(parseInt(digits, 8))
      } else out += `\\${e}` // Python keeps an unknown escape as written
    }
  }
  ws()
  if (literal[i] !== "[") return Either.left("not a list literal")
  i++
  const items: Array<string> = []
  ws()
  while (literal[i] !== "]") {
    const s = str()
    if (Either.isLeft(s)) return Either.left(s.left)
    items.push(s.right)
    ws()
    if (literal[i] === ",") {
      i++
      ws()
    } else if (literal[i] !== "]") return Either.left(`"," or "]" expected at ${i}`)
  }
  i++
  ws()
  return i === n ? Either.right(items) : Either.left(`text after the list at ${i}`)
}

// ---------------------------------------------------------------------------------------------
// The gold record, written as Python's json.dumps(indent=2) writes it

/** `json.dumps(value, indent=2)`: JSON.stringify's layout is the same; ensure_ascii escapes what is not printable ASCII. */
export const pythonJsonDumps = (value: unknown): string =>
  JSON.stringify(value, null, 2).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

const decodeUtf8 = (bytes: Uint8Array): Either.Either<string, string> =>
  Either.try({
    // ignoreBOM keeps a leading U+FEFF in the text, as Python's str does.
    try: () => new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes),
    catch: () => "not valid UTF-8"
  })

const codePoints = (s: string): number => {
  let count = 0
  for (const _ of s) count++
  return count
}

/** The gold file of one contract from its CSV row (by column name) and its text's bytes. */
export const goldFileOf = (
  c: DevContract,
  row: ReadonlyMap<string, string>,
  textBytes: Uint8Array
): Either.Either<string, string> =>
  Either.gen(function*() {
    const text = yield* decodeUtf8(textBytes).pipe(Either.mapLeft((e) => `${textPath(c.id)}: ${e}`))
    const clauses: Record<string, unknown> = {}
    for (const type of clauseTypes) {
      const column = row.get(type)
      const answer = row.get(`${type}-Answer`)
      if (column === undefined || answer === undefined) return yield* Either.left(`the CSV has no column "${type}" or "${type}-Answer"`)
      const strings = yield* parsePyStringList(column).pipe(Either.mapLeft((e) => `${c.csvFilename}, column "${type}": ${e}`))
      const spans: Array<unknown> = []
      for (const s of strings) {
        const at = text.indexOf(s)
        if (at < 0) return yield* Either.left(`${c.csvFilename}, ${type}: a span does not occur in ${textPath(c.id)}`)
        const start = codePoints(text.slice(0, at))
        spans.push({ text: s, start, end: start + codePoints(s), normalized: false })
      }
      clauses[type] = { present: spans.length > 0, answer, spans }
    }
    const record = {
      id: c.id,
      split: "dev",
      source_file: c.sourceFile,
      source_csv_filename: c.csvFilename,
      source: { repo: UPSTREAM_REPOSITORY, commit: UPSTREAM_COMMIT, text_path: `${TEXT_FOLDER}/${c.sourceFile}`, csv_path: CSV_PATH },
      text_file: `contracts/${c.id}.txt`,
      text_sha256: ContentId.sha256Hex(textBytes),
      text_bytes: textBytes.length,
      text_chars: codePoints(text),
      offset_unit: "unicode_code_points",
      clause_types: clauseTypes,
      clauses
    }
    return `${pythonJsonDumps(record)}\n`
  })

/** Every dev contract's gold file from the CSV and the texts (by path under the data root). */
export const deriveGold = (read: (path: string) => Uint8Array): Either.Either<ReadonlyMap<string, Uint8Array>, string> =>
  Either.gen(function*() {
    const csv = yield* decodeUtf8(read(csvPath)).pipe(Either.mapLeft((e) => `${csvPath}: ${e}`))
    const rows = yield* parseCsv(csv).pipe(Either.mapLeft((e) => `${csvPath}: ${e}`))
    const [header, ...body] = rows
    if (header === undefined) return yield* Either.left(`${csvPath} is empty`)
    const filenameColumn = header.indexOf("Filename")
    if (filenameColumn < 0) return yield* Either.left(`${csvPath} has no Filename column`)
    const out = new Map<string, Uint8Array>()
    for (const c of devContracts) {
      const found = body.find((r) => r[filenameColumn] === c.csvFilename)
      if (found === undefined) return yield* Either.left(`${csvPath} has no row for ${c.csvFilename}`)
      const row = new Map(header.map((name, i) => [name, found[i] ?? ""]))
      const gold = yield* goldFileOf(c, row, read(textPath(c.id)))
      out.set(goldPath(c.id), new TextEncoder().encode(gold))
    }
    return out
  })

/** The gold files the pull derives, with their pinned sha256. */
export const derived: Provider.DerivedData = {
  files: devContracts.map((c) => ({ path: goldPath(c.id), sha256: c.goldSha256 })),
  derive: deriveGold
}

// ---------------------------------------------------------------------------------------------
// The case set, through the kit's reader

/**
 * The eight dev contracts with their gold, in id order: each gold file and text read against its
 * pinned sha256, then checked against each other (data.ts `caseOf`).
 */
export const loadCases = (read: Benchmark.Reader): Effect.Effect<ReadonlyArray<Case>, PinnedData.DataError> =>
  Effect.forEach([...devContracts].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)), (c) =>
    Effect.gen(function*() {
      const gold = yield* read.text(goldPath(c.id))
      const text = yield* read.bytes(textPath(c.id))
      return yield* Either.match(caseOf(c.id, gold, text), {
        onLeft: (detail) => Effect.fail(read.invalid(goldPath(c.id), detail)),
        onRight: Effect.succeed
      })
    }))

const pinnedByPath = new Map([...data, ...derived.files].map((f) => [f.path, f]))

/**
 * The reader of the case set's files in the data folder `root` (the data root by default), as the
 * kit gives it to the provider: for the bench and tests, which name a folder.
 */
export const readerAt = (root: string = DataRoot.dataRoot()): Benchmark.Reader => {
  const service = PinnedData.make(root)
  const source: PinnedData.Source = { benchmark: "contract-review" }
  const pinned = (path: string) => {
    const file = pinnedByPath.get(path)
    return file === undefined ? Effect.fail(PinnedData.invalid(source, path, "it is not among contract-review's pinned files")) : Effect.succeed(file)
  }
  return {
    text: (path) => Effect.flatMap(pinned(path), (file) => service.text(source, file)),
    bytes: (path) => Effect.flatMap(pinned(path), (file) => service.bytes(source, file)),
    invalid: (path, detail) => PinnedData.invalid(source, path, detail)
  }
}
