/**
 * Content ids: `sha256:<hex>` of a value's canonical JSON. Two values with the same id are the
 * same JSON value, whatever their key order.
 */
import * as crypto from "node:crypto"
import { createHash } from "node:crypto"
import { Effect, Schema } from "effect"
import { canonical, canonicalEither, type NotJson } from "./Canonical.ts"

export const ContentId = Schema.String.pipe(
  Schema.pattern(/^sha256:[0-9a-f]{64}$/),
  Schema.brand("ContentId"),
  Schema.annotations({ identifier: "ContentId", description: "sha256:<64 hex digits>" })
)
export type ContentId = typeof ContentId.Type

// node:crypto's one-shot `hash` (Node 20.12+) costs a third of a Hash object's round trip on the
// short texts ids are made of; where a runtime lacks it, the Hash object.
const oneShot = (crypto as { readonly hash?: (algorithm: string, data: string | Uint8Array, encoding: "hex") => string }).hash
export const sha256Hex = (data: string | Uint8Array): string =>
  oneShot !== undefined ? oneShot("sha256", data, "hex") : createHash("sha256").update(data).digest("hex")

/** The content id of a text (its UTF-8 bytes). */
export const ofText = (text: string): ContentId => `sha256:${sha256Hex(text)}` as ContentId

/** The content id of a JSON value. */
export const of = (value: unknown): Effect.Effect<ContentId, NotJson> => Effect.map(canonical(value), ofText)

/** The content id of a value known to be JSON; a non-JSON value is a defect. */
export const ofUnsafe = (value: unknown): ContentId => {
  const text = canonicalEither(value)
  if (text._tag === "Left") throw text.left
  return ofText(text.right)
}

/** A short form for screens: the first 12 hex digits. */
export const short = (id: string): string => id.replace(/^sha256:/, "").slice(0, 12)
