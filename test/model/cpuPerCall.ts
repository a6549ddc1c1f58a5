/**
 * CPU per model call of the live clients against the loopback server, which runs in a child
 * process so that only the client's CPU is counted:
 *   npx tsx test/model/cpuPerCall.ts [CLIENTS_MODULE]   (CALLS=N, default 200)
 * CLIENTS_MODULE defaults to src/model/Clients.ts; pass an older checkout's to compare. Every
 * call goes through `Clients.generate` (the process's shared clients, as `Live.layerNode` builds
 * them once), then, with this checkout, through a `Live.layerLive` built once.
 */
import { spawn } from "node:child_process"
import { rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { ConfigProvider, Context, Effect, Layer, Scope } from "effect"
import type * as ClientsModule from "../../src/model/Clients.ts"
import * as Live from "../../src/model/Live.ts"
import * as Model from "../../src/model/Model.ts"
import * as Registry from "../../src/model/Registry.ts"

const calls = Number(process.env["CALLS"] ?? 200)
const clientsPath = resolve(process.argv[2] ?? "src/model/Clients.ts")
const Clients = (await import(pathToFileURL(clientsPath).href)) as typeof ClientsModule

const script = join(tmpdir(), `assay-cpu-${process.pid}.json`)
writeFileSync(script, JSON.stringify([{ toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }], text: "adding", usage: { input: 10, output: 3 }, repeat: true }]))
const server = spawn(process.execPath, ["--import", "tsx", "src/testkit/loopback-main.ts", "--script", script], { stdio: ["ignore", "pipe", "inherit"] })
const url = await new Promise<string>((ok, fail) => {
  server.stdout.once("data", (d: Buffer) => ok(String(d).trim()))
  server.once("exit", (code) => fail(new Error(`loopback server exited with ${code}`)))
})

const apis = ["openai-responses", "openai-chat", "anthropic-messages", "google"] as const
const baseUrlOf = (api: (typeof apis)[number]) => (api === "anthropic-messages" ? url : api === "google" ? `${url}/v1beta` : `${url}/v1`)
const request = (provider: string): ClientsModule.ModelRequest => ({
  provider,
  model: "m",
  system: "You add numbers.",
  messages: [{ role: "user", content: "1 + 2?" }],
  tools: [{ name: "add", description: "adds", parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } } }]
})
const env = Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["BENCH_KEY", "bench"]])))

const measure = async (label: string, once: Effect.Effect<unknown, unknown>) => {
  const run = (n: number) => Effect.runPromise(Effect.repeatN(once, n - 1).pipe(env))
  await run(20) // warm-up: modules, JIT, connections
  const cpu = process.cpuUsage()
  const started = performance.now()
  await run(calls)
  const used = process.cpuUsage(cpu)
  const wall = performance.now() - started
  console.log(`${label.padEnd(42)} ${((used.user + used.system) / 1000 / calls).toFixed(2).padStart(6)} ms CPU ${(wall / calls).toFixed(2).padStart(6)} ms wall per call`)
}

for (const api of apis) {
  for (const stream of [false, true]) {
    const endpoint = { api, baseUrl: baseUrlOf(api), keyEnv: ["BENCH_KEY"] }
    await measure(`Clients.generate ${api}${stream ? " stream" : ""}`, Clients.generate(request("bench"), { endpoint, stream }))
  }
}

if (process.argv[2] === undefined) {
  // The layer, built once, with a registry whose providers point at the loopback server.
  const file = await Effect.runPromise(Registry.fixture)
  const providers = Object.fromEntries(apis.map((api) => [`bench-${api}`, { id: `bench-${api}`, name: api, api, env: ["BENCH_KEY"], base_url: baseUrlOf(api), models: {} }]))
  const registry = Registry.make({ ...file, providers: { ...file.providers, ...providers } })
  for (const stream of [false, true]) {
    const layer = Live.layerLiveWith({ stream }).pipe(
      Layer.provide(Layer.unwrapEffect(Effect.map(Effect.promise(() => import("../../src/model/Clients.ts")), (c) => c.nodeHttpClient))),
      Layer.provide(Layer.succeed(Registry.Registry, registry))
    )
    const scope = Effect.runSync(Scope.make())
    const model = Context.get(await Effect.runPromise(Layer.buildWithScope(layer, scope)), Model.Model)
    for (const api of apis) await measure(`Live.layerLive ${api}${stream ? " stream" : ""}`, model.generate(request(`bench-${api}`)))
  }
}
server.kill()
rmSync(script, { force: true }) // the loopback's script file, made above
