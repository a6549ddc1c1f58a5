/**
 * Harness setup in one place: `assay harnesses` lists the pinned agent CLIs with their pinned and
 * installed versions and whether each starts; `assay harnesses install` checks its names and, with
 * no registry to reach, fails in one line leaving the CLIs as they were (nothing is downloaded
 * here); the endpoint variable is taken with or without `/v1`.
 */
import { describe, expect, it } from "@effect/vitest"
import { chmodSync, copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs"
import { delimiter, dirname, join } from "node:path"
import { harnessEndpoint, serverRoot } from "../../src/cli/harnessBin.ts"
import { claude, pi, qwen } from "../../src/harness/adapters/index.ts"
import { assay, root, tempDir } from "./support.ts"

/** A tools folder pinning what tools/harnesses pins, with codex installed at its pin and qwen at another version. */
const toolsFolder = (): string => {
  const dir = tempDir("assay-harnesses-")
  for (const f of ["package.json", "package-lock.json"]) copyFileSync(join(root, "tools", "harnesses", f), join(dir, f))
  const installed = (pkg: string, version: string) => {
    mkdirSync(join(dir, "node_modules", pkg), { recursive: true })
    writeFileSync(join(dir, "node_modules", pkg, "package.json"), JSON.stringify({ name: pkg, version }))
  }
  installed("@openai/codex", "0.171.0")
  installed("@qwen-code/qwen-code", "0.15.9")
  // codex's binary: answers --version as the real one does.
  mkdirSync(join(dir, "node_modules", ".bin"))
  writeFileSync(join(dir, "node_modules", ".bin", "codex"), "#!/bin/sh\necho codex-cli 0.171.0\n")
  chmodSync(join(dir, "node_modules", ".bin", "codex"), 0o755)
  return dir
}

// On PATH only npm's folder and the runtime's: npm is found, the agent CLIs of this machine are not.
const npmDir = (process.env["PATH"] ?? "").split(delimiter).find((d) => d !== "" && existsSync(join(d, "npm"))) ?? dirname(process.execPath)
const env = (tools: string, extra: Record<string, string> = {}) => ({
  ASSAY_HARNESS_TOOLS_DIR: tools,
  PATH: [npmDir, dirname(process.execPath)].join(delimiter),
  ...extra
})

interface Listed {
  readonly tools: string
  readonly harnesses: ReadonlyArray<{ name: string; package: string; pinned: string | null; installed: string | null; starts: boolean; version: string | null }>
}

describe("assay harnesses", () => {
  it("lists each pinned CLI with its pinned version, the installed one or how to install it, and whether it starts", async () => {
    const tools = toolsFolder()
    const listed = await assay(["harnesses", "--json"], env(tools))
    expect(listed.code, listed.stderr).toBe(0)
    const doc = JSON.parse(listed.stdout) as Listed
    expect(doc.tools).toBe(tools)
    expect(doc.harnesses.map((h) => h.name)).toEqual(["codex", "claude", "qwen", "gemini", "opencode", "pi"])
    expect(doc.harnesses[0]).toMatchObject({ name: "codex", package: "@openai/codex", pinned: "0.171.0", installed: "0.171.0", starts: true, version: "0.171.0" })
    expect(doc.harnesses[1]).toMatchObject({ name: "claude", pinned: "2.1.197", installed: null, starts: false })
    expect(doc.harnesses[2]).toMatchObject({ name: "qwen", installed: "0.15.9", starts: false })
    const text = await assay(["harnesses", "list"], env(tools))
    expect(text.code, text.stderr).toBe(0)
    const line = (name: string) => text.stdout.split("\n").find((l) => l.startsWith(`${name} `)) ?? ""
    expect(text.stdout.split("\n")[0]).toMatch(/^harness\s+package\s+pinned\s+installed\s+starts$/)
    expect(line("codex")).toMatch(/0\.171\.0\s+0\.171\.0\s+yes, 0\.171\.0$/)
    expect(line("claude")).toContain("not installed: run assay harnesses install claude")
    expect(line("qwen")).toContain("0.15.9, not the pinned version: run assay harnesses install qwen")
  }, 120_000)

  it("install refuses an unknown name in one line (exit 2) and leaves a CLI at its pin alone", async () => {
    const tools = toolsFolder()
    const unknown = await assay(["harnesses", "install", "codex", "cursor"], env(tools))
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toBe("assay: harnesses install: unknown harness cursor: choose among codex, claude, qwen, gemini, opencode, pi, or all\n")
    const current = await assay(["harnesses", "install", "codex"], env(tools))
    expect(current.code, current.stderr).toBe(0)
    expect(current.stdout).toBe(`already installed at the pinned versions: codex 0.171.0 (${tools})\n`)
    const none = await assay(["harnesses", "install"], env(tempDir("assay-harnesses-none-")))
    expect(none.code).toBe(1)
    expect(none.stderr).toMatch(/^assay: no \S+package\.json: the pinned agent CLIs are part of a checkout of assay/)
  }, 120_000)

  it("install with no registry to reach fails in one line and puts the installed CLIs back", async () => {
    const tools = toolsFolder()
    // npm offline with an empty cache: it fails at its first fetch, as with no network.
    const ran = await assay(["harnesses", "install", "pi"], env(tools, { npm_config_offline: "true", npm_config_cache: tempDir("assay-npm-cache-") }))
    expect(ran.code).toBe(1)
    // qwen is installed off its pin: it goes to its pin with pi, or npm would remove it.
    expect(ran.stderr).toContain("also qwen 0.15.9 -> 0.15.10 (off its pin, which npm would otherwise remove)")
    expect(ran.stderr.trimEnd().split("\n").at(-1)).toBe(
      `assay: could not install pi, qwen: npm cannot reach its registry (ENOTCACHED); connect to the network (or set npm's registry or proxy) and run again. ${join(tools, "node_modules")} is as it was`
    )
    expect(existsSync(join(tools, "node_modules", "@openai", "codex", "package.json"))).toBe(true)
    expect(existsSync(join(tools, "node_modules", "@qwen-code", "qwen-code", "package.json"))).toBe(true)
    expect(existsSync(join(tools, "node_modules", "@mariozechner"))).toBe(false)
    expect(existsSync(join(tools, ".install"))).toBe(false)
  }, 120_000)
})

describe("assay harnesses --help", () => {
  it("describes each subcommand's flags and arguments, and the top help lists both", async () => {
    for (const sub of ["list", "install"]) {
      const r = await assay(["harnesses", sub, "--help"])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain(`assay harnesses ${sub}`)
      expect(r.stdout).not.toContain("(not described)")
    }
    const top = await assay(["--help"])
    for (const c of ["harnesses list", "harnesses install"]) expect(top.stdout).toContain(`  ${c} `)
  }, 120_000)
})

describe("ASSAY_HARNESS_BASE_URL", () => {
  it("is taken with or without /v1 and trailing slashes, as OPENAI_BASE_URL is given", () => {
    for (const given of ["http://127.0.0.1:4000", "http://127.0.0.1:4000/", "http://127.0.0.1:4000/v1", "http://127.0.0.1:4000/v1/"]) {
      expect(serverRoot(given), given).toBe("http://127.0.0.1:4000")
    }
    expect(serverRoot("https://proxy.example/openai/v1")).toBe("https://proxy.example/openai")
    expect(harnessEndpoint({})).toBeUndefined()
    expect(harnessEndpoint({ ASSAY_HARNESS_BASE_URL: "http://127.0.0.1:4000/v1", ASSAY_HARNESS_API_KEY: "sk-k" })).toEqual({ baseUrl: "http://127.0.0.1:4000", apiKey: "sk-k" })
  })

  it("given with /v1, pi, qwen and claude are pointed at the path their API has, never /v1/v1", () => {
    const endpoint = harnessEndpoint({ ASSAY_HARNESS_BASE_URL: "http://127.0.0.1:4000/v1" })
    const input = { prompt: "p", model: "m", endpoint, workDir: "/tmp/w", stateDir: "/tmp/s" }
    const models = JSON.parse(pi.invocation(input).files.find((f) => f.path.endsWith("models.json"))?.content ?? "{}") as { providers: { local: { baseUrl: string } } }
    expect(models.providers.local.baseUrl).toBe("http://127.0.0.1:4000/v1")
    expect(qwen.invocation(input).env["OPENAI_BASE_URL"]).toBe("http://127.0.0.1:4000/v1")
    expect(claude.invocation(input).env["ANTHROPIC_BASE_URL"]).toBe("http://127.0.0.1:4000")
  })
})
