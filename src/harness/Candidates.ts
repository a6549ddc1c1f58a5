/**
 * Candidates are discovered, never hard-coded: for each live harness, the registry models of its
 * vendors (retired ones skipped), narrowed by family and by explicit `HARNESS:MODEL` picks; a live
 * harness with no vendor models gets one default candidate (its own default model).
 */
import { Either, Schema } from "effect"
import { costAt } from "../model/Cost.ts"
import { type Cost, type RegistryFile, resolveIn } from "../model/Registry.ts"
import { adapters } from "./adapters/index.ts"
import { type Detection, type HarnessName, isHarnessName, type ModelCall } from "./Harness.ts"

/** The registry as discovery sees it. */
export interface RegistryModel {
  readonly provider: string
  readonly id: string
  readonly family: string
  readonly retired: boolean
  /** USD per million tokens; undefined = no known price. */
  readonly cost: Cost | undefined
}

export const registryModels = (file: RegistryFile): ReadonlyArray<RegistryModel> =>
  Object.values(file.providers).flatMap((p) =>
    Object.values(p.models).map((m) => ({
      provider: p.id,
      id: m.id,
      family: m.family,
      retired: m.status === "retired",
      cost: m.cost
    }))
  )

export interface Candidate {
  readonly harness: HarnessName
  /** undefined = the harness's default model (the report names the one its transcript shows). */
  readonly model: string | undefined
  /** The registry provider the model came from, when it is a registry model. */
  readonly provider: string | undefined
  readonly cost: Cost | undefined
  /** `harness:model` or `harness:default`. */
  readonly label: string
}

/** The candidate's name in an experiment: `harness:NAME` on the harness's default model, else `harness:NAME:MODEL`. */
export const nameOf = (c: Pick<Candidate, "harness" | "model">): string =>
  c.model === undefined ? `harness:${c.harness}` : `harness:${c.harness}:${c.model}`

export interface HarnessModel {
  readonly harness: HarnessName
  readonly model: string
}

export class CandidateError extends Schema.TaggedError<CandidateError>()("CandidateError", {
  input: Schema.String,
  reason: Schema.Literal("malformed", "unknown-harness"),
  detail: Schema.String
}) {
  override get message() {
    return `${this.input}: ${this.reason}: ${this.detail}`
  }
}

/** `codex:gpt-5` -> { harness: "codex", model: "gpt-5" }; the model part may itself hold ':' or '/'. */
export const parseHarnessModel = (input: string): Either.Either<HarnessModel, CandidateError> => {
  const i = input.indexOf(":")
  if (i <= 0 || i === input.length - 1) {
    return Either.left(new CandidateError({ input, reason: "malformed", detail: "expected HARNESS:MODEL" }))
  }
  const harness = input.slice(0, i)
  if (!isHarnessName(harness)) {
    return Either.left(
      new CandidateError({ input, reason: "unknown-harness", detail: `${harness} is not one of ${Object.keys(adapters).join(", ")}` })
    )
  }
  return Either.right({ harness, model: input.slice(i + 1) })
}

/**
 * Registry rows for picks named by an alias (`codex:gpt-5`): the harness is asked for the name the
 * user typed, priced as the model the alias stands for.
 */
export const aliasRows = (file: RegistryFile, picks: ReadonlyArray<HarnessModel>): ReadonlyArray<RegistryModel> =>
  picks.flatMap((p) =>
    adapters[p.harness].vendors.flatMap((vendor) => {
      const found = resolveIn(file, `${vendor}:${p.model}`)
      return found._tag === "Right" && found.right.provider === vendor && found.right.model.id !== p.model
        ? [{ provider: vendor, id: p.model, family: found.right.model.family, retired: found.right.model.status === "retired", cost: found.right.model.cost }]
        : []
    })
  )

export interface CandidateFilter {
  /** Registry families to keep (case-insensitive); empty or absent = all. */
  readonly families?: ReadonlyArray<string>
  /** Explicit picks; when any is given, only these pairs are candidates (any id the harness accepts). */
  readonly models?: ReadonlyArray<HarnessModel>
}

const label = (harness: HarnessName, model: string | undefined) => `${harness}:${model ?? "default"}`

export const discoverCandidates = (
  detections: ReadonlyArray<Detection>,
  registry: ReadonlyArray<RegistryModel>,
  filter: CandidateFilter = {}
): ReadonlyArray<Candidate> => {
  const families = (filter.families ?? []).map((f) => f.toLowerCase())
  const picks = filter.models ?? []
  const out: Array<Candidate> = []
  for (const d of detections) {
    if (d.liveness.status !== "live") continue
    const vendors = adapters[d.harness].vendors
    const own = registry.filter((m) => vendors.includes(m.provider))
    if (picks.length > 0) {
      for (const p of picks) {
        if (p.harness !== d.harness) continue
        const known = own.find((m) => m.id === p.model)
        out.push({ harness: d.harness, model: p.model, provider: known?.provider, cost: known?.cost, label: label(d.harness, p.model) })
      }
      continue
    }
    if (own.length === 0) {
      out.push({ harness: d.harness, model: undefined, provider: undefined, cost: undefined, label: label(d.harness, undefined) })
      continue
    }
    for (const m of own) {
      if (m.retired) continue
      if (families.length > 0 && !families.includes(m.family.toLowerCase())) continue
      out.push({ harness: d.harness, model: m.id, provider: m.provider, cost: m.cost, label: label(d.harness, m.id) })
    }
  }
  return out
}

/** The default judge: the candidate with the highest known output price; ties go to the harness name. */
export const defaultJudge = (candidates: ReadonlyArray<Candidate>): Candidate | undefined =>
  candidates
    .filter((c) => c.cost !== undefined)
    .sort((a, b) => (b.cost?.output ?? 0) - (a.cost?.output ?? 0) || a.harness.localeCompare(b.harness) || a.label.localeCompare(b.label))[0]

/**
 * List-price cost of one run from its transcript's token counts; undefined (never 0) when the
 * model has no price or the run has no token counts (no transcript, or no model call in it).
 */
export const runCostUsd = (
  calls: ReadonlyArray<ModelCall> | undefined,
  price: Cost | undefined
): number | undefined => {
  if (price === undefined || calls === undefined || calls.length === 0) return undefined
  return calls.reduce(
    (sum, c) =>
      sum +
      costAt(price, {
        inputTokens: c.input,
        outputTokens: c.output,
        cacheReadTokens: c.cacheRead,
        cacheWriteTokens: c.cacheWrite
      }),
    0
  )
}
