/**
 * The shape of the house (issue 38): no import circle among assay's own modules, and src/ reaches
 * providers/ only through the command's registry of built-in benchmarks.
 */
import { describe, expect, it } from "@effect/vitest"
import { root } from "../cli/support.ts"
import { circles, importGraph } from "./imports.ts"

describe("the import graph", () => {
  const graph = importGraph(root, ["src", "providers"])

  it("finds a circle where there is one (the check can fail)", () => {
    const made = new Map([["a.ts", ["b.ts"]], ["b.ts", ["c.ts"]], ["c.ts", ["a.ts"]], ["d.ts", ["a.ts"]]])
    expect(circles(made)).toEqual([["a.ts", "b.ts", "c.ts"]])
  })

  it("has no circle in src/ or providers/", () => {
    const inSrc = new Map([...graph].filter(([file]) => file.startsWith("src/") || file.startsWith("providers/")))
    expect(circles(inSrc)).toEqual([])
  })

  it("has src/ import providers/ only in the command's registry of built-in benchmarks", () => {
    const reaching = [...graph].filter(([file, targets]) => file.startsWith("src/") && targets.some((t) => t.startsWith("providers/"))).map(([file]) => file)
    expect(reaching).toEqual(["src/cli/benchmarks.ts"])
  })
})
