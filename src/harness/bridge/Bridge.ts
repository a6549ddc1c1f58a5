/**
 * An agent CLI as a candidate on any benchmark: the bridge between a protocol, which asks an agent
 * for one reply at a time, and a CLI, which runs its own loop.
 *
 * Per Attempt, one HTTP server on 127.0.0.1 serves two routes: `/mcp`, the protocol's tools over
 * MCP, and the model wire APIs, a proxy the CLI's model endpoint points at. The protocol stays the
 * one driver of the conversation:
 *
 * - a model request of the CLI is read into assay's request shape and made as a
 *   `model/generate:agent` effect through the Attempt's stack (admission, paired faults,
 *   recording, the spend cap, the Model service) by the built-in agent's own call
 *   (`ModelAgent.call`): a fault is retried by its rule, and the tries are one metered call. The
 *   CLI sees only the outcome: the answer, in its wire format, which becomes the agent's reply to
 *   the protocol (its tool calls under the protocol's names, or its text); or, once the retries are
 *   spent, the fault (as the status a vendor would send), which ends the Attempt as it ends the
 *   built-in agent's: the CLI is stopped, and a request it makes after is answered so, never made;
 * - the protocol runs those tool calls as the built-in agent's would be run (`tool/*` effects, in
 *   the transcript); the CLI's MCP `tools/call`s are answered with the results the protocol got;
 * - when the CLI has answered in text and the protocol comes back with a user's message (tau2),
 *   the CLI is started again on its own session (resume) with that message.
 *
 * So the transcript is the built-in agent's form, the evaluator grades a harness like a model,
 * and a replay needs no CLI: the recorded `model/generate:agent` requests are made again, in order,
 * by the same call (the faults drawn again, the retries alike), and answered from the recording.
 *
 * A call that ends the Attempt (its faults outlast the retries, the spend cap or the Attempt's
 * wallet refuses it: a side request's as a turn's, as the built-in agent's call would) stops the
 * CLI at once. How the session ended is added to the recording as one entry of kind
 * `harness/ended` (not an effect: which call ended it, with what), so that a replay whose
 * recording runs out ends the same way, reading it rather than working it out.
 *
 * Model requests the CLI makes besides its turns (a title, a router, a memory note: a request that
 * offers none of the protocol's tools while the protocol has some) are made by the same call as
 * `model/generate:agent-aux` effects: metered, capped, faulted, retried and recorded on a site of
 * their own, so the agent's own occurrences pair with the built-in agent's.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes, randomUUID } from "node:crypto"
import * as fs from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { Config, ConfigProvider, Effect, Either, Option, Queue, Ref, Runtime, Schema } from "effect"
import type { Json } from "../../content/Canonical.ts"
import { canonicalUnsafe } from "../../content/Canonical.ts"
import { BudgetExceeded, type Wallet } from "../../budget/Wallet.ts"
import { AgentError, type Agent, type AgentFailure } from "../../evaluation/Agent.ts"
import type { AgentInput, AgentReply, Message, ToolCall } from "../../evaluation/Conversation.ts"
import { defaultOutputBound, ModelResponse, type ModelRequest } from "../../model/Model.ts"
import { call as modelCall, MODEL_CALL_RETRIES, requestOf as builtInRequestOf } from "../../model/ModelAgent.ts"
import type { ResolvedModel } from "../../model/Registry.ts"
import {
  type Answer,
  errorBody,
  type Ids,
  isObject,
  type JsonObject,
  readBody,
  routeOf,
  sendAnswer,
  sendJson,
  tokensOf
} from "../../model/WireServe.ts"
import { type CliUsage, type RecordedEffect, SESSION_ENDED_KIND, type TokenCounts } from "../../schema/Attempt.ts"
import type { EffectKind, FaultSpec } from "../../schema/EnvironmentDef.ts"
import * as World from "../../world/World.ts"
import * as WE from "../../world/WorldEffects.ts"
import type { HarnessName } from "../Harness.ts"
import { adapters } from "../adapters/index.ts"
import { isTranscriptError } from "../Harness.ts"
import { RUN_TOKEN_VARIABLE, terminate } from "../Process.ts"
import { jsonlFilesUnder } from "../SessionFiles.ts"
import { type FolderTask, readFiles, writeFiles } from "./Folder.ts"
import { bridgedInvocation, nativeEntry } from "./Invocations.ts"
import { handleMcp, type McpToolResult } from "./Mcp.ts"
import { toolNames, type ToolNames } from "./Tools.ts"
import { readRequest, type WireRequest } from "./WireRequest.ts"
import type { Reading } from "../Allowance.ts"
import type { Login, Vendor } from "./Subscription.ts"
import { type Bind, installFolder, Sandbox, type SandboxService } from "../../sandbox/Sandbox.ts"

export interface BridgeOptions {
  readonly harness: HarnessName
  /** Absolute path of the CLI's binary. */
  readonly binary: string
  /** The model the CLI's calls are made with (assay's call, whatever model id the CLI names). */
  readonly model: ResolvedModel
  /** The model id the CLI is told. */
  readonly cliModel: string
  /**
   * The recorded effects of the Attempt when it is replayed: the agent then makes the recorded
   * model requests again instead of running the CLI.
   */
  readonly replay?: ReadonlyArray<RecordedEffect> | undefined
  /**
   * The Attempt's fault draws (its environment's fault spec, and `benchmark/task`), read only by
   * the replay of a recording made before the bridge recorded how a session ended (no
   * `harness/ended` entry): when it has no more calls of the agent, they tell a call whose faults
   * ended the Attempt (its tries all faulted, so none was recorded) from a CLI that stopped on its
   * own. Without them that replay makes the call and lets the faults layer decide.
   */
  readonly draws?: { readonly spec: FaultSpec | null; readonly task: string } | undefined
  /** How long the CLI may take to list the MCP tools before its first model call; default 120 s. */
  readonly readinessMs?: number
  /** The CLI's own tools stay on; default off. */
  readonly ownTools?: boolean
  /**
   * The task is a folder: the world's files are the CLI's work folder, its own tools on. What it
   * changes there is written into the world (before each of its model calls) as calls of the
   * protocol's write tool, `tool/write:workspace-sync` effects; the protocol sees only the calls of
   * its own tools.
   */
  readonly folder?: FolderTask
  /** The folder the CLI works in; default a fresh empty one. */
  readonly workDir?: string
  /** Called with each line of the CLI's stderr (diagnostics); default: dropped. */
  readonly onStderr?: (line: string) => void
  /** Holds every MCP answer this long: a test's slow MCP server. */
  readonly mcpDelayMs?: number
  /**
   * The CLI runs on the user's subscription login (claude only): no placeholder key; each of its
   * calls is made with the Authorization it sent, forwarded unchanged to the vendor, and the
   * vendor's quota readings of each answer are given to `onQuota`.
   */
  readonly subscription?: {
    readonly login: Login
    readonly vendor: Vendor
    readonly onQuota: (readings: ReadonlyArray<Reading>) => void
  }
  /** The calls are a subscription's (live, or replayed): no list price, the model id marked. */
  readonly billing?: "subscription"
}

/** A bridged agent: the protocol's view, and the end of the CLI's session. */
export interface BridgedAgent extends Agent {
  readonly close: Effect.Effect<void>
}

const AGENT_KEY = "agent"
const AUX_KEY = "agent-aux"
/** The effect key of a folder task's file written back from the CLI's folder into the world. */
const SYNC_KEY = "workspace-sync"
/** A write back the run injected a fault into is made again (the CLI's own write happened): at most this often. */
export const SYNC_TRIES = 8


/** A call of the session, as made through the Attempt's stack. */
interface SessionCall {
  readonly kind: string
  readonly key: string
  readonly request: Json
}

/** The failures of a call that end the Attempt, as they end the built-in agent's. */
type CallEnding = WE.EffectFault | WE.EffectRefused | BudgetExceeded
const endsAttempt = (e: WE.EffectError | AgentFailure): e is CallEnding =>
  e._tag === "EffectFault" || e._tag === "EffectRefused" || e._tag === "BudgetExceeded"

/** What ends a bridged agent's reply, as the recording keeps it. */
const Failure = Schema.Union(AgentError, WE.EffectFault, WE.EffectRefused, WE.EffectFailed, BudgetExceeded)
const EndedOutcome = Schema.Struct({
  call: Schema.NullOr(Schema.Struct({ kind: Schema.String, key: Schema.String })),
  failure: Failure
})

/**
 * The recording's entry for a session that ended with `failure`: its key is the site of the call
 * that ended it (`model/generate:agent`, `tool/write:workspace-sync`, …) or `cli` (the CLI stopped,
 * or never started), its request that call's, its outcome the failure.
 */
const endedEntry = (call: SessionCall | null, failure: AgentFailure): RecordedEffect => ({
  kind: SESSION_ENDED_KIND,
  key: call === null ? "cli" : `${call.kind}:${call.key}`,
  occurrence: 1,
  request: call?.request ?? null,
  outcome: { ok: Schema.encodeSync(EndedOutcome)({ call: call === null ? null : { kind: call.kind, key: call.key }, failure }) }
})

/** How a recorded session ended; undefined for a recording made before the bridge recorded it. */
const endedOf = (recording: ReadonlyArray<RecordedEffect>): { readonly entry: RecordedEffect; readonly call: SessionCall | null; readonly failure: AgentFailure } | undefined => {
  const entry = recording.find((r) => r.kind === SESSION_ENDED_KIND)
  if (entry === undefined || !("ok" in entry.outcome)) return undefined
  const decoded = Schema.decodeUnknownEither(EndedOutcome)(entry.outcome.ok)
  // An entry this version cannot read is as none: the replay falls back to what it did without one.
  if (Either.isLeft(decoded)) return undefined
  const { call, failure } = decoded.right
  return { entry, call: call === null ? null : { ...call, request: entry.request as Json }, failure }
}

/** The statuses a vendor sends for what a fault stands for (the CLI sees one only once assay's retries are spent). */
const faultStatus = (reason: WE.EffectFault["reason"]): number =>
  reason === "rate-limit" ? 429 : reason === "timeout" ? 504 : reason === "unreachable" ? 502 : 500

interface ModelEvent {
  readonly _tag: "model"
  readonly wire: WireRequest
  /** On a subscription: the CLI's credential headers, to forward with this call. */
  readonly login: Record<string, string> | undefined
  readonly answer: (outcome: Either.Either<ModelResponse, WE.EffectError | AgentFailure>) => void
}
interface ExitEvent {
  readonly _tag: "exit"
  /** which start of the CLI ended (a resumed session is a new start) */
  readonly generation: number
  readonly code: number | null
  readonly signal: string | null
}
/** A side request ended the Attempt (its faults outlasted the retries, or it was refused). */
interface GaveUpEvent {
  readonly _tag: "gave-up"
  readonly failure: CallEnding
}
type Event = ModelEvent | ExitEvent | GaveUpEvent

// The reasons of a fault, as EffectFault declares them: a recorded error of one is a try to retry.
const faultReasons: ReadonlySet<string> = new Set(WE.EffectFault.fields.reason.literals)

/**
 * The calls of one site (kind and key) in a recording, each as its first try and where it was made:
 * an entry after a recorded fault (one met at the handler) is that call's retry, which the replay's
 * retry rule makes again, not a call of its own.
 */
const callsOf = (recording: ReadonlyArray<RecordedEffect>, kind: string, key: string): Array<{ readonly entry: RecordedEffect; readonly at: number }> => {
  const calls: Array<{ readonly entry: RecordedEffect; readonly at: number }> = []
  let retrying = false
  recording.forEach((r, at) => {
    if (r.kind !== kind || r.key !== key) return
    if (!retrying) calls.push({ entry: r, at })
    // A permanent fault (a refused key) is not retried: the next entry is a call of its own.
    retrying = "error" in r.outcome && faultReasons.has(r.outcome.error.reason) && r.outcome.error.permanent !== true
  })
  return calls
}

/** The request assay makes for a CLI's request: the candidate's model, the protocol's tool names. */
const requestOf = (wire: WireRequest, model: ResolvedModel, names: ToolNames): ModelRequest => {
  const rename = (name: string) => names.ours(name) ?? name
  // At most what the built-in agent asks for (the worst case the spend cap reserves), the
  // registry's limit, and what the CLI asked for.
  const bound = Math.min(defaultOutputBound(model.model.limit.output), wire.maxOutputTokens ?? Infinity)
  return {
    provider: model.provider,
    model: model.model.id,
    system: wire.system,
    messages: wire.messages.map((m) =>
      m.role === "assistant" && m.toolCalls !== undefined
        ? { ...m, toolCalls: m.toolCalls.map((c) => ({ ...c, name: rename(c.name) })) }
        : m.role === "tool"
        ? { ...m, name: rename(m.name) }
        : m
    ),
    tools: wire.tools.map((t) => ({ ...t, name: rename(t.name) })),
    maxOutputTokens: bound
  }
}

/** The tool names of a Responses request that came from a `namespace` group. */
const namespaced = (wire: WireRequest): ReadonlySet<string> => new Set(wire.namespaced ?? [])

/** The answer the CLI gets: the response with the tool names the CLI's model must call. */
const answerOf = (response: ModelResponse, wire: WireRequest, theirs: (name: string) => string): Answer => ({
  text: response.text,
  toolCalls: response.toolCalls.map((c) => {
    const name = theirs(c.name)
    const at = name.lastIndexOf("__")
    // A Responses client that grouped the tool in a namespace gets the call back the same way.
    const grouped = wire.api === "openai-responses" && namespaced(wire).has(name) && at > 0
    return {
      id: c.id,
      name: grouped ? name.slice(at + 2) : name,
      arguments: c.arguments,
      argumentsText: c.argumentsText ?? JSON.stringify(c.arguments),
      ...(grouped ? { namespace: name.slice(0, at) } : {})
    }
  }),
  usage: {
    input: response.usage.inputTokens,
    output: response.usage.outputTokens,
    cacheRead: response.usage.cacheReadTokens,
    cacheWrite: response.usage.cacheWriteTokens,
    reasoning: 0
  },
  model: wire.model.length > 0 ? wire.model : response.model
})

const keyOf = (headers: IncomingMessage["headers"], url: string): string | undefined => {
  const bearer = headers["authorization"]
  if (typeof bearer === "string" && bearer.startsWith("Bearer ")) return bearer.slice(7)
  for (const name of ["x-api-key", "x-goog-api-key", "api-key"]) {
    const v = headers[name]
    if (typeof v === "string") return v
  }
  return new URL(url, "http://127.0.0.1").searchParams.get("key") ?? undefined
}

/** Ids unique within the Attempt, for answers the CLI keeps in one conversation. */
const idMaker = (): Ids => {
  const counters = new Map<string, number>()
  return {
    next: (prefix) => {
      const n = (counters.get(prefix) ?? 0) + 1
      counters.set(prefix, n)
      return `${prefix}_assay${String(n).padStart(4, "0")}`
    }
  }
}

interface Pending {
  readonly name: string
  readonly argsKey: string
  readonly resolve: (result: McpToolResult) => void
}
interface Known {
  readonly name: string
  readonly argsKey: string
  readonly result: McpToolResult
  used: boolean
}

const argsKeyOf = (args: unknown): string => {
  try {
    return canonicalUnsafe(args as Json)
  } catch {
    // Arguments canonical JSON cannot hold (a NaN): matched by name and order alone.
    return ""
  }
}

/** The live session: the server, the CLI, and what passes between them and the protocol. */
interface Live {
  readonly server: Server
  readonly url: string
  readonly root: string
  readonly workDir: string
  readonly stateDir: string
  readonly events: Queue.Queue<Event>
  readonly token: string
  child: ChildProcess | undefined
  running: boolean
  generation: number
  stderrTail: Array<string>
  /** What each start of the CLI printed on stdout: its own account of the run (usage). */
  stdout: Array<string>
}

/**
 * What of a CLI's installation the sandbox shows, read-only: the outermost node_modules folder its
 * binary lies in (an npm CLI needs its packages), else its install folder.
 */
const installRootOf = (binary: string): ReadonlyArray<Bind> => {
  let real: string
  try {
    real = fs.realpathSync(binary)
  } catch {
    // Not there: the spawn fails and says so.
    return []
  }
  const parts = real.split(path.sep)
  const at = parts.indexOf("node_modules")
  if (at > 0) return [{ source: parts.slice(0, at + 1).join(path.sep) }]
  const folder = installFolder(real)
  return folder === undefined ? [] : [folder]
}

/**
 * The CLI's own count of the model calls of its runs in the Attempt, from what it printed and the
 * session files it left (read as the adapter reads a harness run); null when it gave none.
 */
const cliCounts = (harness: HarnessName, s: Live): TokenCounts | null => {
  const parsed = adapters[harness].parse({ stdout: s.stdout.join("\n"), stderr: "", sessionFiles: jsonlFilesUnder(adapters[harness].sessionDirs(s.stateDir)) })
  if (isTranscriptError(parsed) || parsed.calls.length === 0) return null
  return parsed.calls.reduce<TokenCounts>((sum, c) => ({
    inputTokens: sum.inputTokens + c.input,
    outputTokens: sum.outputTokens + c.output,
    cacheReadTokens: sum.cacheReadTokens + (c.cacheRead ?? 0),
    cacheWriteTokens: sum.cacheWriteTokens + (c.cacheWrite ?? 0)
  }), { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 })
}

const SUBSCRIPTION_MARK = "@subscription"

/** A forwarded body with the vendor's own model id (the subscription mark taken off). */
const unmarked = (raw: string): string => {
  let body: unknown
  try {
    body = JSON.parse(raw)
  } catch {
    // Not JSON: the vendor answers it as it would.
    return raw
  }
  if (!isObject(body) || typeof body["model"] !== "string" || !body["model"].endsWith(SUBSCRIPTION_MARK)) return raw
  return JSON.stringify({ ...body, model: body["model"].slice(0, -SUBSCRIPTION_MARK.length) })
}

/** The CLI's credential headers of a request (on a subscription): forwarded with its call, never recorded. */
const loginOf = (headers: IncomingMessage["headers"], vendor: Vendor): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const name of vendor.credentialHeaders) {
    const v = headers[name]
    if (typeof v === "string") out[name] = v
  }
  return out
}

const tail = (lines: ReadonlyArray<string>): string => lines.slice(-8).join("\n").slice(-2000)

/** The CLI's last stderr line, as `: "…"` on one line, or nothing when it printed none. */
const lastWords = (lines: ReadonlyArray<string>): string => {
  const last = [...lines].reverse().find((l) => l.trim() !== "")?.replace(/\s+/g, " ").trim()
  return last === undefined ? "" : `: ${JSON.stringify(last.length > 200 ? `${last.slice(0, 200)}…` : last)}`
}

export const bridgedAgent = (name: string, options: BridgeOptions): BridgedAgent => {
  const readinessMs = options.readinessMs ?? 120_000
  let names: ToolNames | undefined
  let offered = 0
  /** The protocol's tools by name (a folder task's reply carries only these). */
  let protocolTools: ReadonlySet<string> = new Set()
  /** A folder task's files as the world and the folder last agreed on them. */
  const synced = new Map<string, string>()
  let live: Live | undefined
  /** Messages of the transcript already passed to the CLI. */
  let seen = 0
  let turns = 0
  let started = false
  const sessionId = randomUUID()
  /**
   * The call of the session that ended the Attempt, and how (the fault it met on every try, the
   * refusal of the spend cap or of the wallet): a request the CLI makes after (its own retry, a
   * side request, before it is stopped) is answered with it, never made.
   */
  let ended: { readonly failure: CallEnding; readonly call: SessionCall } | undefined
  /** The session's end is in the recording. */
  let endNoted = false
  let listed = false
  /** Requests of the CLI's turns (with the tools) received so far. */
  let mainRequests = 0
  const listedWaiters: Array<() => void> = []
  const known: Array<Known> = []
  const pending: Array<Pending> = []
  const ids = idMaker()
  let closed = false
  /** The usage of every answer the proxy passed to the CLI: assay's count of the CLI's calls. */
  const answered = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }
  /** The CLI's last answer was words: it ends its run on its own (and writes its account). */
  let answeredInWords = false
  let cliUsage: CliUsage | undefined
  /** Calls being forwarded to the vendor on a subscription, by id: the CLI's credential headers, the vendor's base URL. */
  const forwards = new Map<number, { readonly headers: Record<string, string>; readonly vendor: string }>()
  let forwardIds = 0
  /** The vendor's newest quota headers: passed on to the CLI with its answers, as the vendor sent them. */
  let quotaHeaders: Record<string, string> = {}
  /**
   * The model the calls are made with. On a subscription a call has no list price: its model id
   * is marked `@subscription` (the forwarder takes the mark off), so the Attempt, the spend cap
   * and the report count its tokens and leave its cost unknown rather than price it.
   */
  const billed: ResolvedModel = options.billing !== "subscription" && options.subscription === undefined ? options.model : (() => {
    const { cost: _cost, ...unpriced } = options.model.model
    return { ...options.model, model: { ...unpriced, id: `${options.model.model.id}${SUBSCRIPTION_MARK}` } }
  })()

  /**
   * A model call made with the CLI's login: the Model service's client is pointed (for this call
   * only) at the proxy's forwarder, which sends it on to the vendor with the CLI's headers. The
   * Attempt's stack sees the call as any other: only its transport differs.
   */
  const viaLogin = <A, E, R>(proxy: { readonly url: string; readonly token: string }, login: Record<string, string> | undefined, call: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    const v = options.subscription?.vendor
    return v === undefined || login === undefined ? call : Effect.gen(function*() {
      const base = yield* Config.string(v.baseUrlEnv).pipe(Config.withDefault(v.defaultBaseUrl), Effect.orElseSucceed(() => v.defaultBaseUrl))
      const trimmed = base.replace(/\/+$/, "")
      const id = ++forwardIds
      forwards.set(id, { headers: login, vendor: v.clientAddsVersion ? trimmed.replace(/\/v1$/, "") : trimmed })
      const current = yield* Effect.configProviderWith(Effect.succeed)
      const local = ConfigProvider.fromMap(new Map([[v.clientBaseUrlEnv, `${proxy.url}/vendor/${id}`], [v.clientKeyEnv, proxy.token]]))
      return yield* call.pipe(Effect.withConfigProvider(ConfigProvider.orElse(local, () => current)), Effect.ensuring(Effect.sync(() => forwards.delete(id))))
    })
  }

  const settle = () => {
    for (let i = 0; i < pending.length;) {
      const p = pending[i]!
      const k = known.find((k) => !k.used && k.name === p.name && k.argsKey === p.argsKey) ?? known.find((k) => !k.used && k.name === p.name)
      if (k === undefined) {
        i++
        continue
      }
      k.used = true
      pending.splice(i, 1)
      p.resolve(k.result)
    }
  }

  /** Tool results and user messages the protocol added since the last reply. */
  const take = (input: AgentInput): { readonly userText: ReadonlyArray<string> } => {
    const fresh = input.messages.slice(seen)
    seen = input.messages.length
    const userText: Array<string> = []
    const callsById = new Map<string, ToolCall>()
    for (const m of input.messages) if (m.role === "assistant") for (const c of m.toolCalls) callsById.set(c.id, c)
    for (const m of fresh) {
      if (m.role === "tool") {
        const call = callsById.get(m.toolCallId)
        known.push({ name: m.name, argsKey: argsKeyOf(call?.arguments ?? {}), result: { text: m.content, isError: m.error }, used: false })
      } else if (m.role === "user") userText.push(m.content)
    }
    settle()
    return { userText }
  }

  /** The first prompt: the benchmark's instructions and what was said so far. */
  const firstPrompt = (input: AgentInput): string => {
    const said = input.messages.map((m: Message) =>
      m.role === "user" ? m.content : m.role === "assistant" && m.content !== null ? `(You said earlier: ${m.content})` : ""
    ).filter((s) => s.length > 0)
    return [input.system, ...said].filter((s) => s.length > 0).join("\n\n")
  }

  const stopChild = (s: Live) =>
    s.child?.pid === undefined ? Effect.void : Effect.asVoid(terminate(s.child.pid, 0, s.token))

  const startServer = (runtime: Runtime.Runtime<WE.WorldEffects | Wallet>, events: Queue.Queue<Event>, n: ToolNames, model: ResolvedModel) =>
    Effect.async<Live, AgentError>((resume) => {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), `assay-${options.harness}-`))
      const workDir = options.workDir ?? path.join(root, "work")
      const stateDir = path.join(root, "state")
      fs.mkdirSync(workDir, { recursive: true })
      fs.mkdirSync(stateDir, { recursive: true })
      const token = `assay-${randomBytes(12).toString("hex")}`
      const proxy = { url: "", token }
      const runAux = (wire: WireRequest, login: Record<string, string> | undefined) =>
        new Promise<Either.Either<ModelResponse, WE.EffectError | BudgetExceeded>>((done) => {
          const request = requestOf(wire, model, n)
          Runtime.runCallback(runtime)(
            Effect.either(viaLogin(proxy, login, auxCall(request, model))).pipe(Effect.tap((outcome) =>
              Effect.sync(() => {
                if (Either.isRight(outcome) || !endsAttempt(outcome.left)) return
                // The Attempt ends, as on a turn's (set before the CLI hears of it).
                ended ??= { failure: outcome.left, call: { kind: "model/generate", key: AUX_KEY, request: request as unknown as Json } }
                Queue.unsafeOffer(events, { _tag: "gave-up", failure: outcome.left })
              })
            )),
            { onExit: (exit) => done(exit._tag === "Success" ? exit.value : Either.left(new WE.EffectFailed({ kind: "model/generate", key: AUX_KEY, reason: "handler", detail: "interrupted" }))) }
          )
        })
      const answerWith = (res: ServerResponse, wire: WireRequest, body: JsonObject, theirs: (n: string) => string) =>
      (outcome: Either.Either<ModelResponse, WE.EffectError | AgentFailure>) => {
        if (res.writableEnded) return
        if (Either.isRight(outcome)) {
          const u = outcome.right.usage
          answered.inputTokens += u.inputTokens
          answered.outputTokens += u.outputTokens
          answered.cacheReadTokens += u.cacheReadTokens
          answered.cacheWriteTokens += u.cacheWriteTokens
        }
        if (Either.isRight(outcome)) return sendAnswer(res, wire.api, body, wire.stream, answerOf(outcome.right, wire, theirs), ids, quotaHeaders)
        const e = outcome.left
        const status = e._tag === "EffectFault" ? faultStatus(e.reason) : 400
        const headers: Record<string, string> = status === 429 ? { "retry-after": "1" } : {}
        sendJson(res, status, errorBody(wire.api, status, e.message), headers)
      }
      /**
       * The Model service's call of a subscription Attempt, sent on to the vendor with the CLI's
       * own credential headers (unchanged) in place of the placeholder key; the vendor's quota
       * headers are read on the way back.
       */
      const forward = async (sub: NonNullable<BridgeOptions["subscription"]>, req: IncomingMessage, res: ServerResponse, url: string, raw: string, id: string, rest: string): Promise<void> => {
        const f = forwards.get(Number(id))
        if (keyOf(req.headers, url) !== token || f === undefined) {
          sendJson(res, 401, errorBody(null, 401, "not this Attempt's call"), {})
          return
        }
        const query = url.includes("?") ? url.slice(url.indexOf("?")) : ""
        const headers: Record<string, string> = { "content-type": "application/json", ...f.headers }
        for (const name of ["anthropic-version", "accept"]) {
          const v = req.headers[name]
          if (typeof v === "string") headers[name] = v
        }
        let answered: Response
        try {
          answered = await fetch(`${f.vendor}${rest}${query}`, { method: req.method ?? "POST", headers, ...(raw.length > 0 ? { body: unmarked(raw) } : {}) })
        } catch (e) {
          // The vendor could not be reached: the client sorts a 502 as an unreachable endpoint.
          sendJson(res, 502, errorBody(null, 502, `the vendor could not be reached: ${e instanceof Error ? e.message : "network error"}`), {})
          return
        }
        const text = await answered.text()
        const seen: Record<string, string> = {}
        answered.headers.forEach((v, k) => {
          if (k.startsWith(sub.vendor.quotaHeaderPrefix)) seen[k] = v
        })
        if (Object.keys(seen).length > 0) quotaHeaders = seen
        sub.onQuota(sub.vendor.quota(answered.headers))
        const back: Record<string, string> = { "content-type": answered.headers.get("content-type") ?? "application/json", ...seen }
        const retry = answered.headers.get("retry-after")
        if (retry !== null) back["retry-after"] = retry
        res.writeHead(answered.status, back).end(text)
      }
      const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
        const method = req.method ?? "GET"
        const url = req.url ?? "/"
        const pathname = url.split("?")[0] ?? "/"
        const raw = await readBody(req)
        if (pathname === "/mcp" || pathname.startsWith("/mcp/")) {
          if (method !== "POST") {
            res.writeHead(405, { allow: "POST" }).end()
            return
          }
          let parsed: unknown
          try {
            parsed = JSON.parse(raw)
          } catch {
            res.writeHead(400).end()
            return
          }
          if (options.mcpDelayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.mcpDelayMs))
          await handleMcp({
            tools: n.mcp,
            onListed: () => {
              listed = true
              for (const w of listedWaiters.splice(0)) w()
            },
            call: (mcpName, args) =>
              new Promise<McpToolResult>((resolve) => {
                const ours = n.ours(mcpName) ?? mcpName
                pending.push({ name: ours, argsKey: argsKeyOf(args), resolve })
                settle()
              })
          }, req, res, parsed)
          return
        }
        const forwarded = /^\/vendor\/(\d+)(\/.*)$/.exec(pathname)
        if (forwarded !== null && options.subscription !== undefined) {
          await forward(options.subscription, req, res, url, raw, forwarded[1]!, forwarded[2]!)
          return
        }
        // The placeholder key the CLI was given (on a subscription, its login): nothing else on
        // this machine may spend through the proxy.
        if (keyOf(req.headers, url) !== (options.subscription?.login.token ?? token)) {
          sendJson(res, 401, errorBody(null, 401, "not this Attempt's key"), {})
          return
        }
        const route = routeOf(method, pathname)
        if (route.api === null) {
          if (method === "HEAD" || (method === "GET" && pathname === "/")) res.writeHead(200).end()
          else if (method === "POST" && pathname === "/v1/messages/count_tokens") sendJson(res, 200, { input_tokens: tokensOf(raw.length) }, {})
          else if (method === "GET" && (pathname === "/v1/models" || pathname === "/models")) {
            sendJson(res, 200, { object: "list", data: [{ id: options.cliModel, object: "model", created: 0, owned_by: "assay" }] }, {})
          } else sendJson(res, 404, errorBody(null, 404, `no route ${method} ${pathname}`), {})
          return
        }
        let body: JsonObject
        try {
          const parsed: unknown = JSON.parse(raw)
          if (!isObject(parsed)) throw new Error("not an object")
          body = parsed
        } catch {
          sendJson(res, 400, errorBody(route.api, 400, "invalid JSON body"), {})
          return
        }
        const wire = readRequest(route.api, body, route)
        const log = process.env["ASSAY_BRIDGE_LOG"]
        if (log !== undefined && log !== "") fs.appendFileSync(log, `--- proxy ${route.api} tools: ${wire.tools.map((t) => t.name).join(", ")}\n${process.env["ASSAY_BRIDGE_LOG_BODY"] === "1" ? raw + "\n" : ""}`)
        const seenNames = new Map<string, string>()
        for (const t of wire.tools) {
          const ours = n.ours(t.name)
          if (ours !== undefined) seenNames.set(ours, t.name)
        }
        // A call of none of the protocol's tools is one of the CLI's own (a folder task's): named as the CLI names it.
        const theirs = (ours: string) => seenNames.get(ours) ?? (protocolTools.has(ours) ? n.theirs(ours) : ours)
        const answer = answerWith(res, wire, body, theirs)
        if (ended !== undefined) {
          // The Attempt ended on a call; the CLI asked again before it was stopped: never made.
          answer(Either.left(ended.failure))
          return
        }
        const login = options.subscription === undefined ? undefined : loginOf(req.headers, options.subscription.vendor)
        if (offered > 0 && seenNames.size === 0) {
          if (mainRequests === 0) {
            // Before its first turn with the tools, a request without them is a turn the CLI formed
            // before it had listed them (it would present the task without its tools): the CLI is
            // told to try again (a vendor's "overloaded") once the tools are listed. Nothing is
            // asked of the model, so no occurrence is drawn.
            const ready = listed || await new Promise<boolean>((resolve) => {
              const timer = setTimeout(() => resolve(false), readinessMs)
              listedWaiters.push(() => {
                clearTimeout(timer)
                resolve(true)
              })
            })
            if (!ready) Queue.unsafeOffer(events, { _tag: "exit", generation: -1, code: null, signal: "not-ready" })
            sendJson(res, 503, errorBody(route.api, 503, "the tools are not ready yet; try again"), { "retry-after": "1" })
            return
          }
          answer(await runAux(wire, login))
          return
        }
        mainRequests++
        Queue.unsafeOffer(events, { _tag: "model", wire, answer, login })
      }
      const server = createServer((req, res) => {
        handle(req, res).catch((e: unknown) => {
          if (!res.headersSent) sendJson(res, 500, errorBody(null, 500, `bridge error: ${String(e)}`), {})
          else res.end()
        })
      })
      server.once("error", (e) => resume(Effect.fail(new AgentError({ agent: name, reason: "model-failed", detail: `bridge server: ${e.message}` }))))
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as AddressInfo).port
        proxy.url = `http://127.0.0.1:${port}`
        resume(Effect.succeed({ server, url: `http://127.0.0.1:${port}`, root, workDir, stateDir, events, token, child: undefined, running: false, generation: 0, stderrTail: [], stdout: [] }))
      })
    })

  const spawnCli = (s: Live, sandbox: SandboxService, prompt: string, resume: boolean) =>
    Effect.gen(function*() {
      const failed = (detail: string) => new AgentError({ agent: name, reason: "model-failed", detail: `could not start ${options.harness}: ${detail}` })
      const { env, invocation } = yield* Effect.try({
      try: () => {
        const invocation = bridgedInvocation(options.harness, {
          prompt,
          model: options.cliModel,
          proxyUrl: s.url,
          mcpUrl: `${s.url}/mcp`,
          apiKey: s.token,
          workDir: s.workDir,
          stateDir: s.stateDir,
          resume,
          sessionId,
          // In a task's own container the CLI works on the task with its own tools, as Harbor runs it.
          ownTools: options.ownTools === true || options.folder !== undefined || sandbox.isolation === "container",
          subscription: options.subscription !== undefined
        })
        for (const f of invocation.files) {
          fs.mkdirSync(path.dirname(f.path), { recursive: true })
          fs.writeFileSync(f.path, f.content)
        }
        const home = path.join(s.stateDir, "home")
        const tmp = path.join(s.stateDir, "tmp")
        fs.mkdirSync(home, { recursive: true })
        fs.mkdirSync(tmp, { recursive: true })
        // A cleared environment: the user's keys and settings never reach the CLI.
        const env: Record<string, string> = {
          PATH: [path.dirname(process.execPath), path.dirname(options.binary), "/usr/local/bin", "/usr/bin", "/bin"].join(path.delimiter),
          HOME: home,
          TMPDIR: tmp,
          LANG: "C.UTF-8",
          TERM: "dumb",
          NO_COLOR: "1",
          PWD: s.workDir,
          [RUN_TOKEN_VARIABLE]: s.token,
          ...invocation.env
        }
        const sub = options.subscription
        if (sub !== undefined) {
          // The CLI's own login in its private config folder, read-only; no placeholder key, which it would prefer.
          delete env["ANTHROPIC_API_KEY"]
          delete env["ASSAY_PROXY_KEY"]
          const login = sub.login
          if (login._tag === "env") env["CLAUDE_CODE_OAUTH_TOKEN"] = login.token
          else {
            const file = path.join(env[sub.vendor.configDirEnv] ?? s.stateDir, sub.vendor.loginFile)
            if (!fs.existsSync(file)) {
              fs.mkdirSync(path.dirname(file), { recursive: true })
              fs.writeFileSync(file, login.content, { mode: 0o400 })
            }
          }
        }
        return { env, invocation }
      },
      catch: (e) => failed(String(e))
      })
      // In the sandbox: the host's network (the proxy is on its loopback), the work and state
      // folders writable, the CLI's installation read-only, nothing else of the user's.
      // In a task's container no Node need be there: the CLI's native program where it has one.
      const entry = sandbox.isolation === "container" ? nativeEntry(options.harness, options.binary) : { command: options.binary, env: {} }
      const prepared = yield* sandbox.prepare({
        command: entry.command,
        args: invocation.args,
        work: s.workDir,
        env: { ...env, ...entry.env },
        timeoutMs: 0,
        network: "host",
        loopback: [Number(new URL(s.url).port)],
        readOnly: installRootOf(options.binary),
        writable: [s.stateDir],
        // A CLI's runtime reserves far more address space than it uses, and runs many threads.
        limits: { processes: 4096, memoryBytes: 2 ** 40 }
      }).pipe(Effect.mapError((e) => failed(e.message)))
      yield* Effect.try({
      try: () => {
        const child = spawn(prepared.command, [...prepared.args], { cwd: s.workDir, env: prepared.env, detached: true, stdio: ["ignore", "pipe", "pipe"] })
        s.child = child
        s.running = true
        const generation = ++s.generation
        // ASSAY_BRIDGE_LOG=FILE keeps what each CLI printed, for a user finding out why a CLI failed.
        const log = process.env["ASSAY_BRIDGE_LOG"]
        if (log !== undefined && log !== "") {
          const out = fs.createWriteStream(log, { flags: "a" })
          out.write(`--- ${options.harness} ${invocation.args.slice(0, 3).join(" ")}${resume ? " (resume)" : ""}\n`)
          child.stdout?.pipe(out, { end: false })
          child.stderr?.pipe(out, { end: false })
        }
        const printed: Array<Buffer> = []
        child.stdout?.on("data", (chunk: Buffer) => printed.push(chunk))
        child.stdout?.on("end", () => s.stdout.push(Buffer.concat(printed).toString("utf8")))
        let partial = ""
        child.stderr?.on("data", (chunk: Buffer) => {
          const lines = (partial + chunk.toString("utf8")).split("\n")
          partial = lines.pop() ?? ""
          for (const line of lines) {
            s.stderrTail.push(line)
            if (s.stderrTail.length > 50) s.stderrTail.shift()
            options.onStderr?.(line)
          }
        })
        child.on("error", (e) => {
          s.stderrTail.push(e.message)
        })
        child.on("close", (code, signal) => {
          if (generation === s.generation) s.running = false
          Queue.unsafeOffer(s.events, { _tag: "exit", generation, code, signal })
        })
      },
      catch: (e) => failed(String(e))
      })
    })

  /** Reading or writing the CLI's folder; a failure ends the Attempt, as the CLI's own failure to start would. */
  const folderIo = <A>(io: () => A) =>
    Effect.try({ try: io, catch: (e) => new AgentError({ agent: name, reason: "model-failed", detail: `the task's folder: ${String(e)}` }) })

  /** A folder task's files of the world (path -> text). */
  const worldFiles = (folder: FolderTask) =>
    Effect.gen(function*() {
      const world = yield* Effect.serviceOption(WE.AttemptWorld)
      if (Option.isNone(world)) return new Map<string, string>()
      const current = yield* Ref.get(world.value.ref)
      return new Map(World.entries(current, folder.table).flatMap(([p, text]) => (typeof text === "string" ? [[p, text] as const] : [])))
    })

  /**
   * One file the CLI changed written into the world, as the protocol's write tool writes it; a
   * fault is written again, up to SYNC_TRIES tries. A replay writes each recorded one back through
   * this too, so it meets the same draws and retries them alike.
   */
  const writeBack = (request: Json): Effect.Effect<void, AgentFailure, WE.WorldEffects> =>
    Effect.gen(function*() {
      for (let tries = 1; ; tries++) {
        const done = yield* Effect.either(WE.perform({ kind: "tool/write", key: SYNC_KEY, request }, Schema.Unknown))
        if (Either.isRight(done) || done.left._tag === "EffectRefused") return
        if (done.left._tag === "EffectFault" && tries >= SYNC_TRIES) ended ??= { failure: done.left, call: { kind: "tool/write", key: SYNC_KEY, request } }
        if (done.left._tag !== "EffectFault" || tries >= SYNC_TRIES) return yield* done.left
      }
    })

  /**
   * Before a model call of a folder task's CLI: what it changed in its folder is written into the
   * world, and what the protocol's own tools changed in the world (over MCP) into its folder.
   */
  const syncFolder = (s: Live, folder: FolderTask): Effect.Effect<void, AgentFailure, WE.WorldEffects> =>
    Effect.gen(function*() {
      const inFolder = yield* folderIo(() => readFiles(s.workDir))
      for (const p of [...inFolder.keys()].sort()) {
        const text = inFolder.get(p)!
        if (synced.get(p) === text) continue
        synced.set(p, text)
        yield* writeBack({ tool: folder.write, args: { path: p, content: text } })
      }
      const inWorld = yield* worldFiles(folder)
      const changed = new Map([...inWorld].filter(([p, text]) => synced.get(p) !== text))
      yield* folderIo(() => writeFiles(s.workDir, changed))
      for (const [p, text] of changed) synced.set(p, text)
    })

  /** The CLI never reached the model (it did not start, or never listed the tools): an outage, in its words. */
  const notStarted = (detail: string) =>
    new WE.EffectFault({ kind: "process/spawn", key: `harness:${options.harness}`, occurrence: 0, reason: "unreachable", injected: false, detail })

  /** Waits for the CLI's next turn: its model request made through the Attempt's stack, as the reply. */
  const nextTurn = (s: Live, model: ResolvedModel, n: ToolNames): Effect.Effect<AgentReply, AgentFailure, WE.WorldEffects | Wallet> =>
    Effect.gen(function*() {
      for (;;) {
        const event = yield* Queue.take(s.events)
        if (event._tag === "gave-up") return yield* event.failure
        if (event._tag === "exit") {
          // The end of an earlier start of the CLI (before a resume) says nothing of this one.
          if (event.generation !== -1 && event.generation !== s.generation) continue
          if (event.signal === "not-ready") {
            return yield* notStarted(`${options.harness} listed no MCP tools within ${readinessMs / 1000} s${lastWords(s.stderrTail)}`)
          }
          if (ended !== undefined) return yield* ended.failure
          if (turns === 0) {
            // It never asked the model anything: the CLI did not start, which is no verdict on a model.
            return yield* notStarted(`${options.harness} exited ${event.code ?? event.signal} before any model call${lastWords(s.stderrTail)} (\`assay harnesses\` checks that it starts)`)
          }
          return yield* new AgentError({
            agent: name,
            reason: "bad-reply",
            detail: `${options.harness} exited (${event.code ?? event.signal}) without replying: ${tail(s.stderrTail)}`
          })
        }
        if (options.folder !== undefined) yield* syncFolder(s, options.folder)
        const reply = yield* modelTurn(event.wire, model, n, event.answer, event.login === undefined ? undefined : { proxy: s, headers: event.login })
        if (reply !== undefined) return reply
      }
    }).pipe(
      // A failure ends the Attempt whatever the CLI would do next (retry, give up, carry on): it is stopped now.
      Effect.tapError(() => Effect.zipRight(Effect.sync(() => { answeredInWords = false }), stopChild(s)))
    )

  /**
   * A side request of the CLI (a title, a router) made by the agent's own call on a site of its
   * own: metered, faulted and retried alike.
   */
  const auxCall = (request: ModelRequest, model: ResolvedModel) => modelCall(request, { role: AUX_KEY, model })

  /**
   * One CLI (or recorded) request made as the agent's model call, by the built-in agent's rule
   * (retried, one metered call); undefined when it called only the CLI's own tools (a folder task).
   * A fault that outlasts the retries fails it: the Attempt ends with it.
   */
  const modelTurn = (
    wire: WireRequest | ModelRequest,
    model: ResolvedModel,
    n: ToolNames,
    answer: ((outcome: Either.Either<ModelResponse, WE.EffectError | AgentFailure>) => void) | undefined,
    login?: { readonly proxy: { readonly url: string; readonly token: string }; readonly headers: Record<string, string> }
  ): Effect.Effect<AgentReply | undefined, AgentFailure, WE.WorldEffects | Wallet> =>
    Effect.gen(function*() {
      const request = "api" in wire ? requestOf(wire, model, n) : wire
      turns++
      const call = modelCall(request, { role: AGENT_KEY, model })
      const outcome = Either.map(yield* Effect.either(login === undefined ? call : viaLogin(login.proxy, login.headers, call)), uniqueIds)
      // Set before the CLI hears of it, so a retry of its own is never made.
      if (Either.isLeft(outcome) && endsAttempt(outcome.left)) {
        ended ??= { failure: outcome.left, call: { kind: "model/generate", key: AGENT_KEY, request: request as unknown as Json } }
      }
      answer?.(outcome)
      if (Either.isRight(outcome)) {
        const response = outcome.right
        answeredInWords = response.toolCalls.length === 0
        if (options.folder !== undefined && response.toolCalls.length > 0) {
          // The CLI's own tools (its file edits, its shell) are its business: the protocol gets
          // only the calls of its tools, and nothing while the CLI works on its own.
          const theirs = (response.toolCalls as ReadonlyArray<ToolCall>).filter((c) => protocolTools.has(c.name))
          return theirs.length === 0 ? undefined : { text: response.text, toolCalls: theirs }
        }
        return { text: response.text, toolCalls: response.toolCalls as ReadonlyArray<ToolCall> }
      }
      const e = outcome.left
      if (e._tag === "EffectFailed" && e.reason === "handler") return yield* new AgentError({ agent: name, reason: "model-failed", detail: e.detail })
      return yield* e
    })

  // A call id the Attempt has seen before (a scripted model's, or a client's made per response) is
  // made unique: a CLI keeps one conversation, and pairs results with calls by id. Deterministic,
  // so a replay renames alike.
  const usedIds = new Set<string>()
  const uniqueIds = (response: ModelResponse): ModelResponse => {
    if (response.toolCalls.every((c) => !usedIds.has(c.id))) {
      for (const c of response.toolCalls) usedIds.add(c.id)
      return response
    }
    return {
      ...response,
      toolCalls: response.toolCalls.map((c) => {
        let id = c.id
        for (let k = 2; usedIds.has(id); k++) id = `${c.id}_${k}`
        usedIds.add(id)
        return { ...c, id }
      })
    }
  }

  // Replay: the recorded calls of the agent's turns, made again in order by the same call.
  const recording = options.replay ?? []
  const recorded = callsOf(recording, "model/generate", AGENT_KEY)
  let next = 0
  /**
   * What the CLI did besides its turns (a folder task's write backs, its side requests), made again
   * where it was made, before the agent's call that followed it, by the same retry rules as live.
   */
  const sides = [...callsOf(recording, "tool/write", SYNC_KEY), ...callsOf(recording, "model/generate", AUX_KEY)].sort((a, b) => a.at - b.at)
  let nextSide = 0
  const replaySide = (kind: string, request: Json, model: ResolvedModel): Effect.Effect<void, AgentFailure, WE.WorldEffects | Wallet> =>
    kind === "tool/write" ? writeBack(request) : Effect.gen(function*() {
      const outcome = yield* Effect.either(auxCall(request as unknown as ModelRequest, model))
      // As live: its faults outlasting the retries, or a refusal, end the Attempt. Any other failure
      // the CLI was answered with and went on (a replay's missing effect is noted by the recording layer).
      if (Either.isLeft(outcome) && endsAttempt(outcome.left)) return yield* outcome.left
    })

  /** How the live session ended, as its recording says; undefined for a recording made before it said. */
  const recordedEnd = endedOf(recording)

  /**
   * For a recording that does not say how the session ended (made before it did): whether the next
   * call of a site meets a fault on every try the retry rule makes, in which case the live Attempt
   * is taken to have ended on that call, which left nothing in the recording. Its tries so far are
   * those the faults layer faulted and those that reached the recording. A guess: a CLI that
   * stopped on its own where the next draws happen all to fault is taken for a fault ending.
   */
  const faultsOutlast = (kind: EffectKind, key: string, draws: NonNullable<BridgeOptions["draws"]>) =>
    Effect.gen(function*() {
      const spec = draws.spec
      if (spec === null || (spec.only !== null && !spec.only.includes(kind))) return false
      const site = `${kind}:${key}`
      const log = yield* Effect.serviceOption(WE.FaultLog)
      const recorder = yield* Effect.serviceOption(WE.Recorder)
      const injected = Option.isSome(log) ? (yield* Ref.get(log.value.entries)).filter((e) => e.key === site).length : 0
      const reached = Option.isSome(recorder) ? (yield* Ref.get(recorder.value.entries)).filter((e) => e.kind === kind && e.key === key).length : 0
      const done = injected + reached
      return Array.from({ length: MODEL_CALL_RETRIES + 1 }, (_, i) => WE.drawFault(spec, site, done + i + 1, draws.task)).every((r) => r !== null)
    })

  /** A call of the session made again, as it was made live. */
  const callAgain = (call: SessionCall, model: ResolvedModel, n: ToolNames): Effect.Effect<unknown, AgentFailure, WE.WorldEffects | Wallet> =>
    call.kind === "tool/write"
      ? writeBack(call.request)
      : call.key === AUX_KEY
      ? auxCall(call.request as unknown as ModelRequest, model)
      : modelTurn(call.request as unknown as ModelRequest, model, n, undefined)

  /**
   * The recording has no more calls of the agent: the live session ended here, as its recording
   * says. A call that ended it (its tries all faulted, or the wallet refused it: none of it reached
   * the recording) is made again, so the faults layer and the wallet end it alike (the same faults
   * met, the same retries counted); a CLI that stopped ends the replay with what it ended live.
   */
  const replayEnd = (model: ResolvedModel, n: ToolNames, input: AgentInput): Effect.Effect<AgentReply, AgentFailure, WE.WorldEffects | Wallet> =>
    Effect.gen(function*() {
      if (recordedEnd !== undefined) {
        const { call, failure } = recordedEnd
        // The spend cap's refusal is not asked again: a replay has no cap (it spends nothing), and
        // the refused call was never sent, so the recording cannot answer it.
        const again = call === null || (failure._tag === "EffectRefused" && failure.reason === "spend-cap")
          ? Either.right(undefined)
          : yield* Effect.either(callAgain(call, model, n))
        return yield* (Either.isLeft(again) ? again.left : failure)
      }
      // A recording made before the bridge recorded how a session ended: its end is worked out
      // from the fault draws, as it was when it was made (see faultsOutlast).
      const request = builtInRequestOf(model, input)
      const draws = options.draws
      if (draws === undefined || (yield* faultsOutlast("model/generate", AGENT_KEY, draws))) {
        const reply = yield* modelTurn(request, model, n, undefined)
        if (reply !== undefined) return reply
      } else if (yield* faultsOutlast("model/generate", AUX_KEY, draws)) {
        yield* replaySide("model/generate", { ...request, tools: [] } as unknown as Json, model)
      }
      return yield* new AgentError({ agent: name, reason: "script-exhausted", detail: "the recording has no more model calls of the agent" })
    })

  const replayTurn = (model: ResolvedModel, n: ToolNames, input: AgentInput): Effect.Effect<AgentReply, AgentFailure, WE.WorldEffects | Wallet> =>
    Effect.gen(function*() {
      for (;;) {
        const found = recorded[next]
        for (; nextSide < sides.length && sides[nextSide]!.at < (found?.at ?? Infinity); nextSide++) {
          const side = sides[nextSide]!.entry
          yield* replaySide(side.kind, side.request as Json, model)
        }
        if (found === undefined) return yield* replayEnd(model, n, input)
        next++
        const reply = yield* modelTurn(found.entry.request as ModelRequest, model, n, undefined)
        if (reply !== undefined) return reply
      }
    })

  const agent: BridgedAgent = {
    name,
    reply: (input) =>
      Effect.gen(function*() {
        if (closed) return yield* new AgentError({ agent: name, reason: "bad-reply", detail: "the harness session is closed" })
        if (names === undefined) {
          names = toolNames(options.harness, input.tools)
          offered = input.tools.length
          protocolTools = new Set(input.tools.map((t) => t.name))
        }
        const n = names
        const { userText } = take(input)
        if (options.replay !== undefined) return yield* replayTurn(billed, n, input).pipe(Effect.tapError(() => noteEnd(recordedEnd?.entry)))
        if (live === undefined) {
          const runtime = yield* Effect.runtime<WE.WorldEffects | Wallet>()
          const events = yield* Queue.unbounded<Event>()
          live = yield* startServer(runtime, events, n, billed)
        }
        const s = live
        const sandbox = yield* Sandbox
        if (!started) {
          started = true
          if (options.folder !== undefined) {
            const files = yield* worldFiles(options.folder)
            yield* folderIo(() => writeFiles(s.workDir, files))
            for (const [p, text] of files) synced.set(p, text)
          }
          yield* spawnCli(s, sandbox, firstPrompt(input), false)
        } else if (userText.length > 0) {
          // The CLI answered in text and the user spoke: its own session goes on with the message.
          if (s.running) yield* waitExit(s)
          yield* spawnCli(s, sandbox, userText.join("\n\n"), true)
        }
        return yield* nextTurn(s, billed, n)
      }).pipe(Effect.tapError((failure) =>
        // A replay's own end is noted above, as its recording had it.
        options.replay !== undefined || closed ? Effect.void : noteEnd(endedEntry(ended?.failure === failure ? ended.call : null, failure))
      )),
    close: Effect.suspend(() => {
      closed = true
      const s = live
      live = undefined
      if (s === undefined) return Effect.void
      for (const p of pending.splice(0)) p.resolve({ text: "Error: the Attempt is over", isError: true })
      // A CLI that answered in words is let finish its run, so its account of the run is whole.
      return (s.running && answeredInWords ? waitExit(s, 15_000) : Effect.void).pipe(
        Effect.zipRight(stopChild(s)),
        Effect.zipRight(Effect.sync(() => {
          let cli: TokenCounts | null
          try {
            cli = cliCounts(options.harness, s)
          } catch {
            // Session files the CLI left unreadable: no account from it, which the report shows as unreported.
            cli = null
          }
          cliUsage = { harness: options.harness, assay: { ...answered }, cli }
        })),
        Effect.zipRight(Effect.async<void>((resume) => {
          s.server.closeAllConnections()
          s.server.close(() => resume(Effect.void))
        })),
        Effect.zipRight(Effect.sync(() => fs.rmSync(s.root, { recursive: true, force: true })))
      )
    }),
    cliUsage: Effect.sync(() => cliUsage)
  }

  /**
   * How the session ended, added to the Attempt's recording once. A replay adds the entry of the
   * recording it replays (none for one made before there was one), so its recording is that one.
   */
  const noteEnd = (entry: RecordedEffect | undefined) =>
    Effect.gen(function*() {
      if (entry === undefined || endNoted) return
      endNoted = true
      const recorder = yield* Effect.serviceOption(WE.Recorder)
      if (Option.isSome(recorder)) yield* Ref.update(recorder.value.entries, (es) => [...es, entry])
    })

  /** The CLI's exit after its text answer (its session written), bounded: a CLI that lingers is ended. */
  const waitExit = (s: Live, ms = 30_000) =>
    Effect.gen(function*() {
      const deadline = Date.now() + ms
      while (s.running) {
        // Interruptible: `close` runs as a finalizer, where an uninterruptible take outlasted its
        // deadline until the CLI's next request (qwen: 120 s on a task with no tools).
        const event = yield* Queue.take(s.events).pipe(Effect.interruptible, Effect.timeout(Math.max(1, deadline - Date.now())), Effect.option)
        if (event._tag === "None") {
          yield* stopChild(s)
          return
        }
        // A request made once the CLI has answered is no turn of the Attempt (qwen's memory note on a
        // task with no tools, where nothing tells it from a turn): refused, so the CLI ends now
        // rather than wait on it.
        if (event.value._tag === "model") {
          event.value.answer(Either.left(new AgentError({ agent: name, reason: "model-failed", detail: "the Attempt is over: no more model calls" })))
        }
      }
    })

  return agent
}
