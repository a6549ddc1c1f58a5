/**
 * Running an experiment's cells on several machines, on Effect's own distributed engine:
 * @effect/cluster (shards, runners and messages in the store's Postgres) and @effect/workflow
 * (each cell a durable workflow). A worker (`assay worker --store URL`) is a runner; `assay run
 * --store URL --cluster` is a client only: it submits the cells and waits for their results.
 *
 * Once per cell: a workflow's id is a digest of the cell, its inputs id and the Attempt it
 * replaces, so the same cell submitted twice (a second submitter, a retry) is one execution; a
 * worker that dies mid-cell has its shards taken over and the cell's evaluation (a request to a
 * lane, below) run again elsewhere; before running, the lane looks in the store, so a cell whose
 * Attempt was already stored (a worker that died after storing, before replying) is not run again.
 */
import { randomUUID } from "node:crypto"
import { hostname } from "node:os"
import * as ClusterSchema from "@effect/cluster/ClusterSchema"
import * as ClusterWorkflowEngine from "@effect/cluster/ClusterWorkflowEngine"
import * as Entity from "@effect/cluster/Entity"
import { EntityId } from "@effect/cluster/EntityId"
import * as ShardId from "@effect/cluster/ShardId"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SqlMessageStorage from "@effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "@effect/cluster/SqlRunnerStorage"
import * as Sharding from "@effect/cluster/Sharding"
import * as Snowflake from "@effect/cluster/Snowflake"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as Rpc from "@effect/rpc/Rpc"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Workflow from "@effect/workflow/Workflow"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import { Cache, Context, Duration, Effect, ExecutionStrategy, Exit, Layer, Option, PrimaryKey, Schedule, Schema, Scope } from "effect"
import * as SpendCap from "../budget/SpendCap.ts"
import { Model } from "../model/Model.ts"
import * as RateLimit from "./RateLimit.ts"
import { lanesOfRun } from "../cli/replay.ts"
import { type Cell, type CellDone, cellRunner, type CellRunner, makePlan, type Plan, spentSoFar } from "../experiment/Runner.ts"
import * as Slots from "../experiment/Slots.ts"
import * as Store from "../experiment/Store.ts"

export class ClusterError extends Schema.TaggedError<ClusterError>()("ClusterError", {
  reason: Schema.Literal("no-worker", "cell", "unknown-cell"),
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

/**
 * Failover in a few seconds rather than the defaults' ~30. On Postgres a shard lock is an advisory
 * lock of the runner's session, freed as soon as a killed runner's connection closes; what finds
 * the dead runner is the others' health check (every 2 s) and their refresh of assignments (every
 * 1 s). The lock's expiration sets how long any lock query may take (a third of it) before the
 * runner gives up all its shards: at 6 s (2 s per query) runners on a loaded machine (load ~40 on
 * 2 cores) dropped and retook their shards over and over and cells stalled for minutes, so 15 s
 * (5 s per query, refreshed every 5 s).
 */
/** The library's default, named here because the submitter checks that every shard is held. */
const shardsPerGroup = 300

export const shardingConfig: Partial<ShardingConfig.ShardingConfig["Type"]> = {
  shardsPerGroup,
  shardLockExpiration: Duration.seconds(15),
  shardLockRefreshInterval: Duration.seconds(5),
  runnerHealthCheckInterval: Duration.seconds(2),
  refreshAssignmentsInterval: Duration.seconds(1),
  entityMessagePollInterval: Duration.millis(250),
  entityReplyPollInterval: Duration.millis(250),
  sendRetryInterval: Duration.millis(250)
}

/** What a worker answers for a cell: the stored Attempt's id, or why it was skipped. */
export const CellOutcome = Schema.Struct({ attemptId: Schema.NullOr(Schema.String), skipped: Schema.NullOr(Schema.String) })

export const CellWorkflow = Workflow.make({
  name: "assay/cell",
  payload: {
    runId: Schema.String,
    environmentId: Schema.String,
    candidate: Schema.String,
    repetition: Schema.Number,
    inputsId: Schema.String,
    /** The id of the Attempt this run replaces (a stale or faulted cell), null for a new cell. */
    after: Schema.NullOr(Schema.String),
    /**
     * The lane (a slot of a worker, below) the submitter chose for the evaluation; not part of the
     * key: a second submission of the cell joins the first, wherever that one is evaluated.
     */
    lane: Schema.NullOr(Schema.String)
  },
  success: CellOutcome,
  error: ClusterError,
  idempotencyKey: (p) => `${p.environmentId}|${p.candidate}|${p.repetition}|${p.inputsId}|${p.after ?? "new"}`
})

/**
 * Lanes: where a cell is evaluated, chosen by the submitter so that every worker's slots are kept
 * busy. A workflow lives on the worker holding its shard (a hash of its id), so with the
 * evaluation there one worker of three got 46 of 120 cells and the others sat idle at the end.
 * The workflow (keyed by the cell: once per cell, a second submitter joins it) now asks a lane
 * entity to evaluate; each worker names, as lanes, `--concurrency` entity ids that fall in the
 * shards it holds (in the `assay_lanes` table, refreshed every 250 ms), and the submitter sends
 * each cell to its least busy lane. A lane is an ordinary persisted entity: if its worker dies,
 * its shard and pending requests go to another worker, as the workflow's would. The request's
 * primary key is the workflow's execution id, so a workflow run again (its worker died) asks for
 * the same evaluation and gets the first one's answer rather than a second run.
 */
export class LaneRequest extends Schema.Class<LaneRequest>("assay/LaneRequest")({
  executionId: Schema.String,
  runId: Schema.String,
  environmentId: Schema.String,
  candidate: Schema.String,
  repetition: Schema.Number,
  inputsId: Schema.String,
  after: Schema.NullOr(Schema.String)
}) {
  [PrimaryKey.symbol]() {
    return this.executionId
  }
}

export const LaneEntity = Entity.make("assay/lane", [
  Rpc.make("evaluate", { payload: LaneRequest, success: CellOutcome, error: ClusterError })
    .annotate(ClusterSchema.Persisted, true)
    // As an Activity was: a submitter or workflow going away does not stop an evaluation midway.
    .annotate(ClusterSchema.Uninterruptible, true)
])

/** The lane a cell without a chosen one goes to: its own id, so on the worker holding its workflow. */
const ownLane = (executionId: string) => `cell/${executionId}`

const lanesTable = (sql: SqlClient.SqlClient) =>
  sql`CREATE TABLE IF NOT EXISTS assay_lanes (runner TEXT PRIMARY KEY, lanes TEXT NOT NULL, shards INTEGER NOT NULL, updated_at TIMESTAMPTZ NOT NULL DEFAULT now())`

/**
 * This runner's lanes: the ones it named before while it still holds their shards, then the first
 * ids (`lane/0`, `lane/1`, …) in shards it holds, up to `count`. Kept rather than recomputed so
 * that taking a shard does not move a lane (only giving one up does).
 */
const ownedLanes = (sharding: Sharding.Sharding["Type"], before: ReadonlyArray<string>, count: number): ReadonlyArray<string> => {
  const holds = (id: string) => sharding.hasShardId(sharding.getShardId(EntityId.make(id), "default"))
  const lanes = before.filter(holds).slice(0, count)
  // 300 shards a group by default: within a few thousand ids every held shard is met.
  for (let k = 0; k < 20_000 && lanes.length < count; k++) {
    const id = `lane/${k}`
    if (!lanes.includes(id) && holds(id)) lanes.push(id)
  }
  return lanes
}

/** How many of the group's shards this runner holds now. */
const heldShards = (sharding: Sharding.Sharding["Type"]) => {
  let n = 0
  for (let i = 1; i <= shardsPerGroup; i++) if (sharding.hasShardId(ShardId.make("default", i))) n++
  return n
}

/** The cluster's own tables in the store's database, beside the store's. */
const clusterClient = (url: string) => Store.postgresClient(url)

/**
 * The cluster's tables, made by one process at a time. @effect/cluster creates them as its
 * storage starts, unlocked: workers starting together on a fresh database raced on CREATE TABLE
 * (Postgres fails one of two concurrent `CREATE TABLE IF NOT EXISTS` on its catalog) and one
 * worker died at start. So each process first builds the storage once under a session advisory
 * lock (held on a connection of its own, freed when that connection closes if the process dies),
 * then the rate limit's tables; the real build after it finds every table made.
 */
const clusterSchema = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* Effect.scoped(Effect.gen(function*() {
    const conn = yield* sql.reserve
    yield* Effect.acquireRelease(
      conn.executeRaw("SELECT pg_advisory_lock(4242002)", []),
      () =>
        conn.executeRaw("SELECT pg_advisory_unlock(4242002)", []).pipe(
          Effect.catchAllCause((cause) => Effect.logWarning("the cluster schema's lock could not be freed; it is freed when its connection closes", cause))
        )
    )
    yield* Layer.build(Layer.mergeAll(SqlMessageStorage.layer, SqlRunnerStorage.layer).pipe(Layer.provide(ShardingConfig.layer(shardingConfig))))
    yield* RateLimit.makeTables(sql)
    yield* lanesTable(sql)
  }))
})

/** A cluster layer, built once its tables are made. */
const afterSchema = <A, E, R>(layer: Layer.Layer<A, E, R>) => Layer.unwrapEffect(Effect.as(clusterSchema, layer))

/** A worker: a runner of the cluster, listening on `port`, with `concurrency` slots (model calls in flight, as a local run's --parallel). */
export const workerLayer = (options: { readonly url: string; readonly home: string; readonly host?: string; readonly port: number; readonly concurrency: number }) => {
  const cells = Layer.unwrapScoped(Effect.gen(function*() {
    const store = yield* Store.Store
    const sql = yield* SqlClient.SqlClient
    // --concurrency N, as a local run's --parallel N: N model calls in flight, a model
    // candidate's cell holding its slot only while a call is out (its store check, grading and
    // Attempt written outside it), up to 2N cells open; under a run's --max-usd, and for any
    // other candidate, a cell holds its slot for its whole run. With the slot held for the whole
    // cell, three workers lost 0.2-0.5 s a slot at every wave: their CPU work between one call's
    // answer and the next call, all at once on a loaded machine.
    const slotCount = Math.max(1, options.concurrency)
    const slots = Slots.make(slotCount)
    const opened = Slots.make(2 * slotCount)
    const direct = { spend: store.putSpend, attempt: store.putAttempt, close: Effect.void }
    // This worker's holds in every run's wallet, kept alive while it runs: once it dies they count
    // as spent at their worst case, its calls' outcome unknown (SpendCap.makeShared).
    const holder = `${options.host ?? hostname()}:${options.port}:${process.pid}:${randomUUID()}`
    yield* Effect.forkScoped(SpendCap.heartbeat(sql, holder))
    // One plan and one cell runner per run, built from the run's settings as replay builds them.
    const runners = yield* Cache.make({
      capacity: 64,
      timeToLive: Duration.hours(12),
      lookup: (runId: string) =>
        Effect.gen(function*() {
          const record = yield* store.getRun(runId)
          const experiment = yield* store.getExperiment(record.experimentId)
          const { lanes } = yield* lanesOfRun(record.settings, experiment)
          const plan = yield* makePlan(lanes, experiment.repetitions)
          const settings = record.settings as { readonly maxUsd?: number | null; readonly timeoutSecs?: number | null; readonly rate?: ReadonlyArray<string> }
          // The ledger and what dead workers left unsettled (in earlier runs: a resume) start the cap.
          const before = yield* spentSoFar(plan.experimentId)
          // The run's wallet in Postgres, one for every worker: --max-usd holds across them.
          const maxUsd = settings.maxUsd ?? null
          const wallet = yield* SpendCap.makeShared(sql, SpendCap.walletIdOfRun(runId), maxUsd, before, { holder })
          // Under a cap, a whole cell to a slot: its check of the spend so far must see the
          // cells before it in its slot finished (as a local run under --max-usd).
          const wholeCell = maxUsd !== null
          const made = cellRunner(plan, { maxUsd, timeoutSeconds: settings.timeoutSecs ?? null, handlers: {} }, runId, before, wallet, wholeCell ? undefined : { slots, writer: direct })
          // --rate: each provider's calls limited across every worker, counted in Postgres.
          const rates = (settings.rate ?? []).map(RateLimit.parseRate).filter((r) => r !== null)
          const model = yield* Effect.serviceOption(Model)
          const runner = rates.length > 0 && Option.isSome(model)
            ? yield* Effect.provideService(
              made,
              Model,
              yield* RateLimit.limitModel(model.value, rates).pipe(
                Effect.provide(RateLimit.layerStoreSql(sql))
              )
            )
            : yield* made
          return { plan, runner, wholeCell } as { readonly plan: Plan; readonly runner: CellRunner; readonly wholeCell: boolean }
        }).pipe(Effect.mapError((e) => new ClusterError({ reason: "cell", detail: `run ${runId}: ${e.message}` })))
    })
    // A run submitted to the cluster is planned here as soon as its row appears, not on its first
    // cell: the plan and the cell runner (~0.1-1.9 s on a loaded 2-core machine, three workers
    // making theirs at once) then overlap the submitter's dispatch and the cell's two hops
    // instead of coming after them. A failed warm-up is not kept: the first cell tries again.
    const warmed = new Set<string>()
    const warm = Effect.gen(function*() {
      const since = new Date(Date.now() - 10 * 60_000).toISOString()
      const rows = yield* sql<{ id: string }>`SELECT id FROM runs WHERE finished_at IS NULL AND started_at > ${since} AND (settings::jsonb ->> 'cluster') = 'true'`
      for (const { id } of rows) {
        if (warmed.has(id)) continue
        warmed.add(id)
        // Its failure is the first cell's to report (the same lookup, tried again then).
        yield* Effect.forkScoped(runners.get(id).pipe(
          Effect.catchAllCause((cause) => Effect.zipRight(Effect.logDebug(`planning run ${id} ahead failed; its first cell plans it again`, cause), runners.invalidate(id)))
        ))
      }
    }).pipe(Effect.catchAllCause((cause) => Effect.logDebug("could not look for new runs to plan ahead", cause)))
    yield* Effect.forkScoped(Effect.repeat(warm, Schedule.spaced(Duration.millis(100))))
    const runPayload = (p: LaneRequest) =>
      Effect.gen(function*() {
        const key = { environmentId: p.environmentId, candidate: p.candidate, repetition: p.repetition }
        const fail = (e: { readonly message: string }) => new ClusterError({ reason: "cell", detail: e.message })
        // Certified already (by a worker that stored it and died before replying): not run again.
        const latest = (yield* store.latestCells([key]).pipe(Effect.mapError(fail))).get(Store.cellKeyOf(key))
        if (latest !== undefined && latest.id !== p.after && latest.inputsId === p.inputsId && latest.ended !== "fault-live") {
          return { attemptId: latest.id, skipped: null }
        }
        const { plan, runner, wholeCell } = yield* runners.get(p.runId)
        const cell = plan.cells.find((c) => c.key.environmentId === p.environmentId && c.key.candidate === p.candidate && c.key.repetition === p.repetition)
        if (cell === undefined) return yield* new ClusterError({ reason: "unknown-cell", detail: `run ${p.runId} has no cell ${Store.cellKeyOf(key)}` })
        const done = yield* (wholeCell ? slots.withPermit(runner(cell)) : runner(cell)).pipe(Effect.mapError(fail))
        return done === null ? { attemptId: null, skipped: "skipped (see the run's skipped cells)" } : { attemptId: done.id, skipped: null }
      }).pipe(opened.withPermit)
    const sharding = yield* Sharding.Sharding
    // This worker's lanes, as many as its slots, told the submitters every 250 ms: the shards it
    // holds change as workers join and leave. The row goes when the worker stops; a dead worker's
    // row is left stale and submitters ignore rows older than a few seconds.
    const runnerName = `${options.host ?? hostname()}:${options.port}`
    let named: ReadonlyArray<string> = []
    const publish = Effect.suspend(() => {
      named = ownedLanes(sharding, named, Math.max(1, options.concurrency))
      const shards = heldShards(sharding)
      return sql`INSERT INTO assay_lanes (runner, lanes, shards, updated_at) VALUES (${runnerName}, ${JSON.stringify(named)}, ${shards}, now())
        ON CONFLICT (runner) DO UPDATE SET lanes = EXCLUDED.lanes, shards = EXCLUDED.shards, updated_at = now()`
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("could not publish this worker's lanes", cause)))
    yield* Effect.forkScoped(Effect.repeat(publish, Schedule.spaced(Duration.millis(250))))
    yield* Effect.addFinalizer(() =>
      sql`DELETE FROM assay_lanes WHERE runner = ${runnerName}`.pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("could not withdraw this worker's lanes; submitters drop them once stale", cause))
      )
    )
    const lanes = LaneEntity.toLayer(LaneEntity.of({ evaluate: (request) => runPayload(request.payload) }), { concurrency: "unbounded" })
    const workflow = CellWorkflow.toLayer((payload, executionId) =>
      Effect.gen(function*() {
        const lane = (yield* LaneEntity.client)(payload.lane ?? ownLane(executionId))
        return yield* lane.evaluate(new LaneRequest({
          executionId,
          runId: payload.runId,
          environmentId: payload.environmentId,
          candidate: payload.candidate,
          repetition: payload.repetition,
          inputsId: payload.inputsId,
          after: payload.after
        })).pipe(
          Effect.retry({ while: (e) => e._tag !== "ClusterError", times: 5, schedule: Schedule.spaced(Duration.millis(500)) }),
          Effect.catchIf((e) => e._tag !== "ClusterError", (e) => Effect.fail(new ClusterError({ reason: "cell", detail: `lane ${payload.lane ?? "own"}: ${e._tag}` })))
        )
      })
    )
    return Layer.merge(lanes, workflow)
  }))
  const host = options.host ?? hostname()
  const runner = afterSchema(NodeClusterSocket.layer({
    storage: "sql",
    shardingConfig: {
      ...shardingConfig,
      runnerAddress: Option.some(RunnerAddress.make(host, options.port)),
      runnerListenAddress: Option.some(RunnerAddress.make("0.0.0.0", options.port))
    }
  }))
  return cells.pipe(
    Layer.provide(ClusterWorkflowEngine.layer),
    Layer.provide(runner),
    Layer.provide(Store.layerPostgres(options.url, options.home)),
    Layer.provide(clusterClient(options.url))
  )
}

/**
 * The machine ids a submitter's message ids must not be made with: the workers' (from the
 * runners table, as @effect/cluster numbers them) and the next 64 the table will hand to workers
 * joining later. Snowflakes keep 10 bits of it, so ids are compared modulo 1,024.
 */
const takenMachineIds = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const exists = yield* sql<{ n: number }>`SELECT CASE WHEN to_regclass('cluster_runners') IS NULL THEN 0 ELSE 1 END AS n`
  if ((exists[0]?.n ?? 0) === 0) return new Set(Array.from({ length: 64 }, (_, i) => i + 1))
  const rows = yield* sql<{ machine_id: number }>`SELECT machine_id FROM cluster_runners`
  // Every registration draws from the sequence, a worker registering again too, so the next
  // worker's id follows the sequence's last value rather than the largest id in the table.
  const drawn = yield* sql<{ last: number | string | null }>`SELECT pg_sequence_last_value(pg_get_serial_sequence('cluster_runners', 'machine_id')::regclass) AS last`
  const ids = rows.map((r) => Number(r.machine_id))
  const taken = new Set(ids.map((id) => id % 1024))
  const last = Math.max(Number(drawn[0]?.last ?? 0), ...ids)
  for (let next = 1; next <= 64; next++) taken.add((last + next) % 1024)
  return taken
})

/** Client builds tried for a machine id no worker has (more than 16 needs nearly all 1,024 taken). */
const SUBMITTER_BUILDS = 16

/**
 * The submitting side: a client of the cluster only (it runs no cell and holds no shard), whose
 * message ids cannot be a worker's. A client-only Sharding draws its Snowflake machine id at
 * random from 1,024, while workers take theirs from the runners table; with the same machine id,
 * ids made in the same millisecond are the same, and the second insert into `cluster_messages`
 * fails on its primary key (in CI a run died of it: `duplicate key value violates unique
 * constraint "cluster_messages_pkey"`). @effect/cluster sets no client's id, so a client whose id
 * is taken is built again. Two submitters at once can still share one (1 in 1,024).
 */
export const clientLayer = (url: string) =>
  Layer.scopedContext(Effect.gen(function*() {
    const outer = yield* Effect.scope
    const parts = ClusterWorkflowEngine.layer.pipe(
      Layer.provideMerge(afterSchema(NodeClusterSocket.layer({ clientOnly: true, storage: "sql", shardingConfig })))
    )
    for (let build = 1; ; build++) {
      const scope = yield* Scope.fork(outer, ExecutionStrategy.sequential)
      const context = yield* Layer.buildWithScope(parts, scope)
      const own = Snowflake.machineId(yield* Context.get(context, Sharding.Sharding).getSnowflake)
      const taken = yield* takenMachineIds
      if (!taken.has(own)) return context
      if (build === SUBMITTER_BUILDS) {
        yield* Effect.logWarning(`this submitter's machine id ${own} is also a worker's after ${build} tries: its messages may collide with that worker's`)
        return context
      }
      yield* Scope.close(scope, Exit.void)
    }
  })).pipe(Layer.provideMerge(clusterClient(url)))

/** Workers whose heartbeat is recent: none means a submitted cell would wait forever. */
export const liveWorkers = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const exists = yield* sql<{ n: number }>`SELECT CASE WHEN to_regclass('cluster_runners') IS NULL THEN 0 ELSE 1 END AS n`
  if ((exists[0]?.n ?? 0) === 0) return 0
  const rows = yield* sql<{ n: string | number }>`SELECT count(*) AS n FROM cluster_runners WHERE healthy AND last_heartbeat > now() - interval '20 seconds'`
  return Number(rows[0]?.n ?? 0)
})

interface Lane {
  readonly id: string
  readonly runner: string
}

/** The lanes of workers alive now (their row refreshed within the last 5 s), and the shards they hold. */
const readLanes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ runner: string; lanes: string; shards: number }>`SELECT runner, lanes, shards FROM assay_lanes WHERE updated_at > now() - interval '5 seconds' ORDER BY runner`
  const seen = new Set<string>()
  const lanes: Array<Lane> = []
  for (const row of rows) {
    const ids = Schema.decodeUnknownOption(Schema.parseJson(Schema.Array(Schema.String)))(row.lanes)
    // A lane two workers name (a shard passing between them) is one lane.
    for (const id of Option.getOrElse(ids, () => [])) if (!seen.has(id)) {
      seen.add(id)
      lanes.push({ id, runner: row.runner })
    }
  }
  return { rows: rows.map((r) => ({ lanes: r.lanes, shards: Number(r.shards) })), lanes }
})

const liveRunners = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ n: string | number }>`SELECT count(*) AS n FROM cluster_runners WHERE healthy AND last_heartbeat > now() - interval '20 seconds'`
  return Number(rows[0]?.n ?? 0)
})

/**
 * The lanes once the shards have settled: every live runner has named its lanes, each holds some
 * shards and together they hold all of them. Workers that have just started are still passing
 * shards to each other (three started at once: a few seconds), and a lane named in a shard its
 * worker is about to give up would crowd the worker taking it. Checked every 100 ms (workers
 * publish every 250 ms), at most 10 s; then whatever lanes there are.
 */
const settledLanes = Effect.gen(function*() {
  for (let i = 0; i < 100; i++) {
    const runners = yield* liveRunners
    const now = yield* readLanes
    const held = now.rows.reduce((sum, r) => sum + r.shards, 0)
    if (now.rows.length >= runners && now.lanes.length > 0 && now.rows.every((r) => r.shards > 0) && held === shardsPerGroup) return now.lanes
    yield* Effect.sleep(Duration.millis(100))
  }
  return (yield* readLanes).lanes
})

/**
 * Runs each cell on the cluster: submitted as a workflow, evaluated in the least busy lane,
 * answered once a worker stored its Attempt, which is then read from the store. For
 * RunSettings.dispatch.
 */
export const dispatcher = (plan: Plan) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const engine = yield* Effect.context<WorkflowEngine>()
    // The Attempt each cell has now: a cell run again (stale, faulted) is a new workflow.
    const after = new Map(Array.from(yield* store.latestCells(plan.cells.map((c) => c.key)), ([key, c]) => [key, c.id]))
    let lanes: ReadonlyArray<Lane> = yield* settledLanes.pipe(Effect.orElseSucceed(() => []))
    yield* Effect.forkScoped(Effect.repeat(
      readLanes.pipe(
        Effect.tap((now) => Effect.sync(() => { lanes = now.lanes })),
        Effect.catchAllCause((cause) => Effect.logWarning("could not read the workers' lanes; the last ones are kept", cause))
      ),
      Schedule.spaced(Duration.seconds(1))
    ))
    // What this submitter has in each lane and on each worker now.
    const inLane = new Map<string, number>()
    const onRunner = new Map<string, number>()
    const take = (): Lane | null => {
      let best: Lane | null = null
      let score = Number.POSITIVE_INFINITY
      for (const lane of lanes) {
        const s = (inLane.get(lane.id) ?? 0) * 1_000_000 + (onRunner.get(lane.runner) ?? 0)
        if (s < score) {
          score = s
          best = lane
        }
      }
      if (best !== null) {
        inLane.set(best.id, (inLane.get(best.id) ?? 0) + 1)
        onRunner.set(best.runner, (onRunner.get(best.runner) ?? 0) + 1)
      }
      return best
    }
    const give = (lane: Lane | null) => {
      if (lane === null) return
      inLane.set(lane.id, (inLane.get(lane.id) ?? 1) - 1)
      onRunner.set(lane.runner, (onRunner.get(lane.runner) ?? 1) - 1)
    }
    return (cell: Cell, run: { readonly runId: string }) =>
      Effect.acquireUseRelease(
        Effect.sync(take),
        (lane) =>
          Effect.gen(function*() {
            const outcome = yield* CellWorkflow.execute({
              runId: run.runId,
              environmentId: cell.key.environmentId,
              candidate: cell.key.candidate,
              repetition: cell.key.repetition,
              inputsId: cell.predictedInputsId,
              after: after.get(Store.cellKeyOf(cell.key)) ?? null,
              lane: lane?.id ?? null
            }).pipe(Effect.provide(engine))
            if (outcome.attemptId === null) return null
            const stored = (yield* store.latestAttempts([cell.key])).get(Store.cellKeyOf(cell.key))
            if (stored === undefined) {
              return yield* new Store.StoreError({ reason: "query", detail: `the worker stored no Attempt of ${Store.cellKeyOf(cell.key)}` })
            }
            return { id: stored.id, attempt: stored.attempt }
          }),
        (lane) => Effect.sync(() => give(lane))
      ).pipe(
        Effect.catchTag("ClusterError", (e) => Effect.fail(new Store.StoreError({ reason: "query", detail: `cluster: ${e.message}` })))
      )
  })

export type Dispatch = (cell: Cell, run: { readonly runId: string }) => Effect.Effect<CellDone | null, Store.StoreError>

/**
 * `assay run … --store URL --cluster`: the run's cells go to the cluster's workers; with none
 * alive it fails at once rather than wait for one.
 */
export const onCluster = <A, E, R>(url: string, plan: Plan, go: (dispatch: Dispatch) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const alive = yield* liveWorkers.pipe(Effect.mapError((e) => new ClusterError({ reason: "no-worker", detail: `cannot read the cluster's runners: ${e.message}` })))
    if (alive === 0) {
      return yield* new ClusterError({
        reason: "no-worker",
        detail: `no worker is alive on ${Store.redactUrl(url)} (nothing was run): start one with assay worker --store URL, then run again`
      })
    }
    return yield* go(yield* dispatcher(plan))
  }).pipe(Effect.scoped, Effect.provide(clientLayer(url)))
