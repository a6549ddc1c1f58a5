/**
 * Decoding a definition from untrusted input: a failure names the path of each bad field and
 * what was expected there.
 */
import { Effect, ParseResult, Schema } from "effect"

export class InvalidDefinition extends Schema.TaggedError<InvalidDefinition>()("InvalidDefinition", {
  definition: Schema.String,
  issues: Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String }))
}) {
  override get message() {
    return `invalid ${this.definition}: ` + this.issues.map((i) => `${i.path}: ${i.message}`).join("; ")
  }
}

const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  "$" + path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("")

export const decode = <A, I>(schema: Schema.Schema<A, I>, definition: string) => (input: unknown): Effect.Effect<A, InvalidDefinition> =>
  Schema.decodeUnknown(schema, { errors: "all", onExcessProperty: "error" })(input).pipe(
    Effect.mapError((error) =>
      new InvalidDefinition({
        definition,
        issues: ParseResult.ArrayFormatter.formatErrorSync(error).map((i) => ({ path: pathText(i.path), message: i.message }))
      })
    )
  )
