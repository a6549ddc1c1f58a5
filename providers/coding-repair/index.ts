/**
 * `coding-repair`: small repositories written for assay (repos/), each with one bug, an issue
 * describing it and a hidden test suite. The candidate gets the workspace through four tools:
 * list_files, read_file and write_file (pure tools on the Attempt's world, so `tool/read` and
 * `tool/write` effects) and run_command (a `process/spawn` effect, sandboxed: see workspace.ts).
 * The grade is the hidden tests passing on the workspace it leaves, with its tests untouched.
 */
import { Effect, Ref } from "effect"
import { type Agent, Benchmark, type Canonical, Capabilities, ContentId, type Conversation, Tool, ToolLoop, type Wallet, World, WorldEffects as WE } from "../../src/index.ts"
import { editedTests, runHidden } from "./grade.ts"
import { loadTasks, type RepairTask, testCommand } from "./repos.ts"
import {
  CommandResult,
  commandHandler,
  DEFAULT_TIMEOUT_SECONDS,
  difference,
  FILES,
  filesOf,
  MAX_TIMEOUT_SECONDS,
  normalPath,
  worldOf
} from "./workspace.ts"

export const BENCHMARK = "coding-repair"
const MAX_TURNS = 40
const MAX_WRITE_CHARS = 256 * 1024

const system = [
  "You are a software engineer fixing a bug in a small repository.",
  "The repository is your workspace: list_files, read_file and write_file see and change it; run_command runs a shell command in a copy of it (files the command changes are kept).",
  "Find the cause of the bug described in the issue and fix it in the source code. Do not change the tests: the files under tests/ must stay exactly as they are.",
  "Your fix is graded by tests you do not see, so fix the behaviour the issue describes, not only the visible tests.",
  "When you are done, reply with a short summary and no tool call."
].join("\n")

// ---------------------------------------------------------------------------------------------
// Tools

const str = (args: { readonly [k: string]: Canonical.Json }, name: string): string | undefined => {
  const v = args[name]
  return typeof v === "string" ? v : undefined
}

const pathParam = { type: "string", description: "A path relative to the repository's root, e.g. src/index.js." }

export const fileTools: ReadonlyArray<Tool.Tool> = [
  {
    spec: {
      name: "list_files",
      description: "List the files of the workspace, one path per line (optionally only those under a folder).",
      parameters: { type: "object", properties: { path: { type: "string", description: "A folder to list, e.g. src. Omit for all files." } }, required: [] }
    },
    access: "read",
    run: (world, args) => {
      const raw = str(args, "path")
      const folder = raw === undefined || raw === "" || raw === "." ? "" : normalPath(raw)
      if (folder === undefined) return Tool.fail(`Error: ${raw} is not a path inside the workspace`)
      const paths = World.entries(world, FILES).map(([p]) => p).filter((p) => folder === "" || p.startsWith(`${folder}/`)).sort()
      return paths.length > 0 ? Tool.ok(paths.join("\n")) : Tool.fail(`Error: no files under ${folder}`)
    }
  },
  {
    spec: {
      name: "read_file",
      description: "Read a file of the workspace.",
      parameters: { type: "object", properties: { path: pathParam }, required: ["path"] }
    },
    access: "read",
    run: (world, args) => {
      const p = normalPath(str(args, "path") ?? "")
      const text = p === undefined ? undefined : World.get(world, FILES, p)
      return typeof text === "string" ? Tool.ok(text) : Tool.fail(`Error: no such file: ${str(args, "path") ?? ""}`)
    }
  },
  {
    spec: {
      name: "write_file",
      description: "Write a file of the workspace (its whole content), creating it and its folders if needed.",
      parameters: {
        type: "object",
        properties: { path: pathParam, content: { type: "string", description: "The file's new content, in full." } },
        required: ["path", "content"]
      }
    },
    access: "write",
    run: (_world, args) => {
      const p = normalPath(str(args, "path") ?? "")
      const content = str(args, "content")
      if (p === undefined) return Tool.fail(`Error: ${str(args, "path") ?? ""} is not a path inside the workspace`)
      if (content === undefined) return Tool.fail("Error: content must be a string")
      if (content.length > MAX_WRITE_CHARS) return Tool.fail(`Error: a file holds at most ${MAX_WRITE_CHARS} characters`)
      return Tool.ok(`wrote ${p} (${content.length} characters)`, [{ table: FILES, key: p, value: content }])
    }
  }
]

const runCommandSpec: Tool.ToolSpec = {
  name: "run_command",
  description:
    `Run a shell command (sh -c) in a fresh copy of the workspace, with node and python3 on PATH and no network credentials. Files it creates, changes or removes are kept. It is killed, with every process it started, after timeout_seconds (default ${DEFAULT_TIMEOUT_SECONDS}, at most ${MAX_TIMEOUT_SECONDS}).`,
  parameters: {
    type: "object",
    properties: {
      command: { type: "string", description: "The command, e.g. node --test tests/" },
      timeout_seconds: { type: "integer", description: `Seconds before the command is killed (1 to ${MAX_TIMEOUT_SECONDS}).` }
    },
    required: ["command"]
  }
}

const toolSpecs: ReadonlyArray<Tool.ToolSpec> = [...fileTools.map((t) => t.spec), runCommandSpec]

const commandMessage = (r: CommandResult, timeoutSeconds: number): string => {
  const status = r.timedOut
    ? `timed out after ${timeoutSeconds} s: the command and every process it started were killed`
    : r.exitCode !== null
    ? `exit code ${r.exitCode}`
    : `killed by ${r.signal ?? "a signal"}`
  const changed = Object.keys(r.changes).sort()
  return [
    status,
    ...(r.stdout.length > 0 ? ["--- stdout ---", r.stdout] : []),
    ...(r.stderr.length > 0 ? ["--- stderr ---", r.stderr] : []),
    ...(changed.length > 0 ? [`files changed: ${changed.join(", ")}`] : [])
  ].join("\n")
}

/**
 * One run_command call as a `process/spawn` effect; the files it changed are applied to the
 * world (from the result, so a replay applies the same). Refused and faulted commands reach the
 * candidate as tool errors; a failed handler (or a replay that reached another workspace) ends
 * the Attempt.
 */
const runCommandCall = (task: RepairTask, call: Conversation.ToolCall) =>
  Effect.gen(function*() {
    const command = call.arguments["command"]
    if (typeof command !== "string" || command.trim() === "") return { content: "Error: command must be a non-empty string", error: true }
    const asked = call.arguments["timeout_seconds"]
    const timeoutSeconds = typeof asked === "number" && Number.isFinite(asked)
      ? Math.min(MAX_TIMEOUT_SECONDS, Math.max(1, Math.round(asked)))
      : DEFAULT_TIMEOUT_SECONDS
    const world = yield* WE.AttemptWorld
    const files = filesOf(yield* Ref.get(world.ref))
    const request = { task: task.id, command, timeoutSeconds, workspace: difference(task.workspace, files) }
    const result = yield* WE.perform({ kind: "process/spawn", key: "run_command", request }, CommandResult).pipe(
      Effect.catchTags({
        EffectRefused: (e) => Effect.succeed(`Error: ${e.message}`),
        EffectFault: (e) => Effect.succeed(`Error: ${e.message}`)
      })
    )
    if (typeof result === "string") return { content: result, error: true }
    const writes = Object.entries(result.changes).flatMap(([p, text]) => {
      const normal = normalPath(p)
      return normal === undefined ? [] : [{ table: FILES, key: normal, value: text }]
    })
    yield* Ref.update(world.ref, (w) => World.apply(w, writes))
    return { content: commandMessage(result, timeoutSeconds), error: result.timedOut || result.exitCode !== 0 }
  })

// ---------------------------------------------------------------------------------------------
// The benchmark

const firstMessage = (task: RepairTask): string =>
  [
    `Issue: ${task.title}`,
    "",
    task.issue,
    "",
    `The repository is ${task.language === "python" ? "Python (standard library only)" : "JavaScript (ES modules, run with node)"}. Its visible tests run with: ${testCommand(task)}`
  ].join("\n")

const runProtocol = (ctx: Capabilities.ProtocolContext, task: RepairTask): Effect.Effect<ToolLoop.Outcome, Capabilities.ProtocolFailure, WE.WorldEffects | WE.AttemptWorld | Wallet.Wallet> =>
  ToolLoop.runToolLoop(ctx, {
    firstMessage: firstMessage(task),
    tools: fileTools,
    maxTurns: ctx.env.limits.turns ?? MAX_TURNS,
    own: { run_command: (call) => runCommandCall(task, call) }
  })

// ---------------------------------------------------------------------------------------------
// Candidates

/** Gold replays the known fix: writes the fixed files, runs the visible tests, answers. */
export const gold = (task: RepairTask): Agent.Agent =>
  Benchmark.plays(
    "gold",
    [
      { text: null, toolCalls: [...task.solution].map(([path, content], i) => ({ id: `call-${i + 1}`, name: "write_file", arguments: { path, content } })) },
      { text: null, toolCalls: [{ id: "call-test", name: "run_command", arguments: { command: testCommand(task) } }] }
    ],
    `Fixed: ${task.title}.`
  )

export const provider = Benchmark.make({
  name: BENCHMARK,
  version: "1",
  description: "bug fixes in small JavaScript and Python repositories written for assay, graded by hidden tests",
  // The repositories are in this folder (repos/), not pinned upstream files.
  data: () => loadTasks(),
  tasks: (tasks) => tasks,
  id: (task) => task.id,
  stratum: (task) => task.language,
  limits: () => ({ turns: MAX_TURNS }),
  setup: {
    name: "coding-repair/workspace",
    run: (task) => {
      const world = worldOf(task.workspace)
      return {
        world,
        // The hidden tests and the fix are named by digest only: the candidate never sees them.
        evidence: {
          task: task.id,
          workspace: World.digest(world),
          hidden: ContentId.ofUnsafe(Object.fromEntries(task.hidden)),
          tools: ContentId.ofUnsafe(toolSpecs as unknown as Canonical.Json)
        },
        tools: fileTools,
        handlers: { "process/spawn": commandHandler }
      }
    }
  },
  protocol: {
    name: "coding-repair/tool-loop",
    output: ToolLoop.Outcome,
    inputs: () => ({ system, tools: toolSpecs }),
    run: (task, ctx) => runProtocol(ctx, task)
  },
  grade: {
    name: "coding-repair/hidden-tests",
    run: (task, ctx) =>
      Effect.gen(function*() {
        const final = filesOf(ctx.final)
        const edited = editedTests(task, final)
        const run = yield* runHidden(task, final).pipe(
          Effect.mapError((detail) => new Capabilities.CapabilityError({ capability: "coding-repair/hidden-tests", reason: "evaluator", detail }))
        )
        const passed = (names: ReadonlyArray<string>) => names.every((n) => run.tests[n] === "passed")
        const checks = {
          "tests-untouched": edited.length === 0,
          "fail-to-pass": passed(task.failToPass),
          "pass-to-pass": passed(task.passToPass)
        }
        const failing = Object.entries(run.tests).filter(([, o]) => o !== "passed").map(([n]) => n)
        return {
          reward: Object.values(checks).every(Boolean) ? 1 : 0,
          checks,
          details: { tests: run.tests, failing, editedTests: edited, timedOut: run.timedOut, log: run.log }
        }
      })
  },
  gold,
  untrusted: true
})
