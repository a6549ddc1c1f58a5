/**
 * BFCL result lines read as upstream's runner wrote them and graded by assay (providers/bfcl/results.ts
 * → the protocol's output → decode → checker): each answer of upstream's oracle corpus, written as
 * a function-calling line and as a prompting line, gets the verdict upstream's own code gave it.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { check } from "../../providers/bfcl/checker.ts"
import { loadAll, RELEVANCE_CATEGORIES, type Category, type Task } from "../../providers/bfcl/data.ts"
import { decodeOutput, type Output } from "../../providers/bfcl/index.ts"
import { isDict, parsePyJson, PyTuple, type PyValue } from "../../providers/bfcl/pyjson.ts"
import { detectFormat, fcReply, promptReply, type ResultLine } from "../../providers/bfcl/results.ts"
import { fcResult, line, promptResult } from "./resultFiles.ts"

const dataDir = process.env["ASSAY_DATA_DIR"] ?? ""
const tasks = new Map<string, Task>(Effect.runSync(loadAll()).map((t) => [t.id, t]))

interface OracleLine {
  readonly category: Category
  readonly id: string
  readonly answer: PyValue
  readonly valid: boolean
  readonly errorType: string | null
}

const oracle: ReadonlyArray<OracleLine> = readFileSync(join(dataDir, "bfcl", "oracle", "verdicts-dev.jsonl"), "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => {
    const parsed = parsePyJson(l)
    if (!parsed.ok || !isDict(parsed.value)) throw new Error(`oracle line: ${l.slice(0, 80)}`)
    const v = parsed.value
    return { category: v.get("category") as Category, id: v.get("id") as string, answer: v.get("answer") ?? null, valid: v.get("valid") === true, errorType: (v.get("error_type") ?? null) as string | null }
  })

const hasTuple = (v: PyValue): boolean =>
  v instanceof PyTuple || (Array.isArray(v) ? v.some(hasTuple) : isDict(v) ? [...v.values()].some(hasTuple) : false)

/** Answers a handler could have stored: a list of one-call objects whose arguments are objects. */
const callList = (v: PyValue): v is ReadonlyArray<PyValue> =>
  Array.isArray(v) && v.every((c) => isDict(c) && c.size === 1 && isDict(c.values().next().value as PyValue))

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/
const namesAreIdentifiers = (answer: ReadonlyArray<PyValue>): boolean =>
  answer.every((c) => isDict(c) && [...(c.values().next().value as ReadonlyMap<string, PyValue>).keys()].every((k) => IDENTIFIER.test(k)))

/** A result line's `result` as the file has it, read back as the import reads it. */
const resultOf = (id: string, result: unknown): { readonly result: PyValue; readonly line: ResultLine } => {
  const parsed = parsePyJson(line(id, result))
  if (!parsed.ok || !isDict(parsed.value)) throw new Error("line")
  const value = parsed.value.get("result") ?? null
  return { result: value, line: { id, result: value, inputTokens: 100, outputTokens: 20 } }
}

/** The verdict assay gives a line, as the import's Attempt would be graded. */
const verdictOf = (task: Task, mode: "tools" | "text", result: unknown) => {
  const { result: value, line: l } = resultOf(task.id, result)
  const reply = mode === "tools" ? fcReply("m", value, l) : promptReply("m", value, l)
  const output: Output = { mode, text: reply.text, toolCalls: reply.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments as never, ...(c.argumentsText !== undefined ? { argumentsText: c.argumentsText } : {}) })) }
  return check(task, decodeOutput(output), { underscoreToDot: mode === "tools" })
}

describe("BFCL result lines graded as upstream grades them", () => {
  const ast = oracle.filter((o) => !RELEVANCE_CATEGORIES.has(o.category) && callList(o.answer))

  // Function-calling handlers offer `a.b` as `a_b` and upstream grades them with underscore_to_dot,
  // under which the corpus's answers (graded without it) would be judged otherwise: tasks whose
  // functions have a dotted name are left to the prompting case.
  const dotted = (id: string) => tasks.get(id)!.functions.some((f) => String(f.get("name")).includes("."))

  it("every call-list answer of the oracle corpus, as a function-calling line, gets upstream's verdict", () => {
    const lines = ast.filter((o) => !hasTuple(o.answer) && !dotted(o.id))
    expect(lines.length).toBeGreaterThan(7_000)
    const differ = lines.flatMap((o) => {
      const v = verdictOf(tasks.get(o.id)!, "tools", fcResult(o.answer as ReadonlyArray<PyValue>))
      return v.valid === o.valid && v.errorType === o.errorType ? [] : [{ id: o.id, upstream: o.errorType, assay: v.errorType }]
    })
    expect(differ).toEqual([])
  })

  it("every call-list answer of the oracle corpus, as a prompting line (Python call text), gets upstream's verdict", () => {
    const lines = ast.filter((o) => namesAreIdentifiers(o.answer as ReadonlyArray<PyValue>))
    expect(lines.length).toBeGreaterThan(10_000)
    const differ = lines.flatMap((o) => {
      const v = verdictOf(tasks.get(o.id)!, "text", promptResult(o.answer as ReadonlyArray<PyValue>))
      return v.valid === o.valid && v.errorType === o.errorType ? [] : [{ id: o.id, upstream: o.errorType, assay: v.errorType }]
    })
    expect(differ).toEqual([])
  })

  it("an output that does not decode is upstream's decoding failure, and passes an irrelevance task", () => {
    const simple = tasks.get("simple_python_0")!
    const irrelevance = tasks.get("irrelevance_0")!
    const relevance = tasks.get("live_relevance_0-0-0")!
    // Text where calls were due, arguments that are not JSON, an item that is no call, prose in prompt mode.
    for (const [mode, result] of [
      ["tools", "The area is 25 square units."],
      ["tools", [{ calculate_triangle_area: "{\"base\": 10, \"height\": " }]],
      ["tools", ["calculate_triangle_area"]],
      ["tools", null],
      ["text", "calculate_triangle_area(base=10, height="],
      ["text", "The area is 25 square units."]
    ] as const) {
      expect(verdictOf(simple, mode, result), JSON.stringify(result)).toMatchObject({ valid: false, errorType: "ast_decoder:decoder_failed" })
      expect(verdictOf(irrelevance, mode, result), JSON.stringify(result)).toMatchObject({ valid: true })
      expect(verdictOf(relevance, mode, result), JSON.stringify(result)).toMatchObject({ valid: false, errorType: "relevance_error:decoder_failed" })
    }
  })

  it("a call on an irrelevance task is upstream's irrelevance_error; no call (text, an empty list) passes it", () => {
    const task = tasks.get("irrelevance_0")!
    expect(verdictOf(task, "tools", [{ calculate_area: "{\"base\": 10}" }])).toMatchObject({ valid: false, errorType: "irrelevance_error:decoder_success" })
    expect(verdictOf(task, "text", "[calculate_area(base=10)]")).toMatchObject({ valid: false, errorType: "irrelevance_error:decoder_success" })
    expect(verdictOf(task, "tools", [])).toMatchObject({ valid: true })
    expect(verdictOf(task, "tools", "")).toMatchObject({ valid: true })
  })

  it("arguments a handler stored already decoded are read with ints and floats apart", () => {
    const task = tasks.get("simple_python_0")!
    expect(verdictOf(task, "tools", [{ calculate_triangle_area: { base: 10, height: 5 } }])).toMatchObject({ valid: true })
    // 5.0 for an integer parameter: upstream's type_error, as when the arguments are JSON text.
    const float = parsePyJson("[{\"calculate_triangle_area\": {\"base\": 10, \"height\": 5.0}}]")
    if (!float.ok) throw new Error("parse")
    const { line: l } = resultOf(task.id, null)
    const reply = fcReply("m", float.value, l)
    expect(reply.toolCalls[0]?.argumentsText).toBe("{\"base\": 10, \"height\": 5.0}")
  })

  it("the format is function calling when any output is a list of calls, or the folder says FC; else prompting", () => {
    expect(detectFormat(["no call", [new Map([["f", "{}"]])]], "some-model").format).toBe("fc")
    expect(detectFormat(["no call", "[f(a=1)]"], "some-model").format).toBe("prompt")
    expect(detectFormat(["no call", "still none"], "gpt-4o-2024-11-20-FC").format).toBe("fc")
  })
})
