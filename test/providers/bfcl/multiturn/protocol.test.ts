/**
 * The multi-turn benchmark's parts a model run relies on: the tasks as upstream's loader builds
 * them, a step's reply decoded as upstream's `decode_execute` decodes it, and the world that runs
 * the calls (live, and from a recording's records).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { goldReplies, goldTurns } from "../../../../providers/bfcl/multiturn/gold.ts"
import { addedFunctionsPromptText, decodeExecute, stepOf } from "../../../../providers/bfcl/multiturn/protocol.ts"
import { loadTasks, type MultiTurnTask } from "../../../../providers/bfcl/multiturn/tasks.ts"
import { callsIn, taskWorld } from "../../../../providers/bfcl/multiturn/world.ts"
import { provider } from "../../../../providers/bfcl/multiturn/provider.ts"
import { Agent, evaluate, World } from "../../../../src/index.ts"

const tasks = await Effect.runPromise(loadTasks())
const task = (id: string): MultiTurnTask => tasks.find((t) => t.id === id)!

describe("the tasks", () => {
  it("are upstream's 800, 200 per category, each with its ground truth turn by turn", () => {
    expect(tasks.length).toBe(800)
    for (const c of ["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"]) {
      expect(tasks.filter((t) => t.category === c).length).toBe(200)
    }
    for (const t of tasks) expect(t.groundTruth.length).toBe(t.question.length)
  })

  it("offer the involved classes' docs in their order, a miss_func task's held-out docs only at their turn", () => {
    const base = task("multi_turn_base_0")
    const missed = task("multi_turn_miss_func_0")
    const names = (t: MultiTurnTask) => t.functions.map((f) => f.get("name"))
    expect(base.involvedClasses).toEqual(["TwitterAPI", "GorillaFileSystem"])
    expect(names(base)).toContain("sort")
    expect(names(base).indexOf("post_tweet")).toBeLessThan(names(base).indexOf("ls"))
    expect(names(missed)).toEqual(names(base).filter((n) => n !== "sort"))
    expect([...missed.heldOut.keys()]).toEqual([3])
    expect(missed.heldOut.get(3)!.map((f) => f.get("name"))).toEqual(["sort"])
    // The turn that adds them has no user message of its own
    expect(missed.question[3]).toEqual([])
    // Prompt mode lists the docs as Python prints them, then upstream's sentence
    expect(addedFunctionsPromptText(missed.heldOut.get(3)!)).toMatch(/^\[\{'name': 'sort', 'description': '.*\}\]\nI have updated some more functions you can choose from\. What about now\?$/s)
  })
})

describe("a step decoded as upstream's decode_execute", () => {
  it("function calling: each call's JSON arguments printed back with Python's repr, joined by ','", () => {
    const r = decodeExecute("tools", [{ cd: '{"folder": "doc"}' }, { f: '{"a": 5.0, "b": true, "c": null, "d": [1, "x"], "e": {"k": 2}}' }])
    expect(r).toEqual({ ok: true, calls: ["cd(folder='doc')", "f(a=5.0,b=True,c=None,d=[1, 'x'],e={'k': 2})"] })
  })

  it("function calling: a text reply does not decode, an empty one is no call, bad JSON is a failure", () => {
    expect(decodeExecute("tools", "I moved it.")).toMatchObject({ ok: false })
    expect(decodeExecute("tools", "")).toEqual({ ok: true, calls: [] })
    expect(decodeExecute("tools", null)).toMatchObject({ ok: false })
    expect(decodeExecute("tools", [{ cd: "{folder" }])).toMatchObject({ ok: false })
    expect(decodeExecute("tools", [{ cd: "[1]" }])).toMatchObject({ ok: false })
  })

  it("prompt mode: Python call text, nested calls and dicts as parse_nested_value prints them", () => {
    expect(decodeExecute("text", "[cd(folder='doc'), mv(source=\"a b\", destination='t')]")).toEqual({ ok: true, calls: ["cd(folder='doc')", "mv(source='a b', destination='t')"] })
    expect(decodeExecute("text", "```\nf(x=g(y=1), d={'a': [1.5, None]})\n```")).toEqual({ ok: true, calls: ["f(x=g(y=1), d={'a': [1.5, None]})"] })
    expect(decodeExecute("text", "[]")).toEqual({ ok: true, calls: [] })
    expect(decodeExecute("text", "I have moved the file.")).toMatchObject({ ok: false })
    // An empty dict argument: upstream's parse_nested_value takes its first key and fails
    expect(decodeExecute("text", "f(d={})")).toEqual({ ok: false, error: "list index out of range" })
  })

  it("a reply with calls is run; one that does not decode, or decodes to none, ends the turn", () => {
    const call = { id: "c1", name: "ls", arguments: {}, argumentsText: "{}" }
    expect(stepOf("tools", { text: null, toolCalls: [call] })).toEqual({ step: { response: [{ ls: "{}" }], calls: ["ls()"] }, run: ["ls()"] })
    expect(stepOf("tools", { text: "Done.", toolCalls: [] }).run).toEqual([])
    expect(stepOf("text", { text: "[]", toolCalls: [] })).toEqual({ step: { response: "[]", calls: [] }, run: [] })
  })
})

describe("the world", () => {
  it("runs calls on the task's instances, each on the state the previous left, without changing the world it was given", () => {
    const t = task("multi_turn_base_0")
    const { tools, world } = taskWorld(t, undefined)
    const execute = tools[0]!
    const run = (w: World.World, call: string) => {
      const outcome = execute.run(w, { call })
      return { output: outcome.output, world: World.apply(w, outcome.writes) }
    }
    const a = run(world, "cd(folder='document')")
    const b = run(a.world, "mkdir(dir_name='temp')")
    const c = run(b.world, "ls()")
    expect(c.output).toBe('{"current_directory_content": ["final_report.pdf", "previous_report.pdf", "temp"]}')
    expect(run(world, "ls()").output).toBe('{"current_directory_content": ["document", "archive"]}')
    expect(callsIn(c.world).map((r) => r.call)).toEqual(["cd(folder='document')", "mkdir(dir_name='temp')", "ls()"])
    // A world whose records came from elsewhere (a recording) is brought up to date by running them again
    const copied = World.apply(world, World.entries(c.world, "calls").map(([key, value]) => ({ table: "calls", key, value: JSON.parse(JSON.stringify(value)) })))
    expect(run(copied, "pwd()").output).toBe('{"current_working_directory": "/workspace/document"}')
    expect(run(copied, "unknown_fn()").output).toBe("Error during execution: name 'unknown_fn' is not defined")
  })

  it("gold plays each turn's ground truth in one step, then a reply with no call", () => {
    const t = task("multi_turn_miss_func_0")
    expect(goldTurns(t, "text").map((r) => r?.text ?? null)).toEqual([
      "[cd(folder='document'), mkdir(dir_name='temp'), mv(source='final_report.pdf', destination='temp')]",
      "[cd(folder='temp'), grep(file_name='final_report.pdf', pattern='budget analysis')]",
      null,
      // A positional argument named after the method's parameter
      "[sort(file_name='final_report.pdf')]",
      "[cd(folder='..'), mv(source='previous_report.pdf', destination='temp'), cd(folder='temp'), diff(file_name1='final_report.pdf', file_name2='previous_report.pdf')]"
    ])
    expect(goldReplies(t, "tools").length).toBe(4 * 2 + 1)
  })
})

describe("gold in prompt mode, through evaluate", () => {
  // Its Python call text goes through upstream's prompt decoder and parse_nested_value, and the results come back as a repr'd user message.
  // All 600 pass (run by hand, ~12 s); here a spread, every 8th task.
  it("passes a spread of base, miss_func and miss_param tasks; replayed from its recording, the same verdict and output", async () => {
    const environments = await Effect.runPromise(provider.environments)
    const agentDef = Agent.referenceDef("gold", "text")
    const run = (env: (typeof environments)[number], replay?: Parameters<typeof evaluate>[1]["replay"]) =>
      Effect.runPromise(evaluate(env, {
        capabilities: provider.capabilities,
        agentDef,
        agent: Agent.scripted("gold", goldReplies(task(env.task), "text")),
        repetition: 0,
        ...(replay !== undefined ? { replay } : {})
      }))
    const chosen = environments.filter((e, i) => e.stratum !== "multi_turn_long_context" && i % 8 === 0)
    expect(chosen.length).toBe(75)
    const failed: Array<string> = []
    for (const env of chosen) {
      const attempt = await run(env)
      if (attempt.verdict.reward !== 1) failed.push(`${env.task}: ${JSON.stringify(attempt.verdict)}`)
    }
    expect(failed).toEqual([])
    const env = chosen.find((e) => e.task === "multi_turn_miss_func_0")!
    const live = await run(env)
    expect((live.output as { result: { mode: string } }).result.mode).toBe("text")
    const replayed = await run(env, live.recording)
    expect(replayed.verdict).toEqual(live.verdict)
    expect(replayed.output).toEqual(live.output)
  })
})
