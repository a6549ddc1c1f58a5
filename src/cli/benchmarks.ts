/**
 * The benchmarks the command knows, loaded on demand so that one benchmark's data is read only
 * when it is asked for.
 */
import { Effect, Schema } from "effect"
import type { Provider } from "../evaluation/Provider.ts"

export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

const loaders: Record<string, () => Promise<Provider>> = {
  ledger: async () => (await import("../../providers/ledger/index.ts")).provider,
  "contract-review": async () => (await import("../../providers/contract-review/index.ts")).provider,
  bfcl: async () => (await import("../../providers/bfcl/index.ts")).provider,
  "tau2-retail": async () => (await import("../../providers/tau2/retail/index.ts")).provider,
  "tau2-telecom": async () => (await import("../../providers/tau2/telecom/index.ts")).provider,
  "tau2-banking": async () => (await import("../../providers/tau2/banking/index.ts")).provider,
  corpus: async () => (await import("../../providers/corpus/index.ts")).provider
}

export const benchmarkNames = (): ReadonlyArray<string> => Object.keys(loaders)

export const loadBenchmark = (name: string): Effect.Effect<Provider, UsageError> => {
  const load = loaders[name]
  if (!load) {
    return Effect.fail(new UsageError({ detail: `unknown benchmark "${name}": choose one of ${benchmarkNames().join(", ")}` }))
  }
  return Effect.tryPromise({
    try: load,
    catch: (e) => new UsageError({ detail: `cannot load benchmark ${name}: ${e instanceof Error ? e.message : String(e)}` })
  })
}
