import { describe, expect, it } from "@effect/vitest"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Either } from "effect"
import { LONG_CONTEXT_PATH } from "../../../../providers/bfcl/data.ts"
import { canonDump, parsePythonJson } from "../../../../providers/bfcl/multiturn/canon.ts"
import {
  canonicalError,
  checkMultiTurn,
  isEmptyExecuteResponse,
  isLongContextTask,
  type MultiTurnEntry,
  type MultiTurnOptions,
  type MultiTurnVerdict
} from "../../../../providers/bfcl/multiturn/checker.ts"
import { taskEntries } from "../../../../providers/bfcl/multiturn/equivalence.ts"
import { LONG_CONTEXT_ENV, loadLongContext } from "../../../../providers/bfcl/multiturn/longContext.ts"
import { PyDict } from "../../../../providers/bfcl/multiturn/py.ts"

const dataDir = process.env["ASSAY_DATA_DIR"] ?? "../shared/data"
const v4Dir = join(dataDir, "bfcl", "v4")
const verdictsFile = join(dataDir, "bfcl", "oracle", "multi-turn", "verdicts-dev.jsonl")
const longContextFile = process.env[LONG_CONTEXT_ENV] ?? join(dataDir, "bfcl", LONG_CONTEXT_PATH)
const hasLongContext = existsSync(longContextFile)

const entryOf = taskEntries(v4Dir)
const entry = (id: string): Promise<MultiTurnEntry> => Effect.runPromise(entryOf(id))
const verdict = (e: MultiTurnEntry, answer: unknown, options?: MultiTurnOptions): MultiTurnVerdict => {
  const r = checkMultiTurn(e, answer, options)
  if (Either.isLeft(r)) throw new Error(r.left.message)
  return r.right
}
const gold = (e: MultiTurnEntry) => e.groundTruth.map((turn) => (turn.length > 0 ? [turn] : []))

describe("the eval runner's steps", () => {
  it("an answer that is not a list is an inference error; a wrong number of turns is a forced termination, with upstream's messages", async () => {
    const e = await entry("multi_turn_base_0")
    const inference = verdict(e, { error: "x" })
    expect(inference).toMatchObject({ valid: false, errorType: "multi_turn:inference_error", decoded: null })
    expect(canonDump(inference.error!)).toBe(
      '{"error_message":["Error during inference phase. Model did not output a list of model responses."],"error_type":"multi_turn:inference_error"}'
    )
    const short = verdict(e, gold(e).slice(1))
    expect(short.errorType).toBe("multi_turn:force_terminated")
    expect(short.errorMessage).toBe(
      "Model was force-terminated during inference phase. The length of the model result turns (3) does not match the length of the ground truth turns (4)."
    )
  })

  it("steps that fail to decode or decode to [] / [\"\"] are dropped; a turn left with none fails the empty-turn rule", async () => {
    const e = await entry("multi_turn_base_0")
    const noisy = e.groundTruth.map((turn) => [[], [""], "not a list", [1, 2], ...turn.map((c) => [c])])
    const v = verdict(e, noisy)
    expect(v.valid).toBe(true)
    expect(v.decoded).toEqual(e.groundTruth.map((turn) => turn.map((c) => [c])))
    const emptied = gold(e).map((turn, i) => (i === 2 ? [[""], []] : turn))
    const empty = verdict(e, emptied)
    expect(empty).toMatchObject({ valid: false, errorType: "multi_turn:empty_turn_model_response", errorMessage: "Model response list is empty for turn 2", turn: 2 })
    expect(isEmptyExecuteResponse([])).toBe(true)
    expect(isEmptyExecuteResponse([""])).toBe(true)
    expect(isEmptyExecuteResponse(["ls()"])).toBe(false)
  })

  it("a handler's decoder decides what a step's calls are", async () => {
    const e = await entry("multi_turn_base_0")
    const asText = e.groundTruth.map((turn) => (turn.length > 0 ? [turn.join("\n")] : []))
    const v = verdict(e, asText, { decodeStep: (step) => (typeof step === "string" ? step.split("\n") : undefined) })
    expect(v.valid).toBe(true)
  })

  it("a long-context task without the constants, or a class with no world, cannot be checked (a typed error, not a verdict)", async () => {
    expect(isLongContextTask("multi_turn_long_context_3")).toBe(true)
    expect(isLongContextTask("multi_turn_base_3")).toBe(false)
    const e = await entry("multi_turn_long_context_0")
    const r = checkMultiTurn(e, gold(e))
    expect(Either.isLeft(r) && r.left.reason).toBe("long-context-missing")
    const unknown = checkMultiTurn({ ...e, id: "multi_turn_base_999", involvedClasses: ["WebSearchAPI"] }, [])
    expect(Either.isLeft(unknown) && unknown.left.reason).toBe("unknown-class")
  })
})

describe("the checker against upstream's verdicts (verdicts-dev)", () => {
  const lines = readFileSync(verdictsFile, "utf8").split("\n").filter((l) => l.trim() !== "")
  // The first line of each error type (and a valid one) among the tasks that need no long-context constants
  const chosen = new Map<string, number>()
  lines.forEach((l, n) => {
    const o = JSON.parse(l) as { id: string; error_type: string | null }
    const key = o.error_type ?? "valid"
    if (!isLongContextTask(o.id) && !chosen.has(key)) chosen.set(key, n)
  })

  it("has a line of every error type upstream's runner gives", () => {
    expect([...chosen.keys()].sort()).toEqual([
      "multi_turn:empty_turn_model_response",
      "multi_turn:execution_response_mismatch",
      "multi_turn:force_terminated",
      "multi_turn:inference_error",
      "multi_turn:instance_state_mismatch",
      "valid"
    ])
  })

  for (const [key, n] of chosen) {
    it(`${key}: the verdict, the error dict (states by sha256) and the decoded answer are upstream's (line ${n + 1})`, async () => {
      const raw = lines[n] as string
      const o = JSON.parse(raw) as { id: string; answer: unknown; valid: boolean; error_type: string | null; model_result_decoded?: unknown }
      const v = verdict(await entry(o.id), o.answer, { modelName: `v${n}` })
      expect(v.valid).toBe(o.valid)
      expect(v.errorType).toBe(o.error_type)
      const expected = (parsePythonJson(raw) as PyDict).get("error")
      expect(v.error === null ? null : canonicalError(v.error, { digestStates: true })).toBe(expected === undefined ? null : canonDump(expected))
      if (o.model_result_decoded !== undefined) expect(v.decoded).toEqual(o.model_result_decoded)
    })
  }
})

describe("what upstream's process shares between the model's instances and the ground truth's", () => {
  // Verdicts of upstream's own checker (run locally at the pinned commit) on these answers
  it("TwitterAPI's default mentions list: mentioning the model's tweet shows in the ground truth's tweets too", async () => {
    const e = await entry("multi_turn_base_11")
    const answer = [[["ls(a=True)"]], [["post_tweet(content='file1.txt, file2.txt',tags=['#fileshowcase'])"], ["mention(tweet_id=1, mentioned_usernames=['@shared'])"]]]
    // The states agree (both tweets hold the one list); the ground truth's post_tweet, run after the
    // model's mention, prints the list with the mention in it, a result the model's do not contain
    expect(verdict(e, answer)).toMatchObject({ valid: false, errorType: "multi_turn:execution_response_mismatch", turn: 1 })
  })

  it.runIf(hasLongContext)(`long-context TravelAPI's extension cards: a charge the model makes shows in the ground truth's cards (else skipped: needs ${longContextFile})`, async () => {
    const longContext = await Effect.runPromise(loadLongContext({ dataDir }))
    const e = await entry("multi_turn_long_context_182")
    const answer = [
      [
        ["get_flight_cost(travel_from='ORD', travel_to='SVP', travel_date='2026-07-14', travel_class='business')"],
        ["purchase_insurance(access_token='abc123xyz456', insurance_type='basic', booking_id='booking_901', insurance_cost=100.0, card_id='1234567812345678')"]
      ],
      [["set_budget_limit(access_token='abc123xyz456', budget_limit=20000.0)"]]
    ]
    expect(verdict(e, answer, { longContext })).toMatchObject({ valid: true, errorType: null })
  })
})

describe("the model name", () => {
  it("shows in results where a call's text names a method (upstream's rewrite reaches into string literals)", async () => {
    const e = await entry("multi_turn_base_0")
    const answer = gold(e).map((turn, i) => (i === 0 ? [["echo(content='ls()')"], ...turn] : i === 2 ? [] : turn))
    const v = verdict(e, answer, { modelName: "m-1.5" })
    expect(v.errorType).toBe("multi_turn:empty_turn_model_response")
    expect(canonicalError(v.error!)).toContain('{\\"terminal_output\\": \\"m_1_5_eval_multi_turn_base_0_GorillaFileSystem_instance.ls()\\"}')
  })
})
