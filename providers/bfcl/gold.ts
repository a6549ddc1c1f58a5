/**
 * A gold answer per task, built from its possible answer: what a perfect model would emit
 * (decoded calls), for the scripted `gold` candidate.
 */
import type { Task } from "./data.ts"
import { isDict, type PyDict, type PyList, type PyValue } from "./pyjson.ts"

const hasEmpty = (acceptable: PyValue): boolean => Array.isArray(acceptable) && acceptable.includes("")

// The first acceptable value that is not "" (the "may be omitted" marker).
const firstValue = (acceptable: PyValue): PyValue | undefined => {
  if (!Array.isArray(acceptable)) return undefined
  for (const a of acceptable as PyList) if (a !== "") return a
  return undefined
}

// A possible-answer dict maps each key to its acceptable values; a gold dict picks one per key.
const goldDict = (spec: PyDict): PyDict => {
  const out = new Map<string, PyValue>()
  for (const [k, acceptable] of spec) {
    if (hasEmpty(acceptable)) continue
    const v = firstValue(acceptable)
    if (v !== undefined) out.set(k, v)
  }
  return out
}

const schemaOf = (functions: ReadonlyArray<PyDict>, name: string): { properties: PyDict | null; required: ReadonlyArray<PyValue> } => {
  for (const f of functions) {
    if (f.get("name") !== name) continue
    const parameters = f.get("parameters")
    if (parameters === undefined || !isDict(parameters)) break
    const properties = parameters.get("properties")
    const required = parameters.get("required")
    return { properties: properties !== undefined && isDict(properties) ? properties : null, required: Array.isArray(required) ? (required as PyList) : [] }
  }
  return { properties: null, required: [] }
}

const propertyType = (properties: PyDict | null, param: string): { type: PyValue | undefined; items: PyValue | undefined } => {
  const p = properties?.get(param)
  if (p === undefined || !isDict(p)) return { type: undefined, items: undefined }
  const items = p.get("items")
  return { type: p.get("type"), items: items !== undefined && isDict(items) ? items.get("type") : undefined }
}

/**
 * The gold answer for a task, as decoded calls: `[]` (no call) for the irrelevance categories,
 * a call to the first function for live_relevance, and for the others one call per possible-answer
 * call with the first acceptable value of each parameter (optional ones, marked by `""`, left out).
 */
export const goldAnswer = (task: Task): PyList => {
  if (task.category === "irrelevance" || task.category === "live_irrelevance") return []
  if (task.possibleAnswer === null) {
    const name = task.functions[0]?.get("name")
    return typeof name === "string" ? [new Map([[name, new Map()]])] : []
  }
  const calls: Array<PyValue> = []
  for (const call of task.possibleAnswer) {
    if (!isDict(call) || call.size !== 1) continue
    const [name, params] = call.entries().next().value as [string, PyValue]
    const schema = schemaOf(task.functions, name)
    const args = new Map<string, PyValue>()
    if (isDict(params)) {
      for (const [param, acceptable] of params) {
        if (hasEmpty(acceptable) && !schema.required.includes(param)) continue
        // A required parameter whose only acceptable value is "" gets "" itself.
        const first = firstValue(acceptable)
        const v = first !== undefined ? first : hasEmpty(acceptable) ? "" : undefined
        if (v === undefined) continue
        const { type, items } = propertyType(schema.properties, param)
        if (type === "dict" && isDict(v)) args.set(param, goldDict(v))
        else if ((type === "array" || type === "tuple") && items === "dict" && Array.isArray(v))
          args.set(param, (v as PyList).map((d) => (isDict(d) ? goldDict(d) : d)))
        else args.set(param, v)
      }
    }
    calls.push(new Map([[name, args]]))
  }
  return calls
}
