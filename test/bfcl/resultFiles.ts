/**
 * BFCL result files as upstream's runner writes them (`base_handler.write`: one JSON line per task,
 * `{"id", "result", "input_token_count", "output_token_count", "latency"}`), built from answers:
 * function-calling handlers store `[{name: "<arguments as json.dumps writes them>"}]` (names with
 * `.` replaced by `_`, as those handlers offer them), prompting handlers the reply's Python text.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { isDict, type PyDict, pyJsonDumps, pyRepr, type PyValue } from "../../providers/bfcl/pyjson.ts"
import { toolNameOf } from "../../providers/bfcl/tools.ts"

/** One call per `{name: {param: value}}` of the answer. */
const callsOf = (answer: ReadonlyArray<PyValue>): ReadonlyArray<readonly [string, PyDict]> =>
  answer.flatMap((call) => {
    if (!isDict(call)) return []
    const [name, args] = call.entries().next().value as [string, PyValue]
    return isDict(args) ? [[name, args] as const] : []
  })

/** The function-calling result of a decoded answer; with `noCallText`, that text where it has no call (as an API reply without tool calls). */
export const fcResult = (answer: ReadonlyArray<PyValue>, noCallText?: string): unknown => {
  const calls = callsOf(answer)
  return calls.length === 0 && noCallText !== undefined ? noCallText : calls.map(([name, args]) => ({ [toolNameOf(name)]: pyJsonDumps(args) }))
}

/** The prompting result of a decoded answer: `[f(a=1, b='x'), g()]` as Python prints its values; with `noCallText`, that text where it has no call. */
export const promptResult = (answer: ReadonlyArray<PyValue>, noCallText?: string): string => {
  const calls = callsOf(answer)
  return calls.length === 0 && noCallText !== undefined ? noCallText : `[${calls.map(([name, args]) => `${name}(${[...args].map(([k, v]) => `${k}=${pyRepr(v)}`).join(", ")})`).join(", ")}]`
}

/** One line as the runner writes it. */
export const line = (id: string, result: unknown): string => JSON.stringify({ id, result, input_token_count: 100, output_token_count: 20, latency: 0.5 })

const GROUP = (category: string) => (category.startsWith("live_") ? "live" : "non_live")

/** Writes `BFCL_v4_<category>_result.json` files under `dir/<group>/`, as upstream lays them out. */
export const writeResultFiles = (dir: string, byCategory: ReadonlyMap<string, ReadonlyArray<string>>): void => {
  for (const [category, lines] of byCategory) {
    const folder = join(dir, GROUP(category))
    mkdirSync(folder, { recursive: true })
    writeFileSync(join(folder, `BFCL_v4_${category}_result.json`), lines.map((l) => `${l}\n`).join(""))
  }
}
