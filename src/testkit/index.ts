/**
 * assay's test kit (`import … from "assay/testkit"`): what a provider author's tests use, kept out
 * of the library surface. `scriptedModel` is a `Model` layer answering from a script in memory (no
 * socket); `LoopbackServer` is an HTTP model server on 127.0.0.1 speaking the four wire APIs
 * (OpenAI Responses and chat completions, Anthropic Messages, Gemini), for wire-format tests and
 * for agent CLIs. `npx tsx src/testkit/loopback-main.ts --script FILE` runs one by hand.
 */
export * as LoopbackServer from "./LoopbackServer.ts"
export { layerScripted as scriptedModel, scripted, scriptedError, scriptedResponse } from "../model/Model.ts"
