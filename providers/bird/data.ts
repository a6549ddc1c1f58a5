/**
 * BIRD Mini-Dev (SQLite) files under `bird/` of the data folder: the 500 questions with evidence,
 * gold SQL and difficulty, the 11 schema files, and the databases: the real Mini-Dev databases
 * when `assay data pull bird --from DIR` brought them (`bird/databases/`), else the synthetic
 * fixtures (`bird/fixture/`), which measure the path and never a model's BIRD score.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Schema } from "effect"
import { type Benchmark, DataRoot, PinnedData, type Provider } from "../../src/index.ts"
import { goldLineOf } from "./grade.ts"

export const UPSTREAM_REPOSITORY = "github.com/bird-bench/mini_dev"
/** The grader's commit (main); the question, gold and schema files come from refs/pull/8/head. */
export const UPSTREAM_COMMIT = "4d970a9a97b172101840c661d74cc5a5e1c6ffa4"
const DATA_COMMIT = "525fa302278cb9be5cc9d562da1624ff7c1b2c01"
const SCHEMA_COMMIT = "9fb9a5b7f26156f388193505b3bfbfc7eae664cf"
const RAW = "https://raw.githubusercontent.com/bird-bench/mini_dev"

export const DB_IDS = [
  "california_schools",
  "card_games",
  "codebase_community",
  "debit_card_specializing",
  "european_football_2",
  "financial",
  "formula_1",
  "student_club",
  "superhero",
  "thrombosis_prediction",
  "toxicology"
] as const

const SCHEMA_SHA256: Readonly<Record<(typeof DB_IDS)[number], string>> = {
  california_schools: "4fcff2e6a15cbdb80e0c5bbedb5361b186e767e025c4b68d6baa946ddb861ca0",
  card_games: "6db69c8489f4d16cc6f60a9d3689ddc4b5f72eee223f986c220b6127234cdbeb",
  codebase_community: "e1279d52638f1434aeab4cc983b3f1636f0de6cb37a03c110069b68b35d81379",
  debit_card_specializing: "97afa2c65a0fb8b8b2df04d8ce458b0b601d06588ebabb5a60d30c9794278d4e",
  european_football_2: "d38e9d2b88b9700225054655999c310518357feb2dd5afd24ba7c48f0dd494b7",
  financial: "c62e829100b548e1badf7ab2b66366dd8de5071954b9070b168e0d1deefc206d",
  formula_1: "6b57f63070127708b11c440b778ef926141f7a8b7e2af53e20fcc7e0a65f1cd8",
  student_club: "e8447d6a6c9fea7b1f4be194aa564106bd3180b8a0dfd470442bd2841486e275",
  superhero: "0b9543cca45605b2997c497f02c550e8fcfedd9aaa80b31f24cc38d5a2fdd317",
  thrombosis_prediction: "b8be97d9f9c2d4868291d40151a56fbc92864e710985eeff6e166bd6b2caf8b0",
  toxicology: "fec5c15346a7d5e5dcea2480a3eb4c35237e6526c562a0d0a99a7c9dc5a4e5eb"
}

/** The fixture databases' sha256 (fixture/MANIFEST.json of the data kit). */
const FIXTURE_SHA256: Readonly<Record<(typeof DB_IDS)[number], string>> = {
  california_schools: "b45ffeefd610b5ddb7af626ff6cd500f04fea099d4909d761cf689730bdcd1a8",
  card_games: "e9adaf2c5472c68adca0b85c83e87be43a7fba92f393064ae6490be4b1060c07",
  codebase_community: "df070508613dafeab93527a4de268e9910d76958f1378aa77c771325fb56b996",
  debit_card_specializing: "1c3443b224e4be755045e4a865f8c83a7683b03ca7ea58e5aedf9a7298428bc5",
  european_football_2: "e3fe75851ccf319b89b09f9f5f58a7f3dcf17c916612b6ca6c57bcd9af0d59dc",
  financial: "766e35130b6adf4446601623e7bc38d299842f4166a7e7f3eabfd28b95398438",
  formula_1: "f12435cdca4670b7e27452b8cf13429689c2f07617d00a2d441615b827c1c9f0",
  student_club: "962b2e3c559c98db4deead9b29e09c42288f0f9475a9119645cbb51dc7f87a11",
  superhero: "cdd8b3e7999fe0e59f2921fb8346eec3b6d4a2b72683a35471179fb6d7f57eb9",
  thrombosis_prediction: "8be8026b8358ade407863a2e462bfe8e5f2c85fbbf27e506b112cf791c35d2d8",
  toxicology: "b454523719b86618e864d0d91fc1463281c812ed7f97a2b9a4ce18ba227d8b5f"
}

export const QUESTIONS = "bird/upstream/llm/data/mini_dev_sqlite.json"
export const GOLD = "bird/upstream/llm/data/mini_dev_sqlite_gold.sql"
export const schemaPath = (db: string) => `bird/upstream/bird_evaluation/data/schemas/${db}.sql`
export const fixturePath = (db: string) => `bird/fixture/${db}/${db}.sqlite`
/** Where a pull `--from DIR` puts the real Mini-Dev databases, with `SHA256SUMS` beside them. */
export const realDbPath = (db: string) => `bird/databases/${db}/${db}.sqlite`
export const REAL_SUMS = "bird/databases/SHA256SUMS"
/** Where the pull got the real databases: a local copy, or a download with its sha256 and whether it was pinned. */
export const REAL_ORIGIN = "bird/databases/ORIGIN.json"
export const VERDICTS = "bird/oracle/verdicts-dev.jsonl"
export const PROBES = "bird/oracle/probes.jsonl"

export const pinnedFiles: ReadonlyArray<Provider.PinnedFile> = [
  { path: QUESTIONS, url: `${RAW}/${DATA_COMMIT}/llm/data/mini_dev_sqlite.json`, sha256: "4ba5fa8de55856222f484d380d2ba872b380bf79d825de70478e2120cb0fc43b" },
  { path: GOLD, url: `${RAW}/${DATA_COMMIT}/llm/data/mini_dev_sqlite_gold.sql`, sha256: "6fb891aa8e1d948499de3295a24dd18d783d7ac04971908cbe2533436901af81" },
  ...DB_IDS.map((db) => ({
    path: schemaPath(db),
    url: `${RAW}/${SCHEMA_COMMIT}/bird_evaluation/data/schemas/${db}.sql`,
    sha256: SCHEMA_SHA256[db]
  })),
  // Made by the kit's generator (no upstream blob): only a pull --from DIR brings them. A run
  // with the real databases does not need them, so they are optional like the oracle.
  ...DB_IDS.map((db) => ({ path: fixturePath(db), url: "", sha256: FIXTURE_SHA256[db], oracle: true }))
]

export const Difficulty = Schema.Literal("simple", "moderate", "challenging")
export type Difficulty = typeof Difficulty.Type

const QuestionRecord = Schema.Struct({
  question_id: Schema.Int,
  db_id: Schema.String,
  question: Schema.String,
  evidence: Schema.String,
  SQL: Schema.String,
  difficulty: Difficulty
})

export interface Question {
  /** Position in the 500: the key (two question ids repeat). */
  readonly idx: number
  readonly questionId: number
  readonly dbId: string
  readonly question: string
  readonly evidence: string
  readonly difficulty: Difficulty
  /** The gold SQL as upstream's gold file gives it (what the grader runs). */
  readonly goldSql: string
}

export interface Databases {
  readonly kind: "real" | "fixture"
  readonly path: (db: string) => string
}

export interface BirdData {
  readonly root: string
  readonly questions: ReadonlyArray<Question>
  readonly schemas: ReadonlyMap<string, string>
  readonly databases: Databases
}

/** Which databases a run uses: the real ones when all 11 are present, else the fixtures. */
export const databasesIn = (root: string): Databases =>
  DB_IDS.every((db) => existsSync(join(root, realDbPath(db))))
    ? { kind: "real", path: (db) => join(root, realDbPath(db)) }
    : { kind: "fixture", path: (db) => join(root, fixturePath(db)) }

const Origin = Schema.Union(
  Schema.Struct({ source: Schema.Literal("local copy"), from: Schema.String }),
  Schema.Struct({ source: Schema.Literal("download"), url: Schema.String, sha256: Schema.String, pinned: Schema.Boolean })
)

/** What `ORIGIN.json` says of the real databases, for the report; empty when the pull left none (or it is unreadable). */
export const originNote = (root: string): string => {
  const file = join(root, REAL_ORIGIN)
  if (!existsSync(file)) return ""
  const decoded = Schema.decodeUnknownEither(Schema.parseJson(Origin))(readFileSync(file, "utf8"))
  if (decoded._tag === "Left") return `; ${REAL_ORIGIN} is unreadable`
  const o = decoded.right
  return o.source === "local copy"
    ? `; copied from ${o.from}`
    : `; downloaded from ${o.url}, archive sha256 ${o.sha256}, ${o.pinned ? "pinned by --sha256" : "UNPINNED (no --sha256 was given)"}`
}

const Questions = Schema.parseJson(Schema.Array(QuestionRecord))

/**
 * The questions, gold and schemas through the kit's reader (each file against its pinned sha256),
 * and which databases the data folder `root` holds (the one the reader reads).
 */
export const loadData = (read: Benchmark.Reader, root: string = DataRoot.dataRoot()): Effect.Effect<BirdData, PinnedData.DataError> =>
  Effect.gen(function*() {
    const records = yield* Effect.mapError(
      Schema.decodeUnknown(Questions)(yield* read.text(QUESTIONS)),
      (e) => read.invalid(QUESTIONS, e.message)
    )
    const goldLines = (yield* read.text(GOLD)).split("\n").filter((l, i, all) => !(i === all.length - 1 && l === ""))
    if (goldLines.length !== records.length) {
      return yield* read.invalid(GOLD, `it has ${goldLines.length} lines for ${records.length} questions`)
    }
    const questions: Array<Question> = []
    for (let idx = 0; idx < records.length; idx++) {
      const r = records[idx]!
      const gold = goldLineOf(goldLines[idx]!)
      if (gold === null || gold.dbId !== r.db_id) return yield* read.invalid(GOLD, `line ${idx + 1} is not SQL<TAB>${r.db_id}`)
      questions.push({ idx, questionId: r.question_id, dbId: r.db_id, question: r.question, evidence: r.evidence, difficulty: r.difficulty, goldSql: gold.sql })
    }
    const schemas = new Map<string, string>()
    for (const db of DB_IDS) schemas.set(db, yield* read.text(schemaPath(db)))
    const databases = databasesIn(root)
    if (databases.kind === "fixture" && !DB_IDS.every((db) => existsSync(join(root, fixturePath(db))))) {
      return yield* new PinnedData.DataError({
        benchmark: "bird",
        file: join(root, fixturePath(DB_IDS[0])),
        reason: "missing",
        detail: `neither the real Mini-Dev databases (${REAL_SUMS}) nor the fixtures (${fixturePath(DB_IDS[0])}) are in the data folder ${root}: ` +
          "run `assay data pull bird --from DIR` with DIR holding bird/fixture/ or the unzipped minidev databases"
      })
    }
    return { root, questions, schemas, databases }
  })
