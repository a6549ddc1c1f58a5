/**
 * Runs the loopback model server until interrupted:
 *   npx tsx src/testkit/loopback-main.ts --script FILE [--port N] [--apis openai-responses,openai-chat,anthropic-messages]
 * Prints the server's URL on stdout (one line), usage hints on stderr.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Schema } from "effect"
import * as LoopbackServer from "./LoopbackServer.ts"

class UsageError extends Schema.TaggedError<UsageError>()("UsageError", { detail: Schema.String }) {
  override get message() {
    return `${this.detail}\nusage: loopback-main --script FILE [--port N] [--apis openai-responses,openai-chat,anthropic-messages]`
  }
}

const argOf = (args: ReadonlyArray<string>, name: string): string | undefined => {
  const at = args.indexOf(name)
  return at >= 0 ? args[at + 1] : undefined
}

const main = Effect.gen(function*() {
  const args = process.argv.slice(2)
  const script = argOf(args, "--script")
  if (script === undefined) return yield* new UsageError({ detail: "--script is required" })
  const portText = argOf(args, "--port") ?? "0"
  const port = Number(portText)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    return yield* new UsageError({ detail: `--port ${portText} is not a port number` })
  }
  const apisText = argOf(args, "--apis")
  const apis: Array<LoopbackServer.WireApi> = []
  for (const name of apisText?.split(",") ?? []) {
    if (!Schema.is(LoopbackServer.WireApi)(name)) {
      return yield* new UsageError({ detail: `--apis: unknown wire API ${name}` })
    }
    apis.push(name)
  }
  const server = yield* LoopbackServer.start(script, { port, ...(apis.length > 0 ? { apis } : {}) })
  yield* Console.log(server.url)
  yield* Console.error(
    `OPENAI_BASE_URL=${server.openAiBaseUrl} ANTHROPIC_BASE_URL=${server.anthropicBaseUrl} GOOGLE_BASE_URL=${server.googleBaseUrl} (Ctrl-C stops)`
  )
  return yield* Effect.never
})

NodeRuntime.runMain(Effect.scoped(main))
