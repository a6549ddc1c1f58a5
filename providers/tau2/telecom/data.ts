/**
 * The pinned upstream telecom files, read from `$ASSAY_DATA_DIR/tau2/telecom/` and checked
 * against the sha256 recorded here (from ../shared/data/tau2/SOURCE.md), then decoded: db.toml
 * (the agent DB) and user_db.toml (the phone) become one World.
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import { type Canonical, type PinnedData, type Tool, World } from "../../../src/index.ts"
import { dataRoot, type FileReader, filesAt, type PinnedFile, upstreamUrl } from "../common/pinned.ts"
import { OpenAiTools, toolSpecsOf, ToolTypes } from "../common/toolFiles.ts"
import {
  agentTables,
  decodeBill,
  decodeCustomer,
  decodeDevice,
  decodeLine,
  decodePhone,
  decodePlan,
  defaultSurroundings,
  envKey,
  envTable,
  pristineVpn,
  userTable,
  type EnvState
} from "./model.ts"
import { parsePyJson, type PyJson } from "./pyjsonParse.ts"
import { parseToml } from "./toml.ts"
import { deepFreeze } from "./tools.ts"

/** tasks.json comes from the 2025-06-10 release: HEAD's blob is missing from every mirror (SOURCE.md). */
export const tasksRevision = "37199f36924c8896f5e048360691f8476cd89ba1"

const rawUrl = upstreamUrl

/** A pinned file; its `name` is a path under `$ASSAY_DATA_DIR/`. */
export type { PinnedFile }

export const pinnedFiles = {
  db: {
    name: "tau2/telecom/db.toml",
    url: rawUrl("data/tau2/domains/telecom/db.toml"),
    sha256: "562d647ef9d7df8df91eafd8ee76036e707c8f9e32aaedc4a7fde06975aea2c0"
  },
  userDb: {
    name: "tau2/telecom/user_db.toml",
    url: rawUrl("data/tau2/domains/telecom/user_db.toml"),
    sha256: "4886107ea0c16f8e16d74bef91cfb557de61822afe9361f5a9b241806aea2e4c"
  },
  tasks: {
    name: "tau2/telecom/tasks.json",
    url: rawUrl("data/tau2/domains/telecom/tasks.json", tasksRevision),
    sha256: "192a2c143b3b512c37c3775fdf6c5040c33717388620c38b140c731dc6153cd7"
  },
  splits: {
    name: "tau2/telecom/split_tasks.json",
    url: rawUrl("data/tau2/domains/telecom/split_tasks.json"),
    sha256: "605b488bb9a6acb3c7f4505240a855fdc8681d09aadb16a8f38b2efcfc5c3aec"
  },
  mainPolicy: {
    name: "tau2/telecom/main_policy.md",
    url: rawUrl("data/tau2/domains/telecom/main_policy.md"),
    sha256: "95943844a0cf11fdf0e2842b483b81d9f9338aa53235712ed131db075d086ed7"
  },
  techSupportManual: {
    name: "tau2/telecom/tech_support_manual.md",
    url: rawUrl("data/tau2/domains/telecom/tech_support_manual.md"),
    sha256: "015a3ee49ec8c199c5e1a059c922081937b92cf3a5ea74fedbc4357816f389ba"
  },
  // Generated from upstream code at the revision (see telecom/oracle/README.md).
  policy: { name: "tau2/telecom/policy-manual.md", url: null, sha256: "065b48503bf780153fc671455cdfddb85b4c6ffb11e2ea93bd940233d804c3e9" },
  tools: { name: "tau2/telecom/tools.json", url: null, sha256: "0d23b0ec380bcc12e6c7ca26410647119a05e44ece3ad4a18c42b9fcdb55a45e" },
  toolTypes: { name: "tau2/telecom/tools-types.json", url: null, sha256: "b5a35c95d03e9042a856772a31d4859b275545549f5382644a2edd84efb10058" },
  userTools: { name: "tau2/telecom/user-tools.json", url: null, sha256: "c9593109f06686675d1ecf71dfdca9bdc8367907455b4673af7402b0bbdd79e1" },
  userToolTypes: {
    name: "tau2/telecom/user-tools-types.json",
    url: null,
    sha256: "d16b3af684c197bfcda8b5d1480aa290d72ad199f92e76385ed873fc5e11f2c1"
  }
} as const satisfies Record<string, PinnedFile>

export { dataRoot }

/** Telecom's files (named under the data root) in a data folder, the data root unless given. */
export const filesIn = (dataDir?: string): FileReader => filesAt("tau2-telecom", dataDir)

/** One pinned file's text, its hash checked. */
export const readPinned = (file: PinnedFile, dataDir?: string): Effect.Effect<string, PinnedData.DataError> => filesIn(dataDir).text(file)

const recordDecoders = { plans: decodePlan, customers: decodeCustomer, lines: decodeLine, bills: decodeBill, devices: decodeDevice } as const

/**
 * db.toml and user_db.toml texts to the fresh environment's World (no task applied):
 * agent tables plans, customers, lines, bills, devices keyed by id in file order; table `user`
 * with `device` and `surroundings`; table `env` with the out-of-DB state, pristine.
 */
export const worldFromToml = (dbText: string, userDbText: string): Either.Either<World.World, string> => {
  const db = parseToml(dbText)
  if (Either.isLeft(db)) return Either.left(`db.toml line ${db.left.line}: ${db.left.detail}`)
  const user = parseToml(userDbText)
  if (Either.isLeft(user)) return Either.left(`user_db.toml line ${user.left.line}: ${user.left.detail}`)
  const tables: Record<string, Record<string, Canonical.Json>> = {}
  for (const k of Object.keys(db.right)) if (!agentTables.some(([t]) => t === k)) return Either.left(`db.toml: unexpected field ${k}`)
  for (const [table, keyField] of agentTables) {
    const rows: PyJson | undefined = db.right[table]
    const records: Record<string, Canonical.Json> = {}
    if (rows !== undefined && !Array.isArray(rows)) return Either.left(`db.toml: ${table} is not a list`)
    const list: ReadonlyArray<PyJson> = rows ?? []
    for (let i = 0; i < list.length; i++) {
      const decoded = recordDecoders[table](`${table}[${i}]`, list[i])
      if (Either.isLeft(decoded)) return Either.left(decoded.left)
      const key = decoded.right[keyField] as string
      // Upstream keeps lists and finds the first match; keyed tables need unique ids.
      if (key in records) return Either.left(`${table}[${i}]: duplicate ${keyField} ${key}`)
      records[key] = decoded.right
    }
    tables[table] = records
  }
  for (const k of Object.keys(user.right)) if (k !== "device" && k !== "surroundings") return Either.left(`user_db.toml: unexpected field ${k}`)
  if (user.right["surroundings"] !== undefined) return Either.left("user_db.toml: surroundings is not supported (upstream's file has none)")
  const device = decodePhone("device", user.right["device"])
  if (Either.isLeft(device)) return Either.left(device.left)
  tables[userTable] = { device: device.right, surroundings: defaultSurroundings() as unknown as Canonical.Json }
  const env: EnvState = { uuid_calls: 0, default_vpn: pristineVpn() }
  tables[envTable] = { [envKey]: env as unknown as Canonical.Json }
  // Frozen: the tools share records between worlds and copy before writing (tools.ts `Session`).
  for (const records of Object.values(tables)) for (const v of Object.values(records)) deepFreeze(v)
  return Either.right(World.make(tables))
}

export type { ToolTypes }

const Splits = Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })
export type Splits = typeof Splits.Type

export interface TelecomData {
  /** The fresh environment (db.toml + user_db.toml): every task's initial state starts here. */
  readonly initialWorld: World.World
  /** tasks.json parsed with floats marked (tasks.ts decodes it). */
  readonly tasksJson: PyJson
  /** split_tasks.json: base (the 114 tasks), train, test, small, full. */
  readonly splits: Splits
  /** The agent policy as `get_environment()` builds it (policy_type "manual"). */
  readonly policy: string
  /** tools.json in upstream order: the agent's 13 tools. */
  readonly toolSpecs: ReadonlyArray<Tool.ToolSpec>
  readonly toolTypes: ToolTypes
  /** user-tools.json in upstream order: the simulated user's 30 phone tools. */
  readonly userToolSpecs: ReadonlyArray<Tool.ToolSpec>
  readonly userToolTypes: ToolTypes
}

/** Every telecom file through `read`, hash-checked and decoded. */
export const loadTelecomFrom = (read: FileReader): Effect.Effect<TelecomData, PinnedData.DataError> =>
  Effect.gen(function* () {
    const invalid = read.invalid
    const decodeFile = <A, I>(file: PinnedFile, schema: Schema.Schema<A, I>, text: string): Effect.Effect<A, PinnedData.DataError> =>
      Effect.flatMap(
        Effect.try({ try: () => JSON.parse(text) as unknown, catch: (e) => invalid(file, String(e)) }),
        (json) => Effect.mapError(Schema.decodeUnknown(schema)(json), (e) => invalid(file, ParseResult.TreeFormatter.formatErrorSync(e)))
      )
    const f = pinnedFiles
    const [dbText, userDbText, tasksText, splitsText, policy, toolsText, typesText, userToolsText, userTypesText] = yield* Effect.all(
      [f.db, f.userDb, f.tasks, f.splits, f.policy, f.tools, f.toolTypes, f.userTools, f.userToolTypes].map((file) => read.text(file)),
      { concurrency: "unbounded" }
    )
    const initialWorld = yield* Either.mapLeft(worldFromToml(dbText!, userDbText!), (detail) => invalid(f.db, detail))
    const tasksJson = yield* Either.mapLeft(parsePyJson(tasksText!), (e) => invalid(f.tasks, `JSON syntax at offset ${e.offset}: expected ${e.expected}`))
    const splits = yield* decodeFile(f.splits, Splits, splitsText!)
    const toolSpecs = toolSpecsOf(yield* decodeFile(f.tools, OpenAiTools, toolsText!))
    const toolTypes = yield* decodeFile(f.toolTypes, ToolTypes, typesText!)
    const userToolSpecs = toolSpecsOf(yield* decodeFile(f.userTools, OpenAiTools, userToolsText!))
    const userToolTypes = yield* decodeFile(f.userToolTypes, ToolTypes, userTypesText!)
    return { initialWorld, tasksJson, splits, policy: policy!, toolSpecs, toolTypes, userToolSpecs, userToolTypes }
  })

/** Every telecom file in a data folder (the data root unless given), hash-checked and decoded. */
export const loadTelecomData = (dataDir?: string): Effect.Effect<TelecomData, PinnedData.DataError> => loadTelecomFrom(filesIn(dataDir))
