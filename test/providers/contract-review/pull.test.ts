import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { sha256Hex } from "../../../src/content/ContentId.ts"
import { dataRoot } from "../../../src/evaluation/DataRoot.ts"
import { clauseTypes } from "../../../providers/contract-review/data.ts"
import {
  csvPath,
  data,
  deriveGold,
  derived,
  devContracts,
  goldPath,
  parseCsv,
  parsePyStringList,
  pythonJsonDumps,
  textPath
} from "../../../providers/contract-review/upstream.ts"

const root = dataRoot()
const bytesAt = (path: string): Uint8Array => new Uint8Array(readFileSync(join(root, path)))
const csvThere = existsSync(join(root, csvPath))
/** Why the real-CSV test is skipped, and how to run it (the data folder here holds the gold but not the CSV it is derived from). */
const csvMissing = csvThere
  ? ""
  : ` [skipped: ${join(root, csvPath)} is not in the data folder (the shared copy holds the gold derived from it, not the CSV); ` +
    "to run it, `assay data pull contract-review` into a folder (or put the CSV pinned in providers/contract-review/upstream.ts there) and set ASSAY_DATA_DIR to it]"

// ---------------------------------------------------------------------------------------------
// Writing CUAD's CSV back from the gold, as pandas and Python wrote it: each span list is the
// repr() of a Python list of str, each field quoted when it holds `,`, `"` or a line break.

const pyRepr = (s: string): string => {
  const quote = s.includes("'") && !s.includes("\"") ? "\"" : "'"
  let out = quote
  for (const ch of s) {
    const code = ch.codePointAt(0)!
    if (ch === "\\") out += "\\\\"
    else if (ch === quote) out += `\\${quote}`
    else if (ch === "\n") out += "\\n"
    else if (ch === "\r") out += "\\r"
    else if (ch === "\t") out += "\\t"
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`
    else if (code === 0x200b) out += "\\u200b" // not printable to Python: repr escapes it
    else out += ch
  }
  return out + quote
}
const pyList = (xs: ReadonlyArray<string>): string => `[${xs.map(pyRepr).join(", ")}]`
const csvField = (s: string): string => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, "\"\"")}"` : s)

interface GoldJson {
  readonly source_csv_filename: string
  readonly clauses: Readonly<Record<string, { readonly answer: string; readonly spans: ReadonlyArray<{ readonly text: string }> }>>
}

/** A CSV in master_clauses.csv's shape (other columns and rows beside) holding what the gold files say. */
const csvFromGold = (golds: ReadonlyArray<GoldJson>): string => {
  const header = ["Filename", "Document Name", "Document Name-Answer", ...clauseTypes.flatMap((t) => [t, `${t}-Answer`])]
  const rows = golds.map((g) => [
    g.source_csv_filename,
    pyList(["AGREEMENT, \"quoted\""]),
    "Agreement",
    ...clauseTypes.flatMap((t) => [pyList(g.clauses[t]!.spans.map((s) => s.text)), g.clauses[t]!.answer])
  ])
  const other = ["OTHER_CONTRACT.pdf", "[]", "", ...clauseTypes.flatMap(() => ["['Line one\\nline two, with \\'quotes\\'']", "Yes"])]
  return [header, other, ...rows].map((r) => r.map(csvField).join(",")).join("\r\n") + "\r\n"
}

describe("contract-review's pull derives the gold from CUAD's CSV", () => {
  it("pins the CSV and the eight texts by URL at the copy SOURCE.md names, and the eight gold files by sha256", () => {
    expect(data.map((f) => f.path)).toEqual([csvPath, ...devContracts.map((c) => textPath(c.id))])
    for (const f of data) {
      expect(f.url).toMatch(/^https:\/\/raw\.githubusercontent\.com\/maastrichtlawtech\/law3027-advanced-legal-analytics\/77c8f5a3cc2e6e5e3793b43f84a3bc097a414f9e\/data\/CUAD_v1\//)
    }
    expect(data[1]!.url).toContain("full_contract_txt/AMERICASSHOPPINGMALLINC_12_10_1999-EX-10.2-SITE%20DEVELOPMENT%20AND%20HOSTING%20AGREEMENT.txt")
    expect(derived.files.map((f) => f.path)).toEqual(devContracts.map((c) => goldPath(c.id)))
    // The shared copy's texts and gold are the pinned bytes.
    for (const f of [...data.slice(1), ...derived.files]) expect(sha256Hex(bytesAt(f.path)), f.path).toBe(f.sha256)
  })

  // CI has the data (../shared/data): there a missing CSV fails rather than skips.
  it.skipIf(!csvThere && process.env["CI"] === undefined)(`reproduces every gold file byte for byte from the upstream CSV (${join(root, csvPath)})${csvMissing}`, () => {
    expect(csvThere, `${join(root, csvPath)} is missing`).toBe(true)
    const made = Either.getOrThrow(deriveGold(bytesAt))
    expect(sha256Hex(bytesAt(csvPath))).toBe(data[0]!.sha256)
    for (const c of devContracts) {
      expect(Buffer.from(made.get(goldPath(c.id))!).toString("utf8"), c.id).toBe(readFileSync(join(root, goldPath(c.id)), "utf8"))
    }
  })

  it("reproduces every gold file byte for byte from a CSV holding what the gold says (quotes, commas, line breaks, escapes)", () => {
    const golds = devContracts.map((c) => JSON.parse(readFileSync(join(root, goldPath(c.id)), "utf8")) as GoldJson)
    const csv = new TextEncoder().encode(csvFromGold(golds))
    const made = Either.getOrThrow(deriveGold((path) => (path === csvPath ? csv : bytesAt(path))))
    for (const c of devContracts) {
      const ours = made.get(goldPath(c.id))!
      expect(Buffer.from(ours).toString("utf8"), c.id).toBe(readFileSync(join(root, goldPath(c.id)), "utf8"))
      expect(sha256Hex(ours)).toBe(c.goldSha256)
    }
  })

  it("reads Python list literals as ast.literal_eval does", () => {
    expect(Either.getOrThrow(parsePyStringList("[]"))).toEqual([])
    expect(Either.getOrThrow(parsePyStringList("['a', \"it's\", 'say \\'hi\\'', 'back\\\\slash']"))).toEqual(["a", "it's", "say 'hi'", "back\\slash"])
    expect(Either.getOrThrow(parsePyStringList("['x\\ny\\tz', '\\x0c\\u200b\\U0001F600', '\\101']"))).toEqual(["x\ny\tz", "\f\u200b\u{1F600}", "A"])
    expect(Either.isLeft(parsePyStringList("['unterminated]"))).toBe(true)
    expect(Either.isLeft(parsePyStringList("['a'] extra"))).toBe(true)
  })

  it("reads CSV as Python's csv module does: quoted fields with commas, doubled quotes and line breaks", () => {
    expect(Either.getOrThrow(parseCsv("a,b\r\n\"x, \"\"y\"\"\",\"line\nbreak\"\n,last\n"))).toEqual([["a", "b"], ["x, \"y\"", "line\nbreak"], ["", "last"]])
  })

  it("writes JSON as json.dumps(indent=2): non-ASCII escaped", () => {
    expect(pythonJsonDumps({ a: ["®", 1], b: [] })).toBe('{\n  "a": [\n    "\\u00ae",\n    1\n  ],\n  "b": []\n}')
  })

  it("a CSV row that does not match its text is an error naming the contract", () => {
    const golds = devContracts.map((c) => JSON.parse(readFileSync(join(root, goldPath(c.id)), "utf8")) as GoldJson)
    const broken = csvFromGold(golds).replace("Either party may terminate this Agreement at any time", "Neither party may terminate")
    const result = deriveGold((path) => (path === csvPath ? new TextEncoder().encode(broken) : bytesAt(path)))
    expect(Either.isLeft(result) && result.left).toMatch(/ORBSATCORP.*Termination For Convenience: a span does not occur in cuad\/contracts\/orbsat-strategic-alliance\.txt/)
  })
})
