/**
 * `harness:NAME[:MODEL]` as a candidate of any benchmark: an agent CLI behind the bridge, its
 * model calls made by assay with a registry model. MODEL is `PROVIDER:MODEL`, or a model of the
 * CLI's own vendor; without it, the vendor's default below.
 *
 * `harness:NAME[:MODEL]:subscription[,share=S][,pause-at=P]` (claude, codex): the CLI runs on the
 * user's own login and its calls are forwarded with it (Subscription.ts); the vendor's quota
 * headers meter the allowance, and no cell starts once it refuses (Allowance.ts).
 *
 * Its identity (AgentDef and inputs id) is the CLI, the registry model and the bridge's
 * adaptation; the CLI's version is run metadata, not identity (a CLI update is not a new
 * candidate, as a vendor's silent model update is not).
 */
import { Effect, Either, Schema } from "effect"
import type { Json } from "../../content/Canonical.ts"
import { CapabilityError } from "../../evaluation/Capabilities.ts"
import type { Candidate } from "../../experiment/Runner.ts"
import { presented, Registry } from "../../model/Registry.ts"
import { noLimits } from "../../schema/EnvironmentDef.ts"
import { adapters } from "../adapters/index.ts"
import { detect, findBinary } from "../Detect.ts"
import { type HarnessName, isHarnessName } from "../Harness.ts"
import { bridgedAgent, type BridgeOptions } from "./Bridge.ts"
import type { FolderTask } from "./Folder.ts"
import { bridged } from "./Invocations.ts"
import { adaptation, ADAPTATION_VERSION } from "./Tools.ts"
import * as Allowance from "../Allowance.ts"
import type { AllowanceState } from "../../experiment/Preflight.ts"
import { isSubscriptionHarness, parseSubscription, vendors } from "./Subscription.ts"

export class BridgeCandidateError extends Schema.TaggedError<BridgeCandidateError>()("BridgeCandidateError", {
  candidate: Schema.String,
  reason: Schema.Literal("not-bridged", "model", "subscription"),
  detail: Schema.String
}) {
  override get message() {
    return `${this.candidate}: ${this.detail}`
  }
}

/** The registry model a CLI runs when none is named, and the vendor a bare model id belongs to. */
export const defaultModel: Readonly<Record<HarnessName, string>> = {
  claude: "anthropic:claude-sonnet-4-5",
  codex: "openai:gpt-5",
  gemini: "google:gemini-2.5-pro",
  qwen: "openai:gpt-4.1-mini",
  opencode: "openai:gpt-4.1-mini",
  pi: "openai:gpt-4.1-mini"
}

const vendorOf = (harness: HarnessName): string => defaultModel[harness].split(":")[0]!

/**
 * The benchmarks whose task is a folder, and where it is in their world: a harness works there
 * with its own file and shell tools (the rest are MCP-only). The corpus, a folder task too, runs
 * its CLIs itself (providers/corpus), not through the bridge.
 */
export const folderTasks: Readonly<Record<string, FolderTask>> = {
  "coding-repair": { table: "files", write: "write_file" }
}

export interface BridgedCandidateOptions {
  /** Folders searched for the CLI before PATH. */
  readonly binDirs: ReadonlyArray<string>
  /** The CLI keeps its own file and shell tools (a benchmark whose task is a folder). */
  readonly ownTools?: boolean
  /** Called with each stderr line of every CLI run (diagnostics). */
  readonly onStderr?: (line: string) => void
  /** Where a subscription candidate reads the user's login (CLAUDE_CODE_OAUTH_TOKEN, HOME, CLAUDE_CONFIG_DIR); default process.env. */
  readonly loginEnv?: Readonly<Record<string, string | undefined>>
}

/** A bridged candidate; on a subscription, where its allowance stands as the proxy saw the vendor's quota. */
export interface BridgedCandidate extends Candidate {
  readonly allowance: () => AllowanceState | null
}

export const bridgedCandidate = (
  harness: HarnessName,
  model: string | null,
  options: BridgedCandidateOptions
): Effect.Effect<BridgedCandidate, BridgeCandidateError, Registry> =>
  Effect.gen(function*() {
    const parts = model === null ? [] : model.split(":")
    const parsed = parts.length === 0 ? Either.right(null) : parseSubscription(parts.at(-1)!)
    if (Either.isLeft(parsed)) {
      return yield* new BridgeCandidateError({ candidate: `harness:${harness}:${model}`, reason: "subscription", detail: parsed.left.detail })
    }
    const allowance = parsed.right
    const asked = allowance === null ? model : parts.length > 1 ? parts.slice(0, -1).join(":") : null
    // The allowance's figures are how the run is paced, not who the candidate is.
    const name = (asked === null ? `harness:${harness}` : `harness:${harness}:${asked}`) + (allowance === null ? "" : ":subscription")
    const vendor = allowance === null ? null : isSubscriptionHarness(harness) ? vendors[harness] : undefined
    if (vendor === undefined) {
      return yield* new BridgeCandidateError({ candidate: name, reason: "subscription", detail: `a subscription login is bridged for claude and codex only` })
    }
    if (!bridged.includes(harness)) {
      return yield* new BridgeCandidateError({
        candidate: name,
        reason: "not-bridged",
        detail: `${harness}'s pinned version has no MCP client, so the benchmark's tools cannot reach it (see docs/harnesses.md)`
      })
    }
    const registry = yield* Registry
    const ref = asked === null ? defaultModel[harness] : asked.includes(":") ? asked : `${vendorOf(harness)}:${asked}`
    const resolved = yield* registry.resolve(ref).pipe(
      Effect.mapError((e) => new BridgeCandidateError({ candidate: name, reason: "model", detail: e.message }))
    )
    if (vendor !== null && resolved.provider !== vendor.provider) {
      return yield* new BridgeCandidateError({ candidate: name, reason: "subscription", detail: `a ${harness} subscription runs ${vendor.provider}'s models, not ${resolved.ref}` })
    }
    const adapter = adapters[harness]
    // One meter for every cell of the candidate: the vendor's readings, as the proxy saw them.
    let meter = Allowance.emptyMeter
    const onQuota = (readings: ReadonlyArray<Allowance.Reading>) => {
      meter = Allowance.observe(meter, readings)
    }
    return {
      allowance: () => (allowance === null ? null : Allowance.standing(meter, allowance)),
      def: { name, kind: "harness", model: resolved.ref, actionSpace: "tools", prompt: "", limits: noLimits },
      registryEntry: { harness, bridge: ADAPTATION_VERSION, schemas: adaptation[harness], model: presented(resolved) as unknown as Json },
      callsMetered: true,
      // On a subscription the calls carry the user's login, not a key of assay's.
      ...(allowance === null ? { modelProvider: resolved.provider } : {}),
      agentFor: (env, context) =>
        Effect.suspend(() => {
          const folder = folderTasks[env.benchmark]
          if (context?.recording !== undefined) {
            // A replay makes the recorded calls again: no CLI, no server.
            return Effect.succeed(bridgedAgent(name, {
              harness,
              binary: "",
              model: resolved,
              cliModel: resolved.model.id,
              replay: context.recording,
              draws: { spec: env.world.effects.faults, task: `${env.benchmark}/${env.task}` },
              ...(allowance !== null ? { billing: "subscription" as const } : {}),
              ...(folder !== undefined ? { folder } : {})
            }))
          }
          const binary = findBinary(adapter.binary, { binDirs: options.binDirs })
          if (binary === undefined) {
            return Effect.fail(
              new CapabilityError({
                capability: name,
                reason: "setup",
                detail: `no \`${adapter.binary}\` on PATH or in ${options.binDirs.join(", ")}: install it with \`assay harnesses install ${harness}\` (npm package ${adapter.npmPackage})`
              })
            )
          }
          let subscription: Pick<BridgeOptions, "billing"> & { readonly subscription?: NonNullable<BridgeOptions["subscription"]> } = {}
          if (allowance !== null && vendor !== null) {
            const refused = Allowance.refusal(meter, allowance)
            if (refused !== null) return Effect.fail(new CapabilityError({ capability: name, reason: "setup", detail: refused }))
            const login = vendor.login(options.loginEnv)
            if (Either.isLeft(login)) return Effect.fail(new CapabilityError({ capability: name, reason: "setup", detail: login.left.detail }))
            subscription = { subscription: { login: login.right, vendor, onQuota }, billing: "subscription" }
          }
          return Effect.succeed(bridgedAgent(name, {
            ...subscription,
            harness,
            binary,
            model: resolved,
            cliModel: resolved.model.id,
            ...(options.ownTools === true ? { ownTools: true } : {}),
            ...(folder !== undefined ? { folder } : {}),
            ...(options.onStderr !== undefined ? { onStderr: options.onStderr } : {})
          }))
        })
    } satisfies BridgedCandidate
  })

/**
 * The versions of the agent CLIs a run's candidates name (`harness:NAME…`), by CLI: run metadata,
 * not identity. A CLI not found is left out (its cells say why).
 */
export const cliVersions = (candidates: ReadonlyArray<string>, binDirs: ReadonlyArray<string>): Effect.Effect<Readonly<Record<string, string>>> =>
  Effect.gen(function*() {
    const names = [...new Set(candidates.filter((c) => c.startsWith("harness:")).map((c) => c.slice("harness:".length).split(":")[0]!))]
    const out: Record<string, string> = {}
    for (const name of names) {
      if (!isHarnessName(name)) continue
      const found = yield* detect(adapters[name], { binDirs })
      if (found.version !== undefined) out[name] = found.version
    }
    return out
  })
