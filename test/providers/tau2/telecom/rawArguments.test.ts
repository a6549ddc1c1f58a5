/**
 * A model agent's tool-call arguments reach the telecom tools as the model wrote them: `2.0` is a
 * float there, so refuel_data says "2.0 GB" as upstream's Python does. Through the loopback
 * server (agent and simulated user), the live Model layer, the recording and a replay: this test
 * is about the text on the wire, so it keeps a real server where others script the Model.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import type { Json } from "../../../../src/content/Canonical.ts"
import { evaluate } from "../../../../src/evaluation/evaluate.ts"
import * as LoopbackServer from "../../../../src/testkit/LoopbackServer.ts"
import * as Live from "../../../../src/model/Live.ts"
import { modelAgent } from "../../../../src/model/ModelAgent.ts"
import * as Registry from "../../../../src/model/Registry.ts"
import type { AgentDef } from "../../../../src/schema/AgentDef.ts"
import type { Attempt } from "../../../../src/schema/Attempt.ts"
import { noLimits } from "../../../../src/schema/EnvironmentDef.ts"
import type { ConversationOutput } from "../../../../providers/tau2/common/conversation.ts"
import { loadTelecomData } from "../../../../providers/tau2/telecom/data.ts"
import { capabilities, provider } from "../../../../providers/tau2/telecom/index.ts"
import { makeTelecomTools } from "../../../../providers/tau2/telecom/tools.ts"

const REF = "openai:gpt-4o-mini-2024-07-18"
const model = Effect.runSync(
  Effect.flatMap(Registry.fixture, (file) =>
    Either.match(Registry.resolveIn(file, REF), { onLeft: (e) => Effect.dieMessage(e.message), onRight: Effect.succeed }))
)
const agentDef: AgentDef = { name: "openai:gpt-4o-mini", kind: "llm", model: model.ref, actionSpace: "tools", prompt: "", limits: noLimits }
// Its gold actions refuel C1001's line L1002 with 2.0 GB.
const TASK = "[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]"
const env = (await Effect.runPromise(provider.environments)).find((e) => e.task === TASK)!
const telecom = await Effect.runPromise(loadTelecomData())

const REFUEL = "{\"customer_id\": \"C1001\", \"line_id\": \"L1002\", \"gb_amount\": 2.0}"

const script: ReadonlyArray<LoopbackServer.ScriptTurn> = [
  { match: { system: "You have some tools to perform the actions on your end" }, text: "I am out of data on line L1002, customer C1001." },
  {
    match: { system: "<tech_support_policy>" },
    toolCalls: [{ name: "refuel_data", arguments: { customer_id: "C1001", line_id: "L1002", gb_amount: 2 }, argumentsText: REFUEL }]
  },
  { match: { system: "<tech_support_policy>" }, text: "I added 2.0 GB to line L1002." },
  { match: { system: "You have some tools to perform the actions on your end" }, text: "Thanks. ###STOP###" }
]

const live = Effect.scoped(
  Effect.gen(function*() {
    const server = yield* LoopbackServer.start(script)
    const attempt = yield* evaluate(env, {
      capabilities,
      agentDef,
      agent: modelAgent(agentDef.name, model),
      repetition: 0,
      registryEntry: model as unknown as Json
    }).pipe(
      // The live Model layer the command runs with: these arguments come through a real wire.
      Effect.provide(Live.layerNode),
      Effect.withConfigProvider(
        ConfigProvider.fromMap(new Map([["OPENAI_BASE_URL", server.openAiBaseUrl], ["OPENAI_API_KEY", "sk-test-loopback"]]))
      )
    )
    expect(server.pendingTurns()).toEqual([])
    return attempt
  })
)

const refuelAnswer = (attempt: Attempt) => {
  const messages = (attempt.output as { result: ConversationOutput }).result.messages
  const answer = messages.find((m) => m.role === "tool" && m.name === "refuel_data")
  return answer?.role === "tool" ? answer.content : undefined
}

describe("telecom tools get a model's arguments as it wrote them", () => {
  it("a tool given the arguments' text reads 2.0 as a float; without the text 2 is all there is", () => {
    const refuel = makeTelecomTools("assistant", telecom.toolSpecs, telecom.toolTypes).find((t) => t.spec.name === "refuel_data")!
    const args = { customer_id: "C1001", line_id: "L1002", gb_amount: 2 }
    expect(refuel.run(telecom.initialWorld, args, REFUEL).output).toContain("Successfully added 2.0 GB of data for line L1002")
    expect(refuel.run(telecom.initialWorld, args).output).toContain("Successfully added 2 GB of data for line L1002")
  })

  it.live("a model agent's refuel_data with 2.0 says \"2.0 GB\", and the recorded Attempt replays to the same outcome", () =>
    Effect.gen(function*() {
      const attempt = yield* live
      expect(refuelAnswer(attempt)).toContain("Successfully added 2.0 GB of data for line L1002")
      const write = attempt.recording.find((r) => r.kind === "tool/write" && r.key === "refuel_data")
      expect(write?.request).toMatchObject({ argumentsText: REFUEL })

      const replayed = yield* evaluate(env, {
        capabilities,
        agentDef,
        agent: modelAgent(agentDef.name, model),
        repetition: 0,
        replay: JSON.parse(JSON.stringify(attempt.recording)) as Attempt["recording"],
        registryEntry: model as unknown as Json
      })
      expect(refuelAnswer(replayed)).toBe(refuelAnswer(attempt))
      expect(replayed.verdict).toEqual(attempt.verdict)
      expect(replayed.finalWorld).toBe(attempt.finalWorld)
    }))

  it.effect("the gold candidate plays the task file's arguments as written: refuel_data says \"2.0 GB\" as in upstream's gold run", () =>
    Effect.gen(function*() {
      const gold = yield* provider.scripted("gold", env)
      const attempt = yield* evaluate(env, { capabilities, agentDef: provider.rosterDef("gold"), agent: gold, repetition: 0 })
      expect(attempt.verdict.reward).toBe(1)
      expect(refuelAnswer(attempt)).toContain("Successfully added 2.0 GB of data for line L1002")
    }))
})
