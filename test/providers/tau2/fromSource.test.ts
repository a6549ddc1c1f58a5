import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Either } from "effect"
import { provider as airline } from "../../../providers/tau2/airline/index.ts"
import { provider as banking } from "../../../providers/tau2/banking/index.ts"
import { cleandoc, parseDocstring } from "../../../providers/tau2/common/docstring.ts"
import { renderingFor } from "../../../providers/tau2/common/fromSource.ts"
import { renderings as bankingRenderings } from "../../../providers/tau2/banking/upstream.ts"
import { retailTools } from "../../../providers/tau2/retail/upstream.ts"
import { renderings as telecomRenderings } from "../../../providers/tau2/telecom/upstream.ts"
import { upstreamRevision } from "../../../providers/tau2/common/pinned.ts"
import { parseModule, stringConstant } from "../../../providers/tau2/common/pythonSource.ts"
import { fieldTitle, renderToolFiles } from "../../../providers/tau2/common/toolSchema.ts"
import { provider as retail } from "../../../providers/tau2/retail/index.ts"
import { provider as telecom } from "../../../providers/tau2/telecom/index.ts"

const fixtures = join(import.meta.dirname, "fixtures")
const fixture = (name: string) => readFileSync(join(fixtures, name), "utf8")

describe("tau2 files made from upstream's Python source", () => {
  it("a toolkit's tools.json and tools-types.json are byte for byte what upstream's code and pydantic make of it", () => {
    // fixtures/toolkit.py is this repository's own toolkit, one of each construct the renderer follows.
    // The two .json files beside it were made by running upstream's src/tau2/environment/tool.py and
    // toolkit.py (pydantic 2.13.4, docstring_parser 0.18) on it: `[t.openai_schema for t in
    // kit.get_tools().values()]` and the tool types, each `json.dumps(..., indent=2)` and a newline.
    const r = renderToolFiles([{ file: "toolkit.py", text: fixture("toolkit.py") }], "ShippingKit")
    expect(Either.isRight(r), Either.isLeft(r) ? r.left : "").toBe(true)
    if (Either.isLeft(r)) return
    expect(r.right.tools).toBe(fixture("toolkit.tools.json"))
    expect(r.right.types).toBe(fixture("toolkit.tools-types.json"))
    // What that pins, said plainly: own tools first, then the base's; the discoverable one is not offered.
    const names = (JSON.parse(r.right.tools) as Array<{ function: { name: string } }>).map((t) => t.function.name)
    expect(names).toEqual(["send", "undocumented", "cancel", "note", "count", "track"])
  })

  it("a type the renderer does not follow is refused with its name, never guessed", () => {
    const src = `class Kit(ToolKitBase):\n    @is_tool(ToolType.READ)\n    def f(self, when: datetime) -> str:\n        """Do it."""\n        return ""\n`
    const r = renderToolFiles([{ file: "kit.py", text: src }], "Kit")
    expect(r).toEqual(Either.left("Kit: the type datetime is not defined in the pinned sources"))
    const bad = renderToolFiles([{ file: "kit.py", text: "class Kit:\n  def f(self:\n" }], "Kit")
    expect(Either.isLeft(bad) && bad.left.startsWith("kit.py:")).toBe(true)
  })

  it("string constants read as Python reads them: .strip(), adjacent literals, escapes, raw strings; an f-string is no constant", () => {
    const src = [
      `A = """`,
      `  first line`,
      `second\\tline`,
      `""".strip()`,
      `B = ("one "`,
      `     'two' r"\\n")`,
      `C = f"{A}"`,
      `D = "caf\\u00e9 \\x41\\101\\q"`,
      `def later():`,
      `    A = "inside a function: not the module's"`,
      ``
    ].join("\n")
    const body = Either.getOrThrow(parseModule("m.py", src))
    expect(stringConstant(body, "A")).toEqual({ value: "first line\nsecond\tline", stripped: true })
    expect(stringConstant(body, "B")?.value).toBe("one two\\n")
    expect(stringConstant(body, "C")).toBeNull()
    expect(stringConstant(body, "D")?.value).toBe("café AA\\q")
  })

  it("docstrings: inspect.cleandoc, and docstring_parser's short and long description and argument texts", () => {
    expect(cleandoc("  Title.\n\n      Body\n    more\n\n")).toBe("Title.\n\n  Body\nmore")
    const doc = Either.getOrThrow(parseDocstring("Short.\n    Long one\n    and two.\n\n    Args:\n        a (int): First\n            continued.\n        b: Second.\n    "))
    expect(doc.shortDescription).toBe("Short.")
    expect(doc.longDescription).toBe("Long one\nand two.")
    expect([...doc.params]).toEqual([["a", "First\ncontinued."], ["b", "Second."]])
    expect(Either.isLeft(parseDocstring("Short.\n\n:param a: ReST"))).toBe(true)
  })

  it("field titles as pydantic makes them", () => {
    expect(fieldTitle("payment_method_id")).toBe("Payment Method Id")
    expect(fieldTitle("item_ids2x")).toBe("Item Ids2X")
    expect(fieldTitle("APN_name")).toBe("Apn Name")
  })

  it("every tau2 domain pulls its made files from upstream's sources by URL", () => {
    for (const provider of [retail, airline, telecom, banking]) {
      const data = provider.data ?? []
      // Every file but the oracle corpora has a download URL now.
      expect(data.filter((f) => f.url === "" && f.oracle !== true)).toEqual([])
      const made = (provider.derived?.files ?? []).map((f) => f.path)
      expect(made).toEqual(expect.arrayContaining(["tau2/prompts/agent_instruction.txt", "tau2/prompts/user_system_prompt_template.txt"]))
      // The sources are pinned at the data's revision and only read to make those files.
      const srcs = data.filter((f) => f.path.startsWith("tau2/upstream/"))
      expect(srcs.length).toBeGreaterThan(0)
      for (const s of srcs) {
        expect(s.url).toBe(`https://raw.githubusercontent.com/sierra-research/tau2-bench/${upstreamRevision}/${s.path.slice("tau2/upstream/".length)}`)
        expect(s.derivationInput).toBe(true)
      }
    }
    expect((telecom.derived?.files ?? []).map((f) => f.path)).toEqual(
      expect.arrayContaining(["tau2/telecom/tools.json", "tau2/telecom/user-tools-types.json", "tau2/telecom/policy-manual.md"])
    )
    expect((retail.data ?? []).map((f) => f.path)).toContain(`tau2/upstream/${retailTools.repoPath}`)
    expect((banking.data ?? []).filter((f) => f.url === "" && f.oracle !== true)).toEqual([])
    expect((banking.derived?.files ?? []).map((f) => f.path)).toEqual(
      expect.arrayContaining(["tau2/banking_knowledge/discoverable-tools.json", "tau2/banking_knowledge/policy-bm25.md", "tau2/banking_knowledge/documents-order.json"])
    )
  })

  it("the files made from data alone are byte for byte the oracle's: banking's SHA256SUMS and corpus order, both composed policies", () => {
    // These need no source: the sums are the per-file pins, the order the one the oracle machine listed documents/ in,
    // the policies upstream's composition of pinned files.
    const shared = process.env["ASSAY_DATA_DIR"] ?? ""
    const inputs = { source: () => "", data: (path: string) => readFileSync(join(shared, path), "utf8") }
    for (const path of ["tau2/banking_knowledge/SHA256SUMS", "tau2/banking_knowledge/documents-order.json", "tau2/banking_knowledge/policy-bm25.md", "tau2/telecom/policy-manual.md"]) {
      const rendering = renderingFor([...bankingRenderings, ...telecomRenderings], path)!
      expect(rendering.sources).toEqual([])
      const made = Either.getOrThrow(rendering.render(inputs))
      expect(made[rendering.outputs.indexOf(path)], path).toBe(readFileSync(join(shared, path), "utf8"))
    }
  })
})
