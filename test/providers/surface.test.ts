/**
 * The providers written against the library surface import assay only through src/index.ts (what
 * `import … from "assay"` gives another project), so they show what an outside provider can do.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join, relative, resolve } from "node:path"

const root = resolve(import.meta.dirname, "../..")
const surface = join(root, "src", "index.ts")

const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name))

/** Every `from "…"` of a file that resolves into src/ but is not src/index.ts, as `file: specifier`. */
const internalImports = (file: string): ReadonlyArray<string> =>
  Array.from(readFileSync(file, "utf8").matchAll(/\bfrom\s+"(\.[^"]+)"/g), (m) => m[1]!)
    .filter((spec) => {
      const target = resolve(file, "..", spec)
      return target.startsWith(join(root, "src") + "/") && target !== surface
    })
    .map((spec) => `${relative(root, file)}: ${spec}`)

describe("providers import only the library surface", () => {
  // coding-repair and corpus run candidates' code and agent CLIs: they use the sandbox and the
  // harness runner (src/sandbox, src/harness), which are not part of the surface.
  for (const provider of ["bfcl", "bird", "competitor-discovery", "contract-review", "tau2", "ledger"]) {
    it(`${provider}: every module imports assay through src/index.ts`, () => {
      const files = sources(join(root, "providers", provider))
      expect(files.length).toBeGreaterThan(0)
      expect(files.flatMap(internalImports)).toEqual([])
    })
  }
})
