import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { detectAll, parseVersion } from "../../src/harness/Detect.ts"
import { fakeBin } from "./support.ts"

describe("harness detection", () => {
  it.effect("a machine with no harness installed lists each as absent with the reason", () =>
    Effect.gen(function* () {
      const all = yield* detectAll({ path: "/nonexistent" })
      expect(all.map((d) => d.harness)).toEqual(["codex", "claude", "qwen", "gemini", "opencode", "pi"])
      for (const d of all) {
        expect(d.liveness.status).toBe("absent")
        expect(d.liveness.reason).toContain(`no \`${d.harness}\` binary`)
      }
    }))

  it.effect("a binary in a given bin folder is live with its version; a broken one or a turned-off one is disabled", () =>
    Effect.gen(function* () {
      const good = fakeBin(["codex", "pi"])
      const broken = fakeBin(["qwen"], { FAKE_HARNESS_BROKEN: "1" })
      const all = yield* detectAll({ binDirs: [good, broken], path: "/nonexistent", disabled: { pi: "turned off by --harness" } })
      const by = Object.fromEntries(all.map((d) => [d.harness, d]))
      expect(by.codex).toMatchObject({ binary: `${good}/codex`, version: "1.2.3", liveness: { status: "live" } })
      expect(by.qwen?.liveness.status).toBe("disabled")
      expect(by.qwen?.liveness.reason).toContain("exited 3: fake-harness: cannot start")
      expect(by.pi?.liveness).toEqual({ status: "disabled", reason: "turned off by --harness" })
      expect(by.claude?.liveness.status).toBe("absent")
    }))

  it("reads the version number out of each CLI's --version line", () => {
    expect(parseVersion("codex-cli 0.171.0\n")).toBe("0.171.0")
    expect(parseVersion("2.1.197 (Claude Code)")).toBe("2.1.197")
    expect(parseVersion("0.73.1")).toBe("0.73.1")
    expect(parseVersion("weird")).toBe("weird")
  })
})
