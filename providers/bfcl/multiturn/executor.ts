/**
 * Upstream's `execute_multi_turn_func_call`, over immutable worlds: method names are prefixed with
 * the instance name (inside string literals too, as upstream's regex does), the blocklist, the
 * call parsed and bound as Python binds it, and the result turned into text as upstream does.
 */
import type { AnyApi, LongContext, Param } from "./api.ts"
import { type Expr, evalExpr, parseCall } from "./call.ts"
import { sha256, stateDump } from "./canon.ts"
import { type Py, PyDict, PyError, resultText } from "./py.ts"

/** The worlds of one executor session: each involved class's current state, by class name. */
export interface Session {
  readonly modelName: string
  readonly testEntryId: string
  readonly classes: ReadonlyArray<AnyApi>
  readonly states: ReadonlyMap<string, unknown>
  /** Method name → its class (a later class wins a clash), and instance name → class. */
  readonly owners: ReadonlyMap<string, AnyApi>
  readonly instances: ReadonlyMap<string, AnyApi>
}

export const instanceName = (modelName: string, testEntryId: string, className: string): string =>
  `${modelName}_${testEntryId}_${className}_instance`.replace(/[-./:]/g, "_")

/** Creates the instances (upstream's first call for a name): each class loaded from its config. */
export const openSession = (
  apis: ReadonlyArray<AnyApi>,
  initialConfig: PyDict,
  options: { readonly modelName: string; readonly testEntryId: string; readonly longContext: LongContext | undefined }
): Session => {
  const states = new Map<string, unknown>()
  for (const api of apis) {
    const config = initialConfig.get(api.name)
    states.set(api.name, api.load(config instanceof PyDict ? config : PyDict.empty, options.longContext))
  }
  const owners = new Map<string, AnyApi>()
  const instances = new Map<string, AnyApi>()
  for (const api of apis) {
    instances.set(instanceName(options.modelName, options.testEntryId, api.name), api)
    for (const m of Object.keys(api.methods)) owners.set(m, api)
  }
  return { modelName: options.modelName, testEntryId: options.testEntryId, classes: apis, states, owners, instances }
}

const blocked = new Set(["kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"])

const bind = (qualname: string, params: ReadonlyArray<Param>, args: ReadonlyArray<Py>, kwargs: ReadonlyArray<readonly [string, Py]>): Array<Py> => {
  const names = params.map((p) => (typeof p === "string" ? p : p[0]))
  if (args.length > names.length) {
    const required = params.filter((p) => typeof p === "string").length
    const takes = required === names.length ? `${names.length + 1}` : `from ${required + 1} to ${names.length + 1}`
    throw new PyError("TypeError", `${qualname}() takes ${takes} positional argument${names.length === 0 ? "" : "s"} but ${args.length + 1} were given`)
  }
  const bound: Array<Py | undefined> = names.map((_, i) => args[i])
  for (const [k, v] of kwargs) {
    const at = names.indexOf(k)
    if (at < 0) throw new PyError("TypeError", `${qualname}() got an unexpected keyword argument '${k}'`)
    if (bound[at] !== undefined) throw new PyError("TypeError", `${qualname}() got multiple values for argument '${k}'`)
    bound[at] = v
  }
  const missing: Array<string> = []
  params.forEach((p, i) => {
    if (bound[i] === undefined) {
      if (typeof p === "string") missing.push(`'${p}'`)
      else bound[i] = p[1]
    }
  })
  if (missing.length > 0) {
    const list = missing.length === 1 ? missing[0] : missing.length === 2 ? `${missing[0]} and ${missing[1]}` : `${missing.slice(0, -1).join(", ")}, and ${missing[missing.length - 1]}`
    throw new PyError("TypeError", `${qualname}() missing ${missing.length} required positional argument${missing.length === 1 ? "" : "s"}: ${list}`)
  }
  return bound as Array<Py>
}

/** Runs one call string: its result text and the session after it. */
export const executeCall = (session: Session, call: string): { readonly result: string; readonly session: Session } => {
  const { owners } = session
  const rewritten = call.replace(/\b([a-zA-Z_]\w*)\s*(?=\()/g, (_, name: string) => {
    const api = owners.get(name)
    return api === undefined ? name : `${instanceName(session.modelName, session.testEntryId, api.name)}.${name}`
  })
  let head = rewritten.includes("(") ? (rewritten.split("(")[0] as string) : rewritten
  if (head.includes(".")) head = head.split(".")[1] as string
  if (blocked.has(head)) return { result: `Error during execution: Function call ${head} is not allowed.`, session }
  const parsed = parseCall(rewritten)
  if (!parsed.ok) return { result: `Error during execution: ${parsed.message}`, session }
  const { callee, args, kwargs } = parsed.call
  try {
    const api = session.instances.get(callee[0] as string)
    if (api === undefined) throw new PyError("NameError", `name '${callee[0]}' is not defined`)
    if (callee.length !== 2) throw new PyError("AttributeError", `'${api.name}' object has no attribute '${callee[1]}'`)
    const method = api.methods[callee[1] as string]
    if (method === undefined) throw new PyError("AttributeError", `'${api.name}' object has no attribute '${callee[1]}'`)
    const values = args.map((a: Expr) => evalExpr(a))
    const named = kwargs.map(([k, e]) => [k, evalExpr(e)] as const)
    const bound = bind(`${api.name}.${callee[1]}`, method.params, values, named)
    const outcome = method.run(session.states.get(api.name), bound)
    const next = outcome.state === session.states.get(api.name) ? session : { ...session, states: new Map(session.states).set(api.name, outcome.state) }
    if (outcome.error !== undefined) return { result: `Error during execution: ${errorText(outcome.error)}`, session: next }
    return { result: resultText(outcome.output ?? null), session: next }
  } catch (e) {
    if (e instanceof PyError) return { result: `Error during execution: ${errorText(e)}`, session }
    throw e
  }
}

// What `str(exception)` prints (a KeyError's text is already the key's repr)
const errorText = (e: PyError): string => e.text

// A session whose states did not change keeps its Map, so its dump is made once
const dumps = new WeakMap<ReadonlyMap<string, unknown>, { readonly dump: string; readonly sha256: string }>()

/** The canonical dump of every instance's public state, and its sha256. */
export const sessionState = (session: Session): { readonly dump: string; readonly sha256: string } => {
  const known = dumps.get(session.states)
  if (known !== undefined) return known
  const dump = stateDump(session.classes.map((api) => [api.name, api.publicState(session.states.get(api.name))] as const))
  const made = { dump, sha256: sha256(dump) }
  dumps.set(session.states, made)
  return made
}
