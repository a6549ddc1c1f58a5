import { describe, expect, it } from "@effect/vitest"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Either, Layer } from "effect"
import * as Registry from "../../src/model/Registry.ts"
import { tempDir } from "../support/tempDirs.ts"

const resolveRef = (ref: string) => Effect.runSync(Effect.either(Registry.resolve(ref).pipe(Effect.provide(Registry.layer))))

const refOf = (ref: string): string => {
  const result = resolveRef(ref)
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right.ref
}

describe("Registry", () => {
  it.effect("the shipped fixture decodes and says it is a models.dev-shaped snapshot", () =>
    Effect.gen(function*() {
      const file = yield* Registry.fixture
      expect(file.source).toMatch(/models\.dev/)
      expect(file.snapshot_date).toMatch(/^\d{4}-\d{2}-\d{2}$/)
      expect(Object.keys(file.providers).sort()).toEqual(["anthropic", "google", "ollama", "openai", "openai-chat"])
    }))

  it("resolves provider:model refs, dated snapshots behind undated names, and family aliases", () => {
    expect(refOf("openai:gpt-4o-mini")).toBe("openai:gpt-4o-mini-2024-07-18")
    expect(refOf("gpt-4o-mini")).toBe("openai:gpt-4o-mini-2024-07-18")
    expect(refOf("openai:gpt-4o-mini-2024-07-18")).toBe("openai:gpt-4o-mini-2024-07-18")
    expect(refOf("sonnet")).toBe("anthropic:claude-sonnet-4-5-20250929")
    expect(refOf("anthropic:claude-haiku-4-5")).toBe("anthropic:claude-haiku-4-5-20251001")
    expect(refOf("gemini-2.5-pro")).toBe("google:gemini-2.5-pro")
    expect(refOf("o4-mini")).toBe("openai:o4-mini-2025-04-16")
  })

  it("keeps model ids that contain a colon (ollama tags)", () => {
    const result = resolveRef("ollama:llama3.1:8b")
    expect(Either.isRight(result) && result.right).toMatchObject({
      ref: "ollama:llama3.1:8b",
      provider: "ollama",
      api: "openai-chat"
    })
  })

  it("a resolved entry carries the API type, limits, tool support and price", () => {
    const result = resolveRef("openai:gpt-4o-mini")
    if (Either.isLeft(result)) throw result.left
    expect(result.right.api).toBe("openai-responses")
    expect(result.right.model.tool_call).toBe(true)
    expect(result.right.model.limit).toEqual({ context: 128000, output: 16384 })
    expect(result.right.model.cost).toEqual({ input: 0.15, output: 0.6, cache_read: 0.075 })
  })

  it("an alias of another provider's model does not resolve under the wrong provider", () => {
    expect(Either.isLeft(resolveRef("openai:sonnet"))).toBe(true)
  })

  it("an unknown model fails with ModelNotFound and suggests near names", () => {
    const result = resolveRef("openai:gpt-4o-mni")
    if (Either.isRight(result)) throw new Error("resolved an unknown model")
    expect(result.left._tag).toBe("ModelNotFound")
    expect(result.left.ref).toBe("openai:gpt-4o-mni")
    // Every suggestion in the form --model takes: an alias as the PROVIDER:MODEL it names.
    expect(result.left.suggestions).toContain("openai:gpt-4o-mini-2024-07-18")
    expect(result.left.suggestions.every((s) => s.includes(":"))).toBe(true)
    expect(result.left.message).toContain("did you mean")
  })

  it("retired and deprecated models are flagged, local models have no price", () => {
    const retired = resolveRef("openai:gpt-4.5-preview-2025-02-27")
    const local = resolveRef("ollama:gpt-oss:20b")
    expect(Either.isRight(retired) && retired.right.model.status).toBe("retired")
    expect(Either.isRight(local) && local.right.model.cost).toBeUndefined()
  })

  it("openai-chat resolves any model id, with no price (cost unknown, never 0) and generous limits", () => {
    for (const id of ["meta-llama/Llama-3.1-8B-Instruct", "qwen2.5:7b", "llama-3.3-70b-versatile", "lmstudio-community/gpt-oss-20b-GGUF"]) {
      const result = resolveRef(`openai-chat:${id}`)
      if (Either.isLeft(result)) throw result.left
      expect(result.right).toMatchObject({ ref: `openai-chat:${id}`, provider: "openai-chat", api: "openai-chat" })
      expect(result.right.model.id).toBe(id)
      expect(result.right.model.cost).toBeUndefined()
      expect(result.right.model.tool_call).toBe(true)
      expect(result.right.model.limit.context).toBeGreaterThanOrEqual(131072)
      expect(result.right.model.limit.output).toBeGreaterThanOrEqual(8192)
    }
    // Only with the provider named: a bare unknown id is still not found, and an empty id never resolves.
    expect(Either.isLeft(resolveRef("meta-llama/Llama-3.1-8B-Instruct"))).toBe(true)
    expect(Either.isLeft(resolveRef("openai-chat:"))).toBe(true)
  })

  it("ollama resolves a model it does not list (any pulled tag) without a price, and a listed one as listed", () => {
    const pulled = resolveRef("ollama:qwen3:8b")
    if (Either.isLeft(pulled)) throw pulled.left
    expect(pulled.right).toMatchObject({ ref: "ollama:qwen3:8b", api: "openai-chat" })
    expect(pulled.right.model.cost).toBeUndefined()
    const listed = resolveRef("ollama:llama3.1:8b")
    expect(Either.isRight(listed) && listed.right.model.name).toBe("Llama 3.1 8B")
  })

  it("providers without any_model still refuse an unknown id and suggest near names", () => {
    expect(Either.isLeft(resolveRef("anthropic:claude-sonet-4-5"))).toBe(true)
    expect(Either.isLeft(resolveRef("google:gemini-9"))).toBe(true)
  })

  it.effect("every alias points at a model the registry has", () =>
    Effect.gen(function*() {
      const file = yield* Registry.fixture
      for (const [alias, target] of Object.entries(file.aliases)) {
        const resolved = Registry.resolveIn(file, target)
        expect(Either.isRight(resolved), `${alias} -> ${target}`).toBe(true)
      }
    }))

  it.effect("layerFromFile loads another registry file; a malformed one fails with RegistryError", () =>
    Effect.gen(function*() {
      const dir = tempDir("assay-registry-")
      const good = join(dir, "good.json")
      const bad = join(dir, "bad.json")
      writeFileSync(good, JSON.stringify({
        source: "test",
        snapshot_date: "2025-01-01",
        providers: {
          local: {
            id: "local",
            name: "Local",
            api: "openai-chat",
            env: [],
            base_url: "http://127.0.0.1:9/v1",
            models: {
              tiny: { id: "tiny", name: "Tiny", family: "tiny", release_date: "2025-01-01", tool_call: true, reasoning: false, limit: { context: 4096, output: 1024 } }
            }
          }
        },
        aliases: { t: "local:tiny" }
      }))
      writeFileSync(bad, JSON.stringify({ source: "test", providers: {} }))
      const entry = yield* Registry.resolve("t").pipe(Effect.provide(Registry.layerFromFile(good)))
      expect(entry.ref).toBe("local:tiny")
      const failure = yield* Effect.flip(Registry.resolve("t").pipe(Effect.provide(Registry.layerFromFile(bad))))
      expect(failure._tag).toBe("RegistryError")
      const missing = yield* Effect.flip(Layer.build(Registry.layerFromFile(join(dir, "none.json"))).pipe(Effect.scoped))
      expect(missing).toMatchObject({ _tag: "RegistryError", reason: "unreadable" })
    }))
})
