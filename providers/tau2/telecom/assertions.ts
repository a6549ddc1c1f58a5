/**
 * Env assertions as upstream evaluates them (`Environment.run_env_assertion(a,
 * raise_assertion_error=False)`): the named method of the agent or user toolkit runs on the
 * final environment, `sync_tools()` follows (it can change state, so assertions run in order on
 * the evolving world), and the assertion is met when the method's bool equals `assert_value`.
 */
import { Schema } from "effect"
import type { World } from "../../../src/index.ts"
import type { PyJson } from "./pyjsonParse.ts"
import { counterBillIds, runEnvFunction, type ToolOptions } from "./tools.ts"

export const EnvAssertion = Schema.Struct({
  env_type: Schema.Literal("user", "assistant"),
  func_name: Schema.String,
  arguments: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  assert_value: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  message: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
})
export type EnvAssertion = typeof EnvAssertion.Type

export interface AssertionResult {
  readonly assertion: EnvAssertion
  readonly met: boolean
  /**
   * Set when the method raised or returned a non-bool. Upstream lets that exception end the
   * evaluation; here the assertion counts as not met and the text says why.
   */
  readonly error: string | null
}

/** One assertion; the world after it (the sync may have changed it). */
export const runEnvAssertion = (
  world: World.World,
  assertion: EnvAssertion,
  options: ToolOptions = counterBillIds
): readonly [World.World, AssertionResult] => {
  const out = runEnvFunction(world, assertion.env_type, assertion.func_name, assertion.arguments as { readonly [key: string]: PyJson }, options)
  if (out.error) return [out.world, { assertion, met: false, error: out.output }]
  if (out.output !== "True" && out.output !== "False") {
    return [out.world, { assertion, met: false, error: `Function ${assertion.func_name} did not return a bool` }]
  }
  return [out.world, { assertion, met: (out.output === "True") === assertion.assert_value, error: null }]
}

/** Every assertion in order, each on the world the previous one left. */
export const runEnvAssertions = (
  world: World.World,
  assertions: ReadonlyArray<EnvAssertion>,
  options: ToolOptions = counterBillIds
): readonly [World.World, ReadonlyArray<AssertionResult>] => {
  let w = world
  const results: Array<AssertionResult> = []
  for (const a of assertions) {
    const [next, r] = runEnvAssertion(w, a, options)
    w = next
    results.push(r)
  }
  return [w, results]
}
