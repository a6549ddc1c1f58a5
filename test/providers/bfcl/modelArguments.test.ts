/**
 * A model candidate's tool-call arguments reach the BFCL checker as the model wrote them: through
 * the loopback server, the live Model layer, the recorded `model/generate` effect and a replay.
 * This test is about the text on the wire, so it keeps a real server where others script the Model.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import type { Json } from "../../../src/content/Canonical.ts"
import { evaluate } from "../../../src/evaluation/evaluate.ts"
import * as LoopbackServer from "../../../src/testkit/LoopbackServer.ts"
import * as Live from "../../../src/model/Live.ts"
import { modelAgent } from "../../../src/model/ModelAgent.ts"
import * as Registry from "../../../src/model/Registry.ts"
import type { AgentDef } from "../../../src/schema/AgentDef.ts"
import type { Attempt } from "../../../src/schema/Attempt.ts"
import { noLimits } from "../../../src/schema/EnvironmentDef.ts"
import { provider } from "../../../providers/bfcl/index.ts"

const REF = "openai:gpt-4o-mini-2024-07-18"
const model = Effect.runSync(
  Effect.flatMap(Registry.fixture, (file) =>
    Either.match(Registry.resolveIn(file, REF), { onLeft: (e) => Effect.dieMessage(e.message), onRight: Effect.succeed }))
)
const agentDef: AgentDef = { name: "openai:gpt-4o-mini", kind: "llm", model: model.ref, actionSpace: "tools", prompt: "", limits: noLimits }
const envs = await Effect.runPromise(provider.environments)
const envOf = (task: string) => envs.find((e) => e.task === task)!

const against = (server: LoopbackServer.LoopbackServer) =>
  Effect.withConfigProvider(
    ConfigProvider.fromMap(new Map([["OPENAI_BASE_URL", server.openAiBaseUrl], ["OPENAI_API_KEY", "sk-test-loopback"]]))
  )

/** One Attempt on `task` whose model answers one call of `name` with `argumentsText`, verbatim. */
const answered = (task: string, name: string, argumentsText: string) =>
  Effect.scoped(
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([
        { toolCalls: [{ name, arguments: JSON.parse(argumentsText) as Record<string, unknown>, argumentsText }] }
      ])
      return yield* evaluate(envOf(task), {
        capabilities: provider.capabilities,
        agentDef,
        agent: modelAgent(agentDef.name, model),
        repetition: 0,
          registryEntry: model as unknown as Json
      }).pipe(Effect.provide(Live.layerNode), against(server))
    })
  )

const replayOf = (task: string, attempt: Attempt) =>
  evaluate(envOf(task), {
    capabilities: provider.capabilities,
    agentDef,
    agent: modelAgent(agentDef.name, model),
    repetition: 0,
    // Through JSON text, as a stored recording is.
    replay: JSON.parse(JSON.stringify(attempt.recording)) as Attempt["recording"],
    registryEntry: model as unknown as Json
  })

const failed = (attempt: Attempt) => Object.keys(attempt.verdict.checks).filter((k) => !attempt.verdict.checks[k])

describe("bfcl model candidates are checked on the arguments as the model wrote them", () => {
  it.live("an integer parameter answered 5.0 is a float, so the type check fails as upstream's; 5 passes", () =>
    Effect.gen(function*() {
      // simple_python_1: math_factorial(number: integer). Upstream converts int to float, never float to int.
      const float = yield* answered("simple_python_1", "math_factorial", "{\"number\": 5.0}")
      const int = yield* answered("simple_python_1", "math_factorial", "{\"number\": 5}")
      expect(float.verdict.reward).toBe(0)
      expect(failed(float)).toEqual(["wrong-type"])
      expect(float.verdict.details).toMatchObject({ errorType: "type_error:simple" })
      expect(int.verdict.reward).toBe(1)
    }))

  it.live("a list-of-floats parameter answered [1.0, 3.0] passes and [1, 3] fails (upstream converts only a top-level int)", () =>
    Effect.gen(function*() {
      const floats = yield* answered("simple_python_13", "calculate_area_under_curve", "{\"function\": \"x**2\", \"interval\": [1.0, 3.0]}")
      const ints = yield* answered("simple_python_13", "calculate_area_under_curve", "{\"function\": \"x**2\", \"interval\": [1, 3]}")
      expect(floats.verdict.reward).toBe(1)
      expect(failed(ints)).toEqual(["wrong-type"])
    }))

  it.live("a recorded Attempt replays, with no server, to the same verdict: the arguments' text is in the recording", () =>
    Effect.gen(function*() {
      const attempt = yield* answered("simple_python_1", "math_factorial", "{\"number\": 5.0}")
      const generate = attempt.recording.find((r) => r.kind === "model/generate")
      expect(JSON.stringify(generate)).toContain(JSON.stringify("{\"number\": 5.0}"))
      const replayed = yield* replayOf("simple_python_1", attempt)
      expect(replayed.verdict).toEqual(attempt.verdict)
      expect(replayed.output).toEqual(attempt.output)
      expect(failed(replayed)).toEqual(["wrong-type"])
    }))
})
