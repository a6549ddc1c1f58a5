/**
 * The store through src/experiment/Sqlite.ts in whatever runtime runs the suite: better-sqlite3
 * under Node (`npm test`), node:sqlite under Deno (`deno task test`, which sets ASSAY_RUNTIME=deno
 * so a suite that silently ran under Node would fail here).
 */
import { readFileSync, writeFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Home from "../../src/experiment/Home.ts"
import * as Sqlite from "../../src/experiment/Sqlite.ts"
import * as Store from "../../src/experiment/Store.ts"
import { tempDir } from "../support/tempDirs.ts"

const withStore = <A, E>(home: string, use: (store: Store.Store) => Effect.Effect<A, E>, options: Store.LayerOptions = {}) =>
  Effect.provide(Effect.flatMap(Store.Store, use), Store.layer(home, options))

describe(`the store under ${"Deno" in globalThis ? "Deno" : "Node"}`, () => {
  it("uses the driver of its runtime", () => {
    const deno = "Deno" in globalThis
    if (process.env["ASSAY_RUNTIME"] === "deno") expect(deno).toBe(true)
    expect(Sqlite.driver).toBe(deno ? "node:sqlite" : "better-sqlite3")
  })

  it.effect("keeps runs, notes and derived figures across reopening, and reads them back read-only", () =>
    Effect.gen(function*() {
      const home = tempDir("assay-store-")
      const runId = yield* withStore(home, (s) =>
        Effect.gen(function*() {
          const id = yield* s.startRun("sha256:experiment", { parallel: 2 })
          yield* s.putNote(id, "estimate", { usd: 0.5, calls: 3 })
          yield* s.putNote(id, "estimate", { usd: 0.25, calls: 1 })
          yield* s.putDerived("key-1", "figures")
          yield* s.finishRun(id, { cells: 4 })
          return id
        }))
      const back = yield* withStore(home, (s) =>
        Effect.all({ run: s.getRun(runId), latest: s.latestRun, notes: s.notesOfRun(runId, "estimate"), derived: s.derived("key-1"), none: s.derived("key-2") }), { readOnly: true })
      expect(back.run).toMatchObject({ id: runId, experimentId: "sha256:experiment", settings: { parallel: 2 }, summary: { cells: 4 } })
      expect(back.run.finishedAt).not.toBeNull()
      expect(back.latest?.id).toBe(runId)
      expect(back.notes).toEqual([{ usd: 0.5, calls: 3 }, { usd: 0.25, calls: 1 }])
      expect(back.derived).toBe("figures")
      expect(back.none).toBeNull()
      // The file is SQLite in WAL mode (byte 18 of the header: 2), whichever driver wrote it.
      expect(readFileSync(Home.storeFile(home))[18]).toBe(2)
    }))

  it.effect("an unknown run is a typed error, and a store with a damaged page is named as damaged", () =>
    Effect.gen(function*() {
      const home = tempDir("assay-store-")
      yield* withStore(home, (s) =>
        Effect.gen(function*() {
          for (let i = 0; i < 400; i++) yield* s.putDerived(`key-${i}`, "x".repeat(200))
          const missing = yield* Effect.flip(s.getRun("r-0123456789abcdef"))
          expect(missing.reason).toBe("unknown-run")
        }))
      const file = Home.storeFile(home)
      const bytes = readFileSync(file)
      expect(bytes.length).toBeGreaterThan(8 * 4096)
      bytes.fill(0xab, 5 * 4096, 5 * 4096 + 512)
      writeFileSync(file, bytes)
      const error = yield* Effect.flip(withStore(home, (s) => s.latestRun))
      expect(error.reason).toBe("damaged")
      expect(error.message).toContain(file)
      expect(error.message).toMatch(/is corrupt: /)
    }))
})
