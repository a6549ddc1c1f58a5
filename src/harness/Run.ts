/**
 * One harness run on one corpus task: the fixture rebuilt in a fresh temp work folder (the caller's
 * repository is never touched), the CLI spawned there in its own process group with stdin closed
 * and a timeout that kills the group, its transcript parsed, the work-folder diff taken, the task's
 * graders run. The temp folders are removed afterwards, whatever happened.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Schema } from "effect"
import type { CorpusTask } from "./Corpus.ts"
import { diffTrees, type WorkDiff } from "./Diff.ts"
import { type GradeReport, grade, type Python } from "./Graders.ts"
import {
  type CapturedOutput,
  type Endpoint,
  type HarnessAdapter,
  type HarnessName,
  isTranscriptError,
  type Transcript
} from "./Harness.ts"
import { currentEnv, runProcess } from "./Process.ts"
import { jsonlFilesUnder } from "./SessionFiles.ts"

export interface RunSpec {
  readonly adapter: HarnessAdapter
  /** Absolute path of the CLI binary (from `detect`). */
  readonly binary: string
  readonly task: CorpusTask
  /** `undefined` = the harness's default model. */
  readonly model: string | undefined
  /** `undefined` = the CLI's own configuration and credentials. */
  readonly endpoint: Endpoint | undefined
  readonly timeoutMs: number
  /** `undefined` = python3 absent: Python graders are skipped. */
  readonly python: Python | undefined
  /** Environment the CLI starts from; default the current process's. */
  readonly baseEnv?: Readonly<Record<string, string>>
}

export type RunOutcome = "completed" | "failed" | "timeout"

export interface HarnessRun {
  readonly harness: HarnessName
  readonly task: string
  readonly requestedModel: string | undefined
  /** `completed` = exit 0; `failed` = non-zero exit or a signal; `timeout` = killed at the limit. */
  readonly outcome: RunOutcome
  readonly exitCode: number | null
  readonly signal: string | null
  readonly wallMs: number
  readonly stdout: string
  readonly stderr: string
  readonly transcript: Transcript | undefined
  /** Why no transcript could be read, when none could. */
  readonly transcriptError: string | undefined
  readonly diff: WorkDiff
  readonly grades: GradeReport
}

export class HarnessRunError extends Schema.TaggedError<HarnessRunError>()("HarnessRunError", {
  harness: Schema.String,
  task: Schema.String,
  reason: Schema.Literal("workspace", "spawn-failed"),
  detail: Schema.String
}) {
  override get message() {
    return `${this.harness} on ${this.task}: ${this.reason}: ${this.detail}`
  }
}

/** The CLI's environment: base minus `unset`, plus the adapter's variables, PWD = the work folder,
 * node's folder first on PATH. */
export const childEnv = (
  base: Readonly<Record<string, string>>,
  set: Readonly<Record<string, string>>,
  unset: ReadonlyArray<string>,
  workDir: string
): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(base)) if (!unset.includes(k)) env[k] = v
  Object.assign(env, set)
  // opencode takes its project folder from PWD, not from its working directory: an inherited PWD
  // would make its tools edit the caller's repository.
  env.PWD = workDir
  env.OLDPWD = workDir
  // npm shims start with `#!/usr/bin/env node`: they must find the node running assay.
  env.PATH = [path.dirname(process.execPath), env.PATH ?? ""].join(path.delimiter)
  return env
}

/** This run's session files among the user's: read only, never removed. */
const loginSessionFiles = (login: { readonly dirs: ReadonlyArray<string>; readonly suffix: string }): ReadonlyArray<string> =>
  login.dirs
    .flatMap((dir) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith(login.suffix)).map((n) => path.join(dir, n)) : []))
    .sort()
    .map((f) => fs.readFileSync(f, "utf8"))

interface Workspace {
  readonly root: string
  readonly workDir: string
  readonly stateDir: string
}

const workspace = (spec: RunSpec) =>
  Effect.acquireRelease(
    Effect.try({
      try: (): Workspace => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), `assay-${spec.adapter.name}-${spec.task.id}-`))
        const workDir = path.join(root, "work")
        const stateDir = path.join(root, "state")
        fs.cpSync(spec.task.fixtureDir, workDir, { recursive: true })
        fs.mkdirSync(stateDir, { recursive: true })
        return { root, workDir, stateDir }
      },
      catch: (e) =>
        new HarnessRunError({ harness: spec.adapter.name, task: spec.task.id, reason: "workspace", detail: String(e) })
    }),
    (ws) => Effect.sync(() => fs.rmSync(ws.root, { recursive: true, force: true }))
  )

export const runHarness = (spec: RunSpec): Effect.Effect<HarnessRun, HarnessRunError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const fail = (reason: HarnessRunError["reason"], detail: string) =>
        new HarnessRunError({ harness: spec.adapter.name, task: spec.task.id, reason, detail })
      const ws = yield* workspace(spec)
      const invocation = spec.adapter.invocation({
        prompt: spec.task.prompt,
        model: spec.model,
        endpoint: spec.endpoint,
        workDir: ws.workDir,
        stateDir: ws.stateDir
      })
      yield* Effect.try({
        try: () => {
          for (const f of invocation.files) {
            if (!path.resolve(f.path).startsWith(ws.stateDir + path.sep)) throw new Error(`${f.path} is outside the state folder`)
            fs.mkdirSync(path.dirname(f.path), { recursive: true })
            fs.writeFileSync(f.path, f.content, { mode: 0o600 })
          }
        },
        catch: (e) => fail("workspace", String(e))
      })
      // Pointed at an endpoint, a CLI needs nothing of the user's home: give it a private one so
      // its caches, logs and sessions stay out of ~ (without an endpoint it needs the user's login).
      const home = path.join(ws.stateDir, "home")
      const isolation =
        spec.endpoint === undefined
          ? {}
          : {
              HOME: home,
              XDG_CONFIG_HOME: path.join(home, ".config"),
              XDG_DATA_HOME: path.join(home, ".local", "share"),
              XDG_STATE_HOME: path.join(home, ".local", "state"),
              XDG_CACHE_HOME: path.join(home, ".cache")
            }
      const env = { ...isolation, ...invocation.env }
      for (const v of Object.values(env)) {
        // Folders the environment points at must exist before the CLI starts.
        if (v.startsWith(ws.stateDir + path.sep)) fs.mkdirSync(v, { recursive: true })
      }
      const proc = yield* runProcess({
        command: path.resolve(spec.binary),
        args: invocation.args,
        cwd: ws.workDir,
        env: childEnv(spec.baseEnv ?? currentEnv(), env, invocation.unsetEnv, ws.workDir),
        timeoutMs: spec.timeoutMs
      }).pipe(Effect.mapError((e) => fail("spawn-failed", e.detail)))
      const login = spec.endpoint === undefined ? spec.adapter.loginSessions?.(proc.stdout, spec.baseEnv ?? currentEnv(), new Date()) : undefined
      const captured: CapturedOutput = {
        stdout: proc.stdout,
        stderr: proc.stderr,
        sessionFiles: [...jsonlFilesUnder(spec.adapter.sessionDirs(ws.stateDir)), ...(login === undefined ? [] : loginSessionFiles(login))]
      }
      const parsed = spec.adapter.parse(captured)
      const transcript = isTranscriptError(parsed) ? undefined : parsed
      const diff = diffTrees(spec.task.fixtureDir, ws.workDir)
      const grades = yield* grade(spec.task.graders, {
        answer: transcript?.finalAnswer ?? "",
        workDir: ws.workDir,
        taskDir: spec.task.dir,
        python: spec.python
      })
      const outcome: RunOutcome = proc.timedOut ? "timeout" : proc.exitCode === 0 ? "completed" : "failed"
      return {
        harness: spec.adapter.name,
        task: spec.task.id,
        requestedModel: spec.model,
        outcome,
        exitCode: proc.exitCode,
        signal: proc.signal,
        wallMs: proc.wallMs,
        stdout: proc.stdout,
        stderr: proc.stderr,
        transcript,
        transcriptError: isTranscriptError(parsed) ? parsed.message : undefined,
        diff,
        grades
      }
    })
  )
