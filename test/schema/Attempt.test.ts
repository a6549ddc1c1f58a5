/**
 * A recorded effect's outcome through the Attempt's schema, as the store writes and reads it: a
 * failed effect keeps its error (replay answers it again from the recording), an answered one
 * its value.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { RecordedEffect } from "../../src/schema/Attempt.ts"

const failed: RecordedEffect = {
  kind: "http/request",
  key: "GET https://example.test/a",
  occurrence: 0,
  request: { method: "GET" },
  outcome: { error: { reason: "server-error", message: "HTTP 500" } }
}
const answered: RecordedEffect = { ...failed, outcome: { ok: { status: 200, body: "fine" } } }

describe("a recorded effect through the schema", () => {
  it("a failed effect keeps its error when encoded and decoded (it was encoded as {})", () => {
    const encoded = Schema.encodeSync(RecordedEffect)(failed)
    expect(encoded.outcome).toEqual({ error: { reason: "server-error", message: "HTTP 500" } })
    expect(Schema.decodeUnknownSync(RecordedEffect)(JSON.parse(JSON.stringify(encoded)))).toEqual(failed)
  })

  it("an answered effect keeps its value, null and absent values included", () => {
    expect(Schema.decodeUnknownSync(RecordedEffect)(Schema.encodeSync(RecordedEffect)(answered))).toEqual(answered)
    const nothing: RecordedEffect = { ...failed, outcome: { ok: null } }
    expect(Schema.encodeSync(RecordedEffect)(nothing).outcome).toEqual({ ok: null })
  })
})
