/**
 * One line of BFCL's dev oracle corpus graded as a stream of answers would be: the line parsed
 * (Python-flavoured JSON; only its id and answer are built), its answer taken as the decoder's
 * outcome, and checked. Shared by the
 * in-process passes (bench/bfcl.ts) and the fresh-process ones (bench/bfcl-pass.ts).
 */
import { check, type DecodeOutcome } from "../providers/bfcl/checker.ts"
import type { Task } from "../providers/bfcl/data.ts"
import { parsePyJsonFields } from "../providers/bfcl/pyjson.ts"

// The line's verdict (valid, error_type, errors) and category are never read here: checked as
// JSON, not built.
const READ = new Set(["id", "answer"])

/** The checker's verdict on the line's answer, or undefined when the line names no known task. */
export const checkLine = (line: string, byId: ReadonlyMap<string, Task>): ReturnType<typeof check> | undefined => {
  const r = parsePyJsonFields(line, READ)
  if (!r.ok || !(r.value instanceof Map)) return undefined
  const id = r.value.get("id")
  const answer = r.value.get("answer")
  const t = typeof id === "string" ? byId.get(id) : undefined
  if (t === undefined || answer === undefined) return undefined
  let outcome: DecodeOutcome = { _tag: "Decoded", value: answer }
  if (t.possibleAnswer === null && answer instanceof Map) {
    const d = answer.get("decoded")
    const m = answer.get("decode_error")
    outcome = d !== undefined ? { _tag: "Decoded", value: d } : { _tag: "DecodeError", message: typeof m === "string" ? m : "" }
  }
  return check(t, outcome)
}
