/**
 * The one reader of pinned data: the bytes of a file whose sha256 is the pinned one; a missing
 * file names the folder and the pull that fills it; a changed file names both hashes and the pull.
 */
import { createHash } from "node:crypto"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Pinned from "../../src/data/Pinned.ts"
import * as DataRoot from "../../src/evaluation/DataRoot.ts"
import { tempDir } from "../cli/support.ts"

const sha = (text: string) => createHash("sha256").update(text).digest("hex")

describe("PinnedData", () => {
  it.effect("reads a pinned file, and refuses a missing or changed one with the pull that fixes it", () => {
    const root = tempDir("assay-pinned-")
    mkdirSync(join(root, "bench"))
    writeFileSync(join(root, "bench", "tasks.json"), "[1,2,3]")
    return Effect.gen(function*() {
      const source: Pinned.Source = { benchmark: "bench", folder: "bench" }
      const reader = yield* Pinned.PinnedData
      expect(yield* reader.text(source, { path: "tasks.json", sha256: sha("[1,2,3]") })).toBe("[1,2,3]")

      const changed = yield* Effect.either(reader.text(source, { path: "tasks.json", sha256: sha("[1,2]") }))
      expect(Either.isLeft(changed) && changed.left).toMatchObject({ _tag: "DataError", reason: "hash-mismatch", benchmark: "bench" })
      expect(Either.isLeft(changed) ? changed.left.message : "").toMatch(/tasks\.json has sha256 [0-9a-f]{64}, expected the pinned .*assay data pull bench/)

      const missing = yield* Effect.either(reader.bytes(source, { path: "answers.json", sha256: sha("") }))
      expect(Either.isLeft(missing) && missing.left).toMatchObject({ reason: "missing", file: join(root, "bench", "answers.json") })
      expect(Either.isLeft(missing) ? missing.left.message : "").toContain("assay data pull bench")
    }).pipe(Effect.provide(Pinned.layerAt(root)))
  })

  it.effect("names the pull by the path the command loaded a benchmark from: `data pull NAME` would not find it", () => {
    const root = tempDir("assay-pinned-")
    return Effect.gen(function*() {
      DataRoot.namedForPull("by-path-bench", "./mine/index.ts")
      const reader = yield* Pinned.PinnedData
      const missing = yield* Effect.either(reader.text({ benchmark: "by-path-bench", folder: "mine" }, { path: "tasks.json", sha256: sha("") }))
      expect(Either.isLeft(missing) ? missing.left.message : "").toContain("`assay data pull ./mine/index.ts`")
    }).pipe(Effect.provide(Pinned.layerAt(root)))
  })
})
