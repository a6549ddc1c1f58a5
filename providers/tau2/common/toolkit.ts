/**
 * What the retail and airline toolkits share: a call's context (reads see the call's own writes),
 * CPython's keyword-binding texts, the dispatch `Environment.get_response` does (unknown tool,
 * binding error, exception: `Error: ...` with `error: true`), the `Tool`s of a toolkit in
 * tools.json order and a call applied to a world. Each domain gives its implementations.
 */
import { Either } from "effect"
import { type Canonical, type Tool, World } from "../../../src/index.ts"
import { calculate } from "./calculate.ts"
import { calculateArgumentError } from "./python.ts"

export type Args = { readonly [key: string]: Canonical.Json }

/** A Python exception's `str()`, or the call's answer. */
export type Step<A> = Either.Either<A, string>

/** Reads through the call's own writes, so a tool sees what it already changed. */
export interface Ctx {
  readonly world: World.World
  readonly changed: Map<string, World.Write>
}

/** A record as the call sees it: its own write if it made one, else the world's. */
export const readThrough = <A>(ctx: Ctx, table: string, key: string): A | undefined => {
  const own = ctx.changed.get(`${table}\u0000${key}`)
  return (own !== undefined ? own.value : World.get(ctx.world, table, key)) as A | undefined
}

/** Records a write of the call (the last write of a record wins). */
export const writeThrough = (ctx: Ctx, table: string, key: string, value: Canonical.Json): void => {
  ctx.changed.set(`${table}\u0000${key}`, { table, key, value })
}

/** A Python exception with this `str()`. */
export const raise = <A = never>(message: string): Step<A> => Either.left(message)

const quoteList = (names: ReadonlyArray<string>): string => {
  const q = names.map((n) => `'${n}'`)
  if (q.length <= 1) return q.join("")
  if (q.length === 2) return `${q[0]} and ${q[1]}`
  return `${q.slice(0, -1).join(", ")}, and ${q[q.length - 1]}`
}

/**
 * Binding keyword arguments to `<toolkit>.<name>(self, ...)` (e.g. `RetailTools`): an unknown
 * keyword is reported first (in the order given), then the missing parameters, with CPython's wording.
 */
export const bindArguments = (toolkit: string, toolName: string, params: ReadonlyArray<string>, args: Args): string | undefined => {
  const fn = `${toolkit}.${toolName}()`
  for (const k of Object.keys(args)) if (!params.includes(k)) return `${fn} got an unexpected keyword argument '${k}'`
  const missing = params.filter((p) => !Object.hasOwn(args, p))
  if (missing.length > 0) {
    return `${fn} missing ${missing.length} required positional argument${missing.length > 1 ? "s" : ""}: ${quoteList(missing)}`
  }
  return undefined
}

/** One tool of a toolkit. */
export interface Implementation {
  /** Parameter names in upstream's signature order. */
  readonly params: ReadonlyArray<string>
  /** The call; `argumentsText` is the model's raw arguments text when there is one. */
  readonly run: (ctx: Ctx, a: Args, argumentsText?: string) => Step<string>
}

/**
 * Calls a tool by name as upstream's `Environment.get_response` does: unknown names, argument
 * binding errors and exceptions all come back as `Error: ...` with `error: true`; the writes
 * made before an exception are kept (upstream's DB keeps them too).
 */
export const callToolkit = (
  toolkit: string,
  implementations: { readonly [name: string]: Implementation },
  world: World.World,
  name: string,
  args: Args,
  argumentsText?: string
): Tool.ToolOutcome => {
  const impl = Object.hasOwn(implementations, name) ? implementations[name] : undefined
  if (impl === undefined) return { output: `Error: Tool '${name}' not found.`, error: true, writes: [] }
  const bindError = bindArguments(toolkit, name, impl.params, args)
  if (bindError !== undefined) return { output: `Error: ${bindError}`, error: true, writes: [] }
  const ctx: Ctx = { world, changed: new Map() }
  const result = impl.run(ctx, args, argumentsText)
  const writes = [...ctx.changed.values()]
  return Either.isRight(result) ? { output: result.right, error: false, writes } : { output: `Error: ${result.left}`, error: true, writes }
}

/** Upstream's ToolType (tools-types.json). */
export type ToolType = "read" | "write" | "generic" | "think"

/**
 * A toolkit's tools as `Tool`s, in the order and with the specs of tools.json; access from
 * tools-types.json (`write` for write tools, `read` for read, generic and think tools; a tool
 * the types file does not name counts as a write).
 */
export const toolsOf = (
  specs: ReadonlyArray<Tool.ToolSpec>,
  types: ReadonlyArray<{ readonly name: string; readonly type: ToolType }>,
  call: (world: World.World, name: string, args: Args, argumentsText?: string) => Tool.ToolOutcome
): ReadonlyArray<Tool.Tool> =>
  specs.map((spec) => {
    const type = types.find((t) => t.name === spec.name)?.type ?? "write"
    return { spec, access: type === "write" ? "write" : "read", run: (world, args, argumentsText) => call(world, spec.name, args, argumentsText) }
  })

/** The world after a call (failed calls included, as upstream) and the call's outcome. */
export const applyCall = (world: World.World, outcome: Tool.ToolOutcome): readonly [World.World, Tool.ToolOutcome] => [
  outcome.writes.length === 0 ? world : World.apply(world, outcome.writes),
  outcome
]

/** The DB domains' `calculate` tool: upstream's character check, then Python's eval (calculate.ts). */
export const calculateTool: Implementation = {
  params: ["expression"],
  run: (_ctx, a) => {
    const expression = a["expression"]
    if (typeof expression !== "string") return raise(calculateArgumentError(expression, "0123456789+-*/(). "))
    const result = calculate(expression)
    return result.ok ? Either.right(result.output) : raise(result.message)
  }
}
