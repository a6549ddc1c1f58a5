/**
 * A bridged harness on the user's own subscription login (`harness:claude[:MODEL]:subscription`,
 * `harness:codex…:subscription`): the CLI runs on its login, not on a placeholder key, and the
 * proxy forwards the CLI's own Authorization header unchanged to the vendor, reading the vendor's
 * quota headers on every answer.
 *
 * The login is the user's (claude: CLAUDE_CODE_OAUTH_TOKEN, else `.credentials.json` under the
 * user's CLAUDE_CONFIG_DIR or ~/.claude; codex: `auth.json` under CODEX_HOME or ~/.codex, a
 * ChatGPT login), given to the CLI in the Attempt's own config folder, read-only.
 * The credential lives in memory and in that copy only: requests are recorded in assay's shape,
 * which has no headers, and the forwarder never logs one.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Either, Schema } from "effect"
import type { Allowance, Reading } from "../Allowance.ts"
import { defaultAllowance } from "../Allowance.ts"

export class SubscriptionError extends Schema.TaggedError<SubscriptionError>()("SubscriptionError", {
  reason: Schema.Literal("syntax", "not-supported", "no-login"),
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

/** Where the CLI's login comes from; `token` is the credential the CLI will send. */
export type Login =
  | { readonly _tag: "env"; readonly token: string }
  | { readonly _tag: "file"; readonly path: string; readonly content: string; readonly token: string }

const CodexAuth = Schema.Struct({ tokens: Schema.Struct({ access_token: Schema.NonEmptyString }) })
const decodeCodexAuth = Schema.decodeUnknownEither(Schema.parseJson(CodexAuth))

/** The user's codex ChatGPT login (`auth.json`), read from `env` (process.env by default). */
export const codexLogin = (env: Readonly<Record<string, string | undefined>> = process.env): Either.Either<Login, SubscriptionError> => {
  const dir = env["CODEX_HOME"] ?? path.join(env["HOME"] ?? os.homedir(), ".codex")
  const file = path.join(dir, "auth.json")
  let content: string
  try {
    content = fs.readFileSync(file, "utf8")
  } catch {
    return Either.left(new SubscriptionError({ reason: "no-login", detail: `no codex login: log in with \`codex login\` (${file} is not readable)` }))
  }
  const decoded = decodeCodexAuth(content)
  if (Either.isLeft(decoded)) {
    return Either.left(new SubscriptionError({ reason: "no-login", detail: `no codex ChatGPT login: ${file} holds no tokens.access_token` }))
  }
  return Either.right({ _tag: "file", path: file, content, token: decoded.right.tokens.access_token })
}

const Credentials = Schema.Struct({ claudeAiOauth: Schema.Struct({ accessToken: Schema.NonEmptyString }) })
const decodeCredentials = Schema.decodeUnknownEither(Schema.parseJson(Credentials))

/** The user's Claude Code login, read from `env` (process.env by default). */
export const claudeLogin = (env: Readonly<Record<string, string | undefined>> = process.env): Either.Either<Login, SubscriptionError> => {
  const token = env["CLAUDE_CODE_OAUTH_TOKEN"]
  if (token !== undefined && token !== "") return Either.right({ _tag: "env", token })
  const dir = env["CLAUDE_CONFIG_DIR"] ?? path.join(env["HOME"] ?? os.homedir(), ".claude")
  const file = path.join(dir, ".credentials.json")
  let content: string
  try {
    content = fs.readFileSync(file, "utf8")
  } catch {
    return Either.left(new SubscriptionError({ reason: "no-login", detail: `no Claude Code login: set CLAUDE_CODE_OAUTH_TOKEN or log in with \`claude\` (${file} is not readable)` }))
  }
  const decoded = decodeCredentials(content)
  if (Either.isLeft(decoded)) {
    return Either.left(new SubscriptionError({ reason: "no-login", detail: `no Claude Code login: ${file} holds no claudeAiOauth.accessToken` }))
  }
  return Either.right({ _tag: "file", path: file, content, token: decoded.right.claudeAiOauth.accessToken })
}

/**
 * `subscription[,share=S][,pause-at=P]`, the last `:` part of a harness candidate: the allowance
 * (fractions in (0, 1]) or null when the part is no subscription.
 */
export const parseSubscription = (part: string): Either.Either<Allowance | null, SubscriptionError> => {
  const [head, ...options] = part.split(",")
  if (head !== "subscription") return Either.right(null)
  let allowance: Allowance = defaultAllowance
  for (const option of options) {
    const m = /^(share|pause-at)=([0-9.]+)$/.exec(option)
    const value = m === null ? NaN : Number(m[2])
    if (m === null || !(value > 0 && value <= 1)) {
      return Either.left(new SubscriptionError({ reason: "syntax", detail: `${part}: expected subscription[,share=S][,pause-at=P] with S and P in (0, 1]` }))
    }
    allowance = m[1] === "share" ? { ...allowance, share: value } : { ...allowance, pauseAt: value }
  }
  return Either.right(allowance)
}

/** Anthropic's unified-limit header windows, under Claude Code's names for them. */
const windows: Readonly<Record<string, string>> = {
  "5h": "five_hour",
  "7d": "seven_day",
  "7d_opus": "seven_day_opus",
  "7d_sonnet": "seven_day_sonnet",
  "7d_oi": "seven_day_overage_included"
}

/**
 * The quota readings of one vendor answer: each `anthropic-ratelimit-unified-<w>-utilization`
 * (0..1) in percent; a rejection (status `rejected`) reads its representative window as 100%.
 */
export const anthropicQuota = (headers: Headers): ReadonlyArray<Reading> => {
  const out: Array<Reading> = []
  const prefix = "anthropic-ratelimit-unified-"
  headers.forEach((value, name) => {
    const m = new RegExp(`^${prefix}(.+)-utilization$`).exec(name.toLowerCase())
    const window = m === null ? undefined : windows[m[1]!]
    const u = Number(value)
    // Percent to two decimals: 0.85 * 100 is 85.00000000000001 in floating point.
    if (window !== undefined && value !== "" && Number.isFinite(u)) out.push({ window, usedPercent: Math.round(u * 10_000) / 100 })
  })
  if (headers.get(`${prefix}status`) === "rejected") {
    const claim = headers.get(`${prefix}representative-claim`) ?? "unified"
    const window = Object.values(windows).includes(claim) ? claim : windows[claim] ?? claim
    const at = out.findIndex((r) => r.window === window)
    if (at >= 0) out.splice(at, 1)
    out.push({ window, usedPercent: 100 })
  }
  return out.sort((a, b) => a.window.localeCompare(b.window))
}

/** codex's `x-codex-{primary,secondary}-used-percent` (0..100), under codex's own window names. */
export const codexQuota = (headers: Headers): ReadonlyArray<Reading> =>
  ["primary", "secondary"].flatMap((window) => {
    const value = headers.get(`x-codex-${window}-used-percent`)
    const used = value === null || value === "" ? NaN : Number(value)
    return Number.isFinite(used) ? [{ window, usedPercent: used }] : []
  })

/** How a subscription CLI's calls reach its vendor, and what its answers say of the quota. */
export interface Vendor {
  /** The user's variable naming the vendor's base URL, and the vendor's own. */
  readonly baseUrlEnv: string
  readonly defaultBaseUrl: string
  /** The variables the Model service's client reads for this provider: pointed at the forwarder per call. */
  readonly clientBaseUrlEnv: string
  readonly clientKeyEnv: string
  /** The client's paths begin with `/v1` (Anthropic's), so a base URL given with it loses it. */
  readonly clientAddsVersion: boolean
  /** The headers of the CLI's request that carry its login: forwarded unchanged, never recorded. */
  readonly credentialHeaders: ReadonlyArray<string>
  /** The answers' headers passed back to the CLI (its own quota display). */
  readonly quotaHeaderPrefix: string
  readonly quota: (headers: Headers) => ReadonlyArray<Reading>
  /** Where the CLI keeps its login: the variable naming its config folder, the file's name there. */
  readonly configDirEnv: string
  readonly loginFile: string
  /** The provider of the models it runs. */
  readonly provider: string
  readonly login: (env?: Readonly<Record<string, string | undefined>>) => Either.Either<Login, SubscriptionError>
}

export const vendors: Readonly<Record<"claude" | "codex", Vendor>> = {
  claude: {
    baseUrlEnv: "ANTHROPIC_BASE_URL",
    defaultBaseUrl: "https://api.anthropic.com",
    clientBaseUrlEnv: "ANTHROPIC_BASE_URL",
    clientKeyEnv: "ANTHROPIC_API_KEY",
    clientAddsVersion: true,
    credentialHeaders: ["authorization", "anthropic-beta"],
    quotaHeaderPrefix: "anthropic-ratelimit-unified-",
    quota: anthropicQuota,
    configDirEnv: "CLAUDE_CONFIG_DIR",
    loginFile: ".credentials.json",
    provider: "anthropic",
    login: claudeLogin
  },
  codex: {
    // codex's own ChatGPT backend; ASSAY_CHATGPT_BASE_URL points it elsewhere (a proxy, a test).
    baseUrlEnv: "ASSAY_CHATGPT_BASE_URL",
    defaultBaseUrl: "https://chatgpt.com/backend-api/codex",
    clientBaseUrlEnv: "OPENAI_BASE_URL",
    clientKeyEnv: "OPENAI_API_KEY",
    clientAddsVersion: false,
    credentialHeaders: ["authorization", "chatgpt-account-id"],
    quotaHeaderPrefix: "x-codex-",
    quota: codexQuota,
    configDirEnv: "CODEX_HOME",
    loginFile: "auth.json",
    provider: "openai",
    login: codexLogin
  }
}

export const isSubscriptionHarness = (harness: string): harness is keyof typeof vendors => harness === "claude" || harness === "codex"
