/**
 * What every agent CLI adapter provides, and the values a harness run produces.
 *
 * An adapter is pure: it turns (prompt, model, endpoint, folders) into a command line, environment
 * and config files, and turns captured output back into a transcript. Spawning lives in `Run.ts`.
 */
import { Schema } from "effect"

export const harnessNames = ["codex", "claude", "qwen", "gemini", "opencode", "pi"] as const
export type HarnessName = (typeof harnessNames)[number]

export const isHarnessName = (s: string): s is HarnessName =>
  (harnessNames as ReadonlyArray<string>).includes(s)

/** A model endpoint the CLI is pointed at. `baseUrl` is the server root, e.g. `http://127.0.0.1:8080`
 * (adapters add `/v1` where their wire API needs it). */
export interface Endpoint {
  readonly baseUrl: string
  readonly apiKey: string
}

export type LivenessStatus = "live" | "absent" | "disabled"

export interface Liveness {
  readonly status: LivenessStatus
  readonly reason: string
}

export interface Detection {
  readonly harness: HarnessName
  /** Absolute path of the binary when found. */
  readonly binary: string | undefined
  readonly version: string | undefined
  readonly liveness: Liveness
}

export interface InvocationInput {
  readonly prompt: string
  /** `undefined` = the harness's own default model. */
  readonly model: string | undefined
  /** `undefined` = the CLI's own configuration and credentials (the user's login). */
  readonly endpoint: Endpoint | undefined
  /** The fresh work folder the CLI runs in. */
  readonly workDir: string
  /** A private folder (outside workDir) for the CLI's config, home and sessions; removed afterwards. */
  readonly stateDir: string
}

export interface ConfigFile {
  /** Absolute path; always under stateDir. */
  readonly path: string
  readonly content: string
}

export interface Invocation {
  readonly args: ReadonlyArray<string>
  /** Variables set on top of the base environment. */
  readonly env: Readonly<Record<string, string>>
  /** Variables removed from the base environment (e.g. a key that would override the endpoint). */
  readonly unsetEnv: ReadonlyArray<string>
  readonly files: ReadonlyArray<ConfigFile>
}

/**
 * Token counts of one model call. `undefined` = the transcript does not report that count.
 * The counts are disjoint (as `src/model/Cost.ts` bills them): `input` excludes cache reads and
 * writes, whatever convention the CLI's transcript uses; `reasoning` is part of `output`.
 */
export interface ModelCall {
  readonly model: string | undefined
  readonly input: number
  readonly output: number
  readonly cacheRead: number | undefined
  readonly cacheWrite: number | undefined
  readonly reasoning: number | undefined
}

/** One reading of a subscription quota window (codex: `rate_limits` of its `token_count` events). */
export interface QuotaReading {
  /** `primary`, `secondary`, ... as the CLI names its windows. */
  readonly window: string
  /** Percent of the window used, by anyone on the account, when the reading was taken. */
  readonly usedPercent: number
  readonly windowMinutes: number | undefined
}

export interface Transcript {
  readonly finalAnswer: string
  readonly calls: ReadonlyArray<ModelCall>
  /** Distinct model names the transcript shows, in order of appearance. */
  readonly models: ReadonlyArray<string>
  /** Quota window readings in the order the CLI reported them; absent when it reports none. */
  readonly quota?: ReadonlyArray<QuotaReading>
}

/** What a run captured, handed to the adapter's parser. */
export interface CapturedOutput {
  readonly stdout: string
  readonly stderr: string
  /** Contents of the session files found under `sessionDirs(stateDir)` (JSONL), sorted by path. */
  readonly sessionFiles: ReadonlyArray<string>
}

export class TranscriptError extends Schema.TaggedError<TranscriptError>()("TranscriptError", {
  harness: Schema.String,
  reason: Schema.Literal("no-answer", "malformed"),
  detail: Schema.String
}) {
  override get message() {
    return `${this.harness} transcript: ${this.reason}: ${this.detail}`
  }
}

export interface HarnessAdapter {
  readonly name: HarnessName
  /** Binary name looked up on PATH or in node_modules/.bin. */
  readonly binary: string
  /** npm package that provides the binary (for install hints). */
  readonly npmPackage: string
  /** Registry providers whose models this harness runs; empty = multi-vendor, one default candidate. */
  readonly vendors: ReadonlyArray<string>
  readonly invocation: (input: InvocationInput) => Invocation
  /** Folders (under stateDir) whose `*.jsonl` files are read back for the transcript. */
  readonly sessionDirs: (stateDir: string) => ReadonlyArray<string>
  /**
   * On the user's own login (no endpoint) the CLI keeps its sessions in the user's folders: the
   * folders to look in (not recursively) and the file-name suffix that picks this run's session
   * out of the others, from its stdout. Absent: nothing beyond stdout is read in that mode.
   */
  readonly loginSessions?: (
    stdout: string,
    env: Readonly<Record<string, string>>,
    now: Date
  ) => { readonly dirs: ReadonlyArray<string>; readonly suffix: string } | undefined
  readonly parse: (output: CapturedOutput) => Transcript | TranscriptError
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the adapters' parsers.

export type JsonObject = { readonly [k: string]: unknown }

export const isObject = (u: unknown): u is JsonObject =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** Parses each line that is a JSON object; other lines (banners, warnings) are ignored. */
export const jsonLines = (text: string): ReadonlyArray<JsonObject> => {
  const out: Array<JsonObject> = []
  for (const line of text.split("\n")) {
    const t = line.trim()
    if (!t.startsWith("{")) continue
    try {
      const v: unknown = JSON.parse(t)
      if (isObject(v)) out.push(v)
    } catch {
      // A CLI may interleave non-JSON progress lines that begin with "{"; they carry no transcript.
      continue
    }
  }
  return out
}

/** Parses the last top-level JSON value in a text that may have log lines before it. */
export const lastJsonValue = (text: string): unknown => {
  const t = text.trim()
  try {
    return JSON.parse(t)
  } catch {
    const lines = jsonLines(t)
    return lines[lines.length - 1]
  }
}

export const num = (u: unknown): number | undefined =>
  typeof u === "number" && Number.isFinite(u) ? u : undefined

export const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

export const field = (o: unknown, ...path: ReadonlyArray<string>): unknown => {
  let cur: unknown = o
  for (const k of path) {
    if (!isObject(cur)) return undefined
    cur = cur[k]
  }
  return cur
}

export const distinct = (xs: ReadonlyArray<string | undefined>): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const x of xs) if (x !== undefined && x !== "" && !out.includes(x)) out.push(x)
  return out
}

export const transcript = (
  harness: HarnessName,
  finalAnswer: string | undefined,
  calls: ReadonlyArray<ModelCall>,
  extraModels: ReadonlyArray<string | undefined> = [],
  quota: ReadonlyArray<QuotaReading> = []
): Transcript | TranscriptError =>
  finalAnswer === undefined
    ? new TranscriptError({ harness, reason: "no-answer", detail: "no final answer in the output" })
    : {
        finalAnswer,
        calls,
        models: distinct([...calls.map((c) => c.model), ...extraModels]),
        ...(quota.length > 0 ? { quota } : {})
      }

export const isTranscriptError = (u: Transcript | TranscriptError): u is TranscriptError =>
  u instanceof TranscriptError
