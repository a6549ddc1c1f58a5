/**
 * Finding tasks: `assay tasks BENCHMARK [--stratum S] [--json]` lists a benchmark's task ids with
 * their stratum, and `--task` (plan, run) selects by id, glob (`*debit*`, `bird/*debit*`) or
 * stratum name. A selector that matches nothing is refused naming the nearest ids.
 */
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import type { EnvironmentDef } from "../schema/EnvironmentDef.ts"
import { benchmarkNames, loadBenchmark, UsageError } from "./benchmarks.ts"

export const tasksDoc = {
  about: "List a benchmark's task ids with their stratum (a BFCL category, a tau2 domain's split): the ids --task takes. " +
    "--task also takes a glob (bird/*debit*, *debit*) or a stratum name.",
  args: { BENCHMARK: `A benchmark: ${benchmarkNames().join(", ")}, or the path of a provider module` },
  flags: {
    "--stratum": { value: "S", about: "Only the tasks of this stratum" },
    "--json": { about: "Print one JSON document: { benchmark, tasks: [{ id, stratum }] }" }
  }
} as const

/** A glob's `*` (any text) and `?` (one character) as a whole-string pattern; the rest is literal. */
const globPattern = (glob: string): RegExp =>
  new RegExp(`^${glob.split("").map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[\\^$.|+()[\]{}]/g, "\\$&"))).join("")}$`, "s")

const isGlob = (selector: string): boolean => selector.includes("*") || selector.includes("?")

/** Edit distance of two strings (insertions, deletions, substitutions). */
const distance = (a: string, b: string): number => {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) next.push(Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)))
    row = next
  }
  return row[b.length]!
}

/**
 * The ids close enough to `given` to be what was meant (those containing it, or within a few
 * edits), nearest first, at most `count`; none when nothing is close.
 */
export const nearestIds = (given: string, ids: ReadonlyArray<string>, count = 3): ReadonlyArray<string> => {
  const lower = given.toLowerCase()
  if (lower.length === 0) return []
  const near = Math.max(2, Math.floor(lower.length / 3))
  const scored = ids.flatMap((id) => {
    const l = id.toLowerCase()
    const edits = distance(lower, l)
    // An id containing what was typed, or contained in it, is nearer than any edit distance says.
    const contains = (lower.length >= 3 && l.includes(lower)) || (l.length >= 3 && lower.includes(l))
    return contains ? [{ id, score: edits / 1000 }] : edits <= near ? [{ id, score: edits }] : []
  })
  return scored.sort((a, b) => a.score - b.score || a.id.localeCompare(b.id)).slice(0, count).map((s) => s.id)
}

/**
 * The environments `selectors` name in the benchmark `benchmark`: each selector is an id, a glob
 * over ids, or a stratum name, optionally prefixed `BENCHMARK/` (then it applies to that benchmark
 * only). `matched` holds the selectors that matched a task here.
 */
export const selectTasks = (
  benchmark: string,
  environments: ReadonlyArray<EnvironmentDef>,
  selectors: ReadonlyArray<string>
): { readonly selected: ReadonlyArray<EnvironmentDef>; readonly matched: ReadonlySet<string> } => {
  const mine = selectors.flatMap((s) => {
    const slash = s.indexOf("/")
    // A prefix names a benchmark only when it is this one's name; ids may contain a slash themselves.
    if (slash > 0 && s.slice(0, slash) === benchmark) return [{ given: s, pattern: s.slice(slash + 1) }]
    if (slash > 0 && benchmarkNames().includes(s.slice(0, slash))) return []
    return [{ given: s, pattern: s }]
  })
  const matched = new Set<string>()
  const chosen = new Set<EnvironmentDef>()
  for (const { given, pattern } of mine) {
    const matches = isGlob(pattern)
      ? environments.filter((e) => globPattern(pattern).test(e.task))
      : environments.filter((e) => e.task === pattern || e.stratum === pattern)
    if (matches.length > 0) matched.add(given)
    for (const m of matches) chosen.add(m)
  }
  return { selected: environments.filter((e) => chosen.has(e)), matched }
}

/** Why selectors matched nothing in the benchmarks given, in one line naming the nearest ids. */
export const unmatchedDetail = (
  unmatched: ReadonlyArray<string>,
  benchmarks: ReadonlyArray<{ readonly name: string; readonly environments: ReadonlyArray<EnvironmentDef> }>
): string => {
  const names = benchmarks.map((b) => b.name)
  const candidates = benchmarks.flatMap((b) => [
    ...b.environments.map((e) => e.task),
    ...new Set(b.environments.flatMap((e) => (e.stratum === null ? [] : [e.stratum])))
  ])
  const hints = unmatched.flatMap((given) => {
    const slash = given.indexOf("/")
    const bare = slash > 0 && benchmarkNames().includes(given.slice(0, slash)) ? given.slice(slash + 1) : given
    const near = nearestIds(bare.replace(/[*?]/g, ""), candidates)
    return near.length === 0 ? [] : [`${unmatched.length > 1 ? `${given}: ` : ""}did you mean ${near.join(", ")}?`]
  })
  return `no task ${unmatched.join(", ")} in ${names.join(", ")}${hints.length > 0 ? ` (${hints.join("; ")})` : ""}: see assay tasks ${names[0] ?? "BENCHMARK"}`
}

export const tasksCommand = Command.make(
  "tasks",
  {
    benchmark: Args.text({ name: "BENCHMARK" }),
    stratum: Options.text("stratum").pipe(Options.optional),
    json: Options.boolean("json")
  },
  (opts) =>
    Effect.gen(function*() {
      const provider = yield* loadBenchmark(opts.benchmark)
      const environments = yield* provider.environments
      const strata = Array.from(new Set(environments.flatMap((e) => (e.stratum === null ? [] : [e.stratum]))))
      const chosen = Option.match(opts.stratum, {
        onNone: () => environments,
        onSome: (s) => environments.filter((e) => e.stratum === s)
      })
      if (Option.isSome(opts.stratum) && chosen.length === 0) {
        const near = nearestIds(opts.stratum.value, strata)
        return yield* new UsageError({
          detail: strata.length === 0
            ? `--stratum ${opts.stratum.value}: ${provider.name} has no strata`
            : `--stratum ${opts.stratum.value}: no such stratum in ${provider.name}${near.length > 0 ? ` (did you mean ${near.join(", ")}?)` : ""}; it has ${strata.join(", ")}`
        })
      }
      const rows = chosen.map((e) => ({ id: e.task, stratum: e.stratum }))
      if (opts.json) return yield* Console.log(JSON.stringify({ benchmark: provider.name, tasks: rows }, null, 2))
      const width = Math.max(2, ...rows.map((r) => r.id.length))
      yield* Console.log(rows.map((r) => (r.stratum === null ? r.id : `${r.id.padEnd(width)}  ${r.stratum}`)).join("\n"))
      yield* Console.error(`${rows.length} tasks${Option.isSome(opts.stratum) ? ` in stratum ${opts.stratum.value}` : ""} of ${provider.name}; pick with --task ID, a glob (--task '${provider.name}/*x*') or a stratum`)
    })
).pipe(Command.withDescription(tasksDoc.about))
