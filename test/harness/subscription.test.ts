/** The parts of a subscription candidate that read the user's input: its syntax, its login, the vendor's quota headers. */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { anthropicQuota, claudeLogin, codexLogin, codexQuota, parseSubscription } from "../../src/harness/bridge/Subscription.ts"
import { tempDir } from "../support/tempDirs.ts"

describe("subscription candidates", () => {
  it("subscription[,share=S][,pause-at=P]: the allowance, the default's figures where none is given; anything else is no subscription or a usage error", () => {
    expect(parseSubscription("subscription")).toEqual(Either.right({ share: 0.1, pauseAt: 0.8 }))
    expect(parseSubscription("subscription,share=0.25,pause-at=0.5")).toEqual(Either.right({ share: 0.25, pauseAt: 0.5 }))
    expect(parseSubscription("claude-sonnet-4-5")).toEqual(Either.right(null))
    for (const bad of ["subscription,share=0", "subscription,pause-at=1.5", "subscription,limit=0.2", "subscription,share="]) {
      expect(Either.isLeft(parseSubscription(bad)), bad).toBe(true)
    }
  })

  it("the login: CLAUDE_CODE_OAUTH_TOKEN first, else .credentials.json under CLAUDE_CONFIG_DIR or HOME/.claude; none is an error naming both", () => {
    const home = tempDir("assay-login-")
    expect(claudeLogin({ CLAUDE_CODE_OAUTH_TOKEN: "tok-env", HOME: home })).toEqual(Either.right({ _tag: "env", token: "tok-env" }))
    const none = claudeLogin({ HOME: home })
    expect(Either.isLeft(none) && none.left.detail).toContain("set CLAUDE_CODE_OAUTH_TOKEN or log in with `claude`")
    mkdirSync(join(home, ".claude"))
    const content = JSON.stringify({ claudeAiOauth: { accessToken: "tok-file", scopes: ["user:inference"] } })
    writeFileSync(join(home, ".claude", ".credentials.json"), content)
    expect(claudeLogin({ HOME: home })).toEqual(Either.right({ _tag: "file", path: join(home, ".claude", ".credentials.json"), content, token: "tok-file" }))
    writeFileSync(join(home, ".claude", ".credentials.json"), "{}")
    const empty = claudeLogin({ HOME: home })
    expect(Either.isLeft(empty) && empty.left.detail).toContain("holds no claudeAiOauth.accessToken")
    const config = join(home, "elsewhere")
    mkdirSync(config)
    writeFileSync(join(config, ".credentials.json"), JSON.stringify({ claudeAiOauth: { accessToken: "tok-config" } }))
    expect(Either.map(claudeLogin({ HOME: home, CLAUDE_CONFIG_DIR: config }), (l) => l.token)).toEqual(Either.right("tok-config"))
  })

  it("Anthropic's unified-limit headers: each window's utilization in percent, under Claude Code's window names; a rejection reads its window as 100%", () => {
    const headers = new Headers({
      "anthropic-ratelimit-unified-status": "allowed",
      "anthropic-ratelimit-unified-5h-utilization": "0.85",
      "anthropic-ratelimit-unified-5h-reset": "1700000000",
      "anthropic-ratelimit-unified-7d-utilization": "0.123",
      "anthropic-ratelimit-unified-7d_opus-utilization": "",
      "x-other": "1"
    })
    expect(anthropicQuota(headers)).toEqual([{ window: "five_hour", usedPercent: 85 }, { window: "seven_day", usedPercent: 12.3 }])
    const rejected = new Headers({
      "anthropic-ratelimit-unified-status": "rejected",
      "anthropic-ratelimit-unified-representative-claim": "seven_day",
      "anthropic-ratelimit-unified-7d-utilization": "0.99"
    })
    expect(anthropicQuota(rejected)).toEqual([{ window: "seven_day", usedPercent: 100 }])
    expect(anthropicQuota(new Headers())).toEqual([])
  })

  it("codex's ChatGPT login: auth.json's tokens.access_token under CODEX_HOME or HOME/.codex; an API-key auth.json is no subscription login", () => {
    const home = tempDir("assay-login-")
    expect(Either.isLeft(codexLogin({ HOME: home }))).toBe(true)
    mkdirSync(join(home, ".codex"))
    writeFileSync(join(home, ".codex", "auth.json"), JSON.stringify({ OPENAI_API_KEY: "sk-x", tokens: null }))
    const apiKey = codexLogin({ HOME: home })
    expect(Either.isLeft(apiKey) && apiKey.left.detail).toContain("holds no tokens.access_token")
    const content = JSON.stringify({ tokens: { access_token: "tok-codex", account_id: "acct" } })
    writeFileSync(join(home, ".codex", "auth.json"), content)
    expect(codexLogin({ HOME: home })).toEqual(Either.right({ _tag: "file", path: join(home, ".codex", "auth.json"), content, token: "tok-codex" }))
  })

  it("codex's x-codex-{primary,secondary}-used-percent headers: each window's percent under codex's names", () => {
    expect(codexQuota(new Headers({ "x-codex-primary-used-percent": "42.5", "x-codex-secondary-used-percent": "7", "x-codex-primary-window-minutes": "300" })))
      .toEqual([{ window: "primary", usedPercent: 42.5 }, { window: "secondary", usedPercent: 7 }])
    expect(codexQuota(new Headers({ "x-codex-primary-used-percent": "" }))).toEqual([])
  })
})
