#!/usr/bin/env node
// A fake agent CLI for the harness tests. It speaks codex's headless surface (`--version`,
// `exec --json ... PROMPT`, CODEX_HOME rollout files) and does what the JSON file named by
// FAKE_HARNESS_SCRIPT says: write files, print an answer and usage, sleep, spawn a child, exit.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const args = process.argv.slice(2)
if (args[0] === "--version") {
  if (process.env.FAKE_HARNESS_BROKEN === "1") {
    process.stderr.write("fake-harness: cannot start\n")
    process.exit(3)
  }
  process.stdout.write("fake-harness 1.2.3\n")
  process.exit(0)
}

const loaded = process.env.FAKE_HARNESS_SCRIPT ? JSON.parse(fs.readFileSync(process.env.FAKE_HARNESS_SCRIPT, "utf8")) : {}
// `byPrompt: [{ match, ...fields }]`: the first entry whose regex matches the prompt (the last
// argument) overrides the script's fields, so one script can play several tasks and a judge.
const prompt = args[args.length - 1] ?? ""
const override = (loaded.byPrompt ?? []).find((o) => new RegExp(o.match).test(prompt)) ?? {}
const script = { ...loaded, ...override }
const model = script.model ?? (args.includes("-m") ? args[args.indexOf("-m") + 1] : "fake-default")
const emit = (o) => process.stdout.write(JSON.stringify(o) + "\n")

emit({ type: "thread.started", thread_id: "fake" })
emit({ type: "turn.started" })
if (script.envFile) {
  // Lets a test see where the CLI believes it runs and which variables it received (names only).
  fs.writeFileSync(script.envFile, JSON.stringify({ cwd: process.cwd(), pwd: process.env.PWD, keys: Object.keys(process.env).sort() }))
}
for (const [file, content] of Object.entries(script.writes ?? {})) {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, content)
}
if (script.spawnChild) {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" })
  fs.writeFileSync(script.spawnChild, String(child.pid))
}
const finish = () => {
  const usage = script.usage ?? [{ input: 100, cached: 0, output: 10 }]
  if (process.env.CODEX_HOME) {
    // Filed by local date like codex's own rollouts, named after the thread ("fake").
    const now = new Date()
    const dir = path.join(process.env.CODEX_HOME, "sessions", String(now.getFullYear()), String(now.getMonth() + 1).padStart(2, "0"), String(now.getDate()).padStart(2, "0"))
    fs.mkdirSync(dir, { recursive: true })
    const lines = [{ type: "turn_context", payload: { model } }]
    // `rateLimits: [{ primary: 42, secondary: 7 }, ...]`: codex's quota readings, one token_count event each.
    for (const r of script.rateLimits ?? []) {
      const window = (p) => (p === undefined ? null : { used_percent: p, window_minutes: 300, resets_at: null })
      lines.push({ type: "event_msg", payload: { type: "token_count", info: null, rate_limits: { primary: window(r.primary), secondary: window(r.secondary) } } })
    }
    for (const u of usage) {
      lines.push({
        type: "token_usage_record",
        payload: { usage: { input_tokens: u.input + u.cached, cached_input_tokens: u.cached, output_tokens: u.output, reasoning_output_tokens: 0 } }
      })
    }
    fs.writeFileSync(path.join(dir, "rollout-fake.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n")
  }
  if (script.answer !== undefined) emit({ type: "item.completed", item: { id: "item_1", type: "agent_message", text: script.answer } })
  const sum = (k) => usage.reduce((a, u) => a + u[k], 0)
  emit({
    type: "turn.completed",
    usage: { input_tokens: sum("input") + sum("cached"), cached_input_tokens: sum("cached"), output_tokens: sum("output"), reasoning_output_tokens: 0 }
  })
  process.exit(script.exitCode ?? 0)
}
if (script.sleepMs) setTimeout(finish, script.sleepMs)
else finish()
