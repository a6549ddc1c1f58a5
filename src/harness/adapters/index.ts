import type { HarnessAdapter, HarnessName } from "../Harness.ts"
import { claude } from "./claude.ts"
import { codex } from "./codex.ts"
import { gemini } from "./gemini.ts"
import { opencode } from "./opencode.ts"
import { pi } from "./pi.ts"
import { qwen } from "./qwen.ts"

export { claude, codex, gemini, opencode, pi, qwen }

export const adapters: Readonly<Record<HarnessName, HarnessAdapter>> = { codex, claude, qwen, gemini, opencode, pi }
