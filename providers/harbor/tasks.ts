/**
 * A folder of Harbor-format tasks, read as they are laid out upstream (harbor's task format, as in
 * terminal-bench-2): one folder per task, holding
 *
 *   task.toml            [agent] timeout_sec, [verifier] timeout_sec, [environment] build_timeout_sec,
 *                        cpus, memory ("2G") or memory_mb, docker_image (a prebuilt image; not used
 *                        here: the image is built from environment/), [metadata] (difficulty, category)
 *   instruction.md       what the agent is told
 *   environment/         the build context, with its Dockerfile
 *   solution/solve.sh    the oracle's script (the folder is copied to /solution and solve.sh run)
 *   tests/test.sh        the verifier (the folder is copied to /tests), which writes its reward to
 *                        /logs/verifier/reward.txt
 *
 * task.toml is read by a small reader of the TOML it uses (tables, and key = string, number,
 * boolean or one-line array), its fields then decoded with a Schema; a task missing a file, or
 * whose task.toml does not decode, is refused with one line naming it.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect, Either, Schema } from "effect"
import { Capabilities } from "../../src/index.ts"

type TomlValue = string | number | boolean | ReadonlyArray<TomlValue>

/** The value of a one-line TOML value, or undefined when it is of a kind this reader does not read. */
const tomlValue = (raw: string): TomlValue | undefined => {
  const v = raw.trim()
  if (v.startsWith("\"")) {
    const m = /^"((?:[^"\\]|\\.)*)"$/.exec(v)
    return m === null ? undefined : (JSON.parse(`"${m[1]}"`) as string)
  }
  if (v.startsWith("'")) return v.endsWith("'") && v.length >= 2 ? v.slice(1, -1) : undefined
  if (v === "true" || v === "false") return v === "true"
  if (v.startsWith("[") && v.endsWith("]")) {
    const items = v.slice(1, -1).split(",").map((s) => s.trim()).filter((s) => s !== "")
    const values = items.map(tomlValue)
    return values.every((x): x is TomlValue => x !== undefined) ? values : undefined
  }
  const n = Number(v.replaceAll("_", ""))
  return v !== "" && Number.isFinite(n) ? n : undefined
}

/** Strips a comment after a value (a `#` outside a string). */
const withoutComment = (line: string): string => {
  let quote: string | null = null
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (quote !== null) {
      if (c === "\\" && quote === "\"") i++
      else if (c === quote) quote = null
    } else if (c === "\"" || c === "'") quote = c
    else if (c === "#") return line.slice(0, i)
  }
  return line
}

/** task.toml as tables of values; a value this reader cannot read is left out (unless a field needs it). */
export const readToml = (text: string): Record<string, Record<string, TomlValue>> => {
  const tables: Record<string, Record<string, TomlValue>> = { "": {} }
  let current = tables[""]!
  for (const rawLine of text.split(/\r?\n/)) {
    const line = withoutComment(rawLine).trim()
    if (line === "") continue
    const table = /^\[([A-Za-z0-9_.-]+)\]$/.exec(line)
    if (table !== null) {
      current = tables[table[1]!] ??= {}
      continue
    }
    const kv = /^([A-Za-z0-9_-]+)\s*=\s*(.*)$/.exec(line)
    if (kv === null) continue
    const value = tomlValue(kv[2]!)
    if (value !== undefined) current[kv[1]!] = value
  }
  return tables
}

const Seconds = Schema.Number.pipe(Schema.positive())

/** The fields of task.toml assay uses; the rest is kept as it is upstream, unread. */
export const TaskToml = Schema.Struct({
  agent: Schema.optionalWith(Schema.Struct({ timeout_sec: Schema.optional(Seconds) }), { default: () => ({}) }),
  verifier: Schema.optionalWith(Schema.Struct({ timeout_sec: Schema.optional(Seconds) }), { default: () => ({}) }),
  environment: Schema.optionalWith(
    Schema.Struct({
      build_timeout_sec: Schema.optional(Seconds),
      docker_image: Schema.optional(Schema.String),
      cpus: Schema.optional(Schema.Number.pipe(Schema.positive())),
      memory: Schema.optional(Schema.String),
      memory_mb: Schema.optional(Schema.Number.pipe(Schema.positive())),
      allow_internet: Schema.optional(Schema.Boolean)
    }),
    { default: () => ({}) }
  ),
  metadata: Schema.optionalWith(
    Schema.Struct({ difficulty: Schema.optional(Schema.String), category: Schema.optional(Schema.String) }),
    { default: () => ({}) }
  )
})

/** "2G", "512M", "4096" (megabytes) as megabytes. */
export const megabytes = (memory: string): number | undefined => {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*$/i.exec(memory)
  if (m === null) return undefined
  const scale: Record<string, number> = { "": 1, K: 1 / 1024, M: 1, G: 1024, T: 1024 * 1024 }
  return Math.ceil(Number(m[1]) * scale[m[2]!.toUpperCase()]!)
}

export interface HarborTask {
  readonly id: string
  readonly dir: string
  readonly instruction: string
  readonly agentTimeoutSeconds: number
  readonly verifierTimeoutSeconds: number
  readonly buildTimeoutSeconds: number
  readonly cpus: number | null
  readonly memoryMb: number | null
  readonly network: boolean
  readonly difficulty: string | null
  /** The prebuilt image upstream names (not pulled here: the image is built from environment/). */
  readonly dockerImage: string | null
  /** tests/test.sh, read to decide whether the verifier needs the network. */
  readonly testScript: string
  /** Why the task cannot be run here (a pinned file of it is absent); setup says so and builds nothing. */
  readonly notRunnable?: string
}

/** Harbor's defaults where task.toml says nothing. */
const DEFAULTS = { agentTimeoutSeconds: 600, verifierTimeoutSeconds: 600, buildTimeoutSeconds: 600 }

const REQUIRED = ["task.toml", "instruction.md", "environment/Dockerfile", "solution/solve.sh", "tests/test.sh"]

const dataError = (detail: string) => new Capabilities.CapabilityError({ capability: "harbor", reason: "data", detail })

export const loadTask = (root: string, id: string): Either.Either<HarborTask, string> => {
  const dir = path.join(root, id)
  const missing = REQUIRED.filter((f) => !fs.existsSync(path.join(dir, f)))
  if (missing.length > 0) return Either.left(`task ${id} has no ${missing.join(", ")}`)
  const decoded = Schema.decodeUnknownEither(TaskToml)(readToml(fs.readFileSync(path.join(dir, "task.toml"), "utf8")))
  if (Either.isLeft(decoded)) return Either.left(`task ${id}: task.toml: ${decoded.left.message.split("\n").slice(0, 3).join(" ")}`)
  const toml = decoded.right
  const memory = toml.environment.memory_mb ?? (toml.environment.memory !== undefined ? megabytes(toml.environment.memory) : undefined)
  if (toml.environment.memory !== undefined && memory === undefined) return Either.left(`task ${id}: task.toml: memory "${toml.environment.memory}" is not a size`)
  return Either.right({
    id,
    dir,
    instruction: fs.readFileSync(path.join(dir, "instruction.md"), "utf8"),
    agentTimeoutSeconds: toml.agent.timeout_sec ?? DEFAULTS.agentTimeoutSeconds,
    verifierTimeoutSeconds: toml.verifier.timeout_sec ?? DEFAULTS.verifierTimeoutSeconds,
    buildTimeoutSeconds: toml.environment.build_timeout_sec ?? DEFAULTS.buildTimeoutSeconds,
    cpus: toml.environment.cpus ?? null,
    memoryMb: memory ?? null,
    network: toml.environment.allow_internet ?? true,
    difficulty: toml.metadata.difficulty ?? null,
    dockerImage: toml.environment.docker_image ?? null,
    testScript: fs.readFileSync(path.join(dir, "tests/test.sh"), "utf8")
  })
}

/**
 * The tasks of a folder: every sub-folder holding a task.toml. One that lacks a file or whose
 * task.toml does not decode fails the load with its reason (a dataset, not a guess).
 */
export const loadTasks = (root: string): Effect.Effect<ReadonlyArray<HarborTask>, Capabilities.CapabilityError> =>
  Effect.suspend(() => {
    if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) return Effect.fail(dataError(`${root} is not a folder of Harbor tasks`))
    const ids = fs.readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory() && fs.existsSync(path.join(root, e.name, "task.toml")))
      .map((e) => e.name)
      .sort()
    if (ids.length === 0) return Effect.fail(dataError(`${root} holds no task folder (a folder with a task.toml)`))
    const tasks: Array<HarborTask> = []
    for (const id of ids) {
      const task = loadTask(root, id)
      if (Either.isLeft(task)) return Effect.fail(dataError(task.left))
      tasks.push(task.right)
    }
    return Effect.succeed(tasks)
  })

/**
 * Why a task's tests/test.sh needs the network (it fetches uv, pytest or packages), or null. Such a
 * verifier cannot run offline; the provided-pytest mode runs its test file with the image's pytest.
 */
export const verifierNeedsNetwork = (script: string): string | null => {
  const signs: ReadonlyArray<readonly [RegExp, string]> = [
    [/\bcurl\b|\bwget\b/, "it downloads with curl or wget"],
    [/\buvx?\b/, "it runs pytest through uv"],
    [/\bpip3? install\b/, "it installs with pip"],
    [/\bapt(-get)? (update|install)\b/, "it installs Debian packages"]
  ]
  const found = signs.filter(([re]) => re.test(script)).map(([, why]) => why)
  return found.length === 0 ? null : found.join("; ")
}

/** A Python package a verifier's test.sh has installed (uvx `-w`, pip), and its Debian stand-in. */
export interface PythonDependency {
  /** As test.sh names it, with its pin (`numpy==2.3.3`). */
  readonly spec: string
  /** The module the tests import. */
  readonly module: string
  /** Debian's package of it. */
  readonly debian: string
}

export interface VerifierDependencies {
  /** Debian packages test.sh installs with apt. */
  readonly apt: ReadonlyArray<string>
  readonly python: ReadonlyArray<PythonDependency>
}

/** PyPI names whose module or Debian package is named otherwise. */
const pythonNames: Readonly<Record<string, { readonly module: string; readonly debian: string }>> = {
  biopython: { module: "Bio", debian: "python3-biopython" },
  "scikit-learn": { module: "sklearn", debian: "python3-sklearn" },
  "opencv-python": { module: "cv2", debian: "python3-opencv" },
  "opencv-python-headless": { module: "cv2", debian: "python3-opencv" },
  pillow: { module: "PIL", debian: "python3-pil" },
  pyyaml: { module: "yaml", debian: "python3-yaml" },
  beautifulsoup4: { module: "bs4", debian: "python3-bs4" },
  torch: { module: "torch", debian: "python3-torch" },
  "python-dateutil": { module: "dateutil", debian: "python3-dateutil" }
}

/** The test runner and its report plugin: the provided-pytest mode brings its own pytest and writes no report. */
const runnerPackages = new Set(["pytest", "pytest-json-ctrf"])

/**
 * What a task's tests/test.sh installs before its tests: the Debian packages of its apt lines, and
 * the Python packages uvx (`-w`/`--with`) or pip would fetch from PyPI. The provided-pytest mode
 * installs what of these is missing from Debian (its `python3-*` packages stand in for PyPI's, at
 * Debian's versions), where the container reaches Debian's mirror, and says so on the cell.
 */
export const verifierDependencies = (script: string): VerifierDependencies => {
  const text = script.replace(/\\\r?\n/g, " ")
  const apt = new Set<string>()
  const python = new Map<string, PythonDependency>()
  const addPython = (spec: string) => {
    const name = spec.split(/[=<>!~\[;]/)[0]!.trim().toLowerCase()
    // A URL or VCS spec (git+https://…) names no PyPI project, so Debian has no stand-in for it.
    if (!/^[a-z0-9][a-z0-9._-]*$/.test(name) || runnerPackages.has(name) || python.has(name)) return
    const known = pythonNames[name]
    python.set(name, { spec, module: known?.module ?? name.replace(/-/g, "_"), debian: known?.debian ?? `python3-${name.replace(/_/g, "-")}` })
  }
  for (const line of text.split("\n")) {
    const words = line.trim().split(/\s+/)
    const aptAt = words.findIndex((w, i) => /^apt(-get)?$/.test(w) && words[i + 1] === "install")
    if (aptAt >= 0) for (const w of words.slice(aptAt + 2)) if (/^[a-z0-9][a-z0-9+.-]*$/.test(w)) apt.add(w)
    const pipAt = words.findIndex((w, i) => /^pip3?$/.test(w) && words[i + 1] === "install")
    if (pipAt >= 0) for (const w of words.slice(pipAt + 2)) if (!w.startsWith("-") && /^[A-Za-z0-9]/.test(w)) addPython(w)
    if (words.some((w) => w === "uvx" || w === "uv")) {
      for (let i = 0; i < words.length - 1; i++) if (words[i] === "-w" || words[i] === "--with") addPython(words[i + 1]!)
    }
  }
  return { apt: [...apt].filter((p) => p !== "curl" && p !== "wget"), python: [...python.values()] }
}
