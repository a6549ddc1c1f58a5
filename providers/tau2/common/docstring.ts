/**
 * Docstrings as tau2-bench reads them to describe a tool: `inspect.cleandoc` and the parse of the
 * `docstring_parser` package (its automatic style: the style with the most sections wins, ReST
 * first on a tie), of which upstream uses the short and long description and each argument's
 * description. Google style is read in full; the other styles only as far as telling that they
 * have no sections, and a docstring written in one of them is refused rather than misread.
 */
import { Either } from "effect"
import { pyLstrip, pyStrip } from "./pythonSource.ts"

/** Python's `inspect.cleandoc` (3.11). */
export const cleandoc = (doc: string): string => {
  const lines = doc.split("\n").map(expandTabs)
  let margin = Infinity
  for (const line of lines.slice(1)) {
    const content = pyLstrip(line).length
    if (content > 0) margin = Math.min(margin, line.length - content)
  }
  if (lines.length > 0) lines[0] = pyLstrip(lines[0]!)
  if (margin < Infinity) for (let i = 1; i < lines.length; i++) lines[i] = lines[i]!.slice(margin)
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
  while (lines.length > 0 && lines[0] === "") lines.shift()
  return lines.join("\n")
}

const expandTabs = (line: string): string => {
  if (!line.includes("\t")) return line
  let out = ""
  for (const c of line) out += c === "\t" ? " ".repeat(8 - (out.length % 8)) : c
  return out
}


export interface Docstring {
  readonly shortDescription: string | null
  readonly longDescription: string | null
  /** Each argument's description, by name. */
  readonly params: ReadonlyMap<string, string>
}

const SECTIONS: ReadonlyArray<readonly [string, "param" | "raises" | "attribute" | "examples" | "returns" | "yields", "multiple" | "singular" | "either"]> = [
  ["Arguments", "param", "multiple"],
  ["Args", "param", "multiple"],
  ["Parameters", "param", "multiple"],
  ["Params", "param", "multiple"],
  ["Raises", "raises", "multiple"],
  ["Exceptions", "raises", "multiple"],
  ["Except", "raises", "multiple"],
  ["Attributes", "attribute", "multiple"],
  ["Example", "examples", "singular"],
  ["Examples", "examples", "singular"],
  ["Returns", "returns", "either"],
  ["Yields", "yields", "either"]
]
const TITLES = new RegExp("^(" + SECTIONS.map(([t]) => `(${t})`).join("|") + "):[ \\t\\r\\f\\v]*$", "gm")
const TYPED_ARG = /^\s*(.+?)\s*\(\s*(.*[^\s]+)\s*\)/

/** The description before the first section, split as both parsers split it. */
const descriptions = (chunk: string): Pick<Docstring, "shortDescription" | "longDescription"> => {
  const cut = chunk.indexOf("\n")
  const short = cut < 0 ? chunk : chunk.slice(0, cut)
  const long = cut < 0 ? null : pyStrip(chunk.slice(cut + 1))
  return { shortDescription: short === "" ? null : short, longDescription: long === null || long === "" ? null : long }
}

/** docstring_parser's Google parser: the docstring and its number of sections' entries (its `meta`). */
const google = (text: string): Either.Either<{ readonly doc: Docstring; readonly meta: number }, string> => {
  const titles = [...text.matchAll(TITLES)]
  const first = titles[0]
  const desc = descriptions(first === undefined ? text : text.slice(0, first.index))
  const params = new Map<string, string>()
  if (first === undefined) return Either.right({ doc: { ...desc, params }, meta: 0 })
  const meta = text.slice(first.index)
  const found = [...meta.matchAll(TITLES)]
  // Later chunks of the same title replace the text but keep the first one's place.
  const chunks = new Map<string, string>()
  found.forEach((m, j) => {
    const end = j + 1 < found.length ? found[j + 1]!.index : meta.length
    let details = meta.slice(m.index + m[0].length, end)
    const unknown = /\n\S/u.exec(details)
    if (unknown !== null) details = details.slice(0, unknown.index)
    chunks.set(m[1]!, details.replace(/^\n+|\n+$/g, ""))
  })
  let count = 0
  for (const [title, chunk] of chunks) {
    const [, key, type] = SECTIONS.find(([t]) => t === title)!
    const indent = /^\s*/u.exec(chunk)![0]
    if (type !== "multiple") {
      // One entry, whatever its text (upstream reads no returns or examples).
      count++
      continue
    }
    const starts = [...chunk.matchAll(new RegExp("^" + escapeRegExp(indent) + "(?=\\S)", "gmu"))]
    if (starts.length === 0) return Either.left(`no specification for "${title}"`)
    for (let j = 0; j < starts.length; j++) {
      const start = starts[j]!.index + starts[j]![0].length
      const end = j + 1 < starts.length ? starts[j + 1]!.index : chunk.length
      const part = chunk.slice(start, end).replace(/^\n+|\n+$/g, "")
      const colon = part.indexOf(":")
      if (colon < 0) return Either.left(`expected a colon in ${JSON.stringify(part)}`)
      let before = part.slice(0, colon)
      let description = part.slice(colon + 1)
      if (before.includes("\n")) {
        const nl = before.indexOf("\n")
        before = before.slice(0, nl) + cleandoc(before.slice(nl + 1))
      }
      if (description !== "") {
        if (description[0] === " ") description = description.slice(1)
        const nl = description.indexOf("\n")
        if (nl >= 0) description = description.slice(0, nl) + "\n" + cleandoc(description.slice(nl + 1))
        description = description.replace(/^\n+|\n+$/g, "")
      }
      if (key === "param") {
        const typed = TYPED_ARG.exec(before)
        params.set(typed === null ? before : typed[1]!, description)
      }
      count++
    }
  }
  return Either.right({ doc: { ...desc, params }, meta: count })
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** `docstring_parser.parse(text)` as upstream's tools read it. */
export const parseDocstring = (raw: string | null): Either.Either<Docstring, string> => {
  if (raw === null || raw === "") return Either.right({ shortDescription: null, longDescription: null, params: new Map() })
  const text = cleandoc(raw)
  // ReST, numpydoc and epydoc sections: refused, not read (upstream's tools are written in Google style).
  if (/^:/m.test(text)) return Either.left("a ReST field list (a line starting with ':') is not read")
  if (/^@/m.test(text)) return Either.left("an epydoc field (a line starting with '@') is not read")
  if (/^\s*\S.*\n\s*-{3,}\s*$/m.test(text)) return Either.left("a numpydoc section (a title underlined with dashes) is not read")
  // Google's parse fails (an entry without a colon) or finds no sections: ReST's parse is the one
  // chosen then, which here is the whole text as description and no arguments.
  const rest: Docstring = { ...descriptions(text), params: new Map() }
  return Either.right(Either.match(google(text), { onLeft: () => rest, onRight: ({ doc, meta }) => (meta === 0 ? rest : doc) }))
}
