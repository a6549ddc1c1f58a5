/**
 * A model call reads its base URL and key from the environment as it is at the call: the clients
 * remember a connection between calls only while the variables it was read from are unchanged.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Clients from "../../src/model/Clients.ts"
import type { ModelRequest } from "../../src/model/Model.ts"
import { closedPort } from "./servers.ts"

const request: ModelRequest = { provider: "envtest", model: "m", system: "", messages: [{ role: "user", content: "hi" }], tools: [] }
const endpoint: Clients.Endpoint = {
  api: "openai-chat",
  keyEnv: ["ASSAY_ENVTEST_KEY"],
  baseUrlEnv: [{ name: "ASSAY_ENVTEST_BASE_URL", keyEnv: ["ASSAY_ENVTEST_KEY"] }]
}
const names = ["ASSAY_ENVTEST_KEY", "ASSAY_ENVTEST_BASE_URL"] as const

describe("the environment is read as it is at each call", () => {
  it.live("a key or base URL set, changed or removed between calls is seen by the next call", () =>
    Effect.gen(function*() {
      const failure = Effect.flip(Clients.generate(request, { endpoint, timeout: 10_000 }))
      for (const name of names) delete process.env[name]
      try {
        expect((yield* failure).detail).toContain("no key: set ASSAY_ENVTEST_KEY")
        process.env["ASSAY_ENVTEST_KEY"] = "k-envtest"
        expect((yield* failure).detail).toContain("no base URL for envtest: set ASSAY_ENVTEST_BASE_URL")
        const first = yield* closedPort
        process.env["ASSAY_ENVTEST_BASE_URL"] = `http://127.0.0.1:${first}/v1`
        const refused = yield* failure
        expect(refused.reason).toBe("network")
        expect(refused.detail).toContain(`127.0.0.1:${first}/v1/chat/completions`)
        expect((yield* failure).detail).toContain(`:${first}/`)
        const second = yield* closedPort
        process.env["ASSAY_ENVTEST_BASE_URL"] = `http://127.0.0.1:${second}/v1`
        expect((yield* failure).detail).toContain(`127.0.0.1:${second}/v1/chat/completions`)
        delete process.env["ASSAY_ENVTEST_KEY"]
        expect((yield* failure).detail).toContain("no key: set ASSAY_ENVTEST_KEY")
      } finally {
        for (const name of names) delete process.env[name]
      }
    }))
})
