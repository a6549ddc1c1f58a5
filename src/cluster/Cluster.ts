/**
 * Running an experiment's cells on several machines, on Effect's own distributed engine:
 * @effect/cluster (shards, runners and messages in the store's Postgres) and @effect/workflow
 * (each cell a durable workflow). A worker (`assay worker --store URL`) is a runner; `assay run
 * --store URL --cluster` is a client only: it submits the cells and waits for their results.
 *
 * Once per cell: a workflow's id is a digest of the cell, its inputs id and the Attempt it
 * replaces, so the same cell submitted twice (a second submitter, a retry) is one execution; a
 * worker that dies mid-cell has its shards taken over and the cell's activity run again elsewhere;
 * before running, the activity looks in the store, so a cell whose Attempt was already stored
 * (a worker that died after storing, before replying) is not run again.
 */
import { randomUUID } from "node:crypto"
import { hostname } from "node:os"
import * as ClusterWorkflowEngine from "@effect/cluster/ClusterWorkflowEngine"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SqlMessageStorage from "@effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "@effect/cluster/SqlRunnerStorage"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Activity from "@effect/workflow/Activity"
import * as Workflow from "@effect/workflow/Workflow"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import { Cache, Duration, Effect, Layer, Option, Schema } from "effect"
import * as SpendCap from "../budget/SpendCap.ts"
import { Model } from "../model/Model.ts"
import * as RateLimit from "./RateLimit.ts"
import { lanesOfRun } from "../cli/replay.ts"
import { type Cell, type CellDone, cellRunner, type CellRunner, makePlan, type Plan } from "../experiment/Runner.ts"
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
export const shardingConfig: Partial<ShardingConfig.ShardingConfig["Type"]> = {
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
    after: Schema.NullOr(Schema.String)
  },
  success: CellOutcome,
  error: ClusterError,
  idempotencyKey: (p) => `${p.environmentId}|${p.candidate}|${p.repetition}|${p.inputsId}|${p.after ?? "new"}`
})

type CellPayload = (typeof CellWorkflow)["payloadSchema"]["Type"]

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
  }))
})

/** A cluster layer, built once its tables are made. */
const afterSchema = <A, E, R>(layer: Layer.Layer<A, E, R>) => Layer.unwrapEffect(Effect.as(clusterSchema, layer))

/** A worker: a runner of the cluster, listening on `port`, running at most `concurrency` cells at once. */
export const workerLayer = (options: { readonly url: string; readonly home: string; readonly host?: string; readonly port: number; readonly concurrency: number }) => {
  const cells = Layer.unwrapScoped(Effect.gen(function*() {
    const store = yield* Store.Store
    const sql = yield* SqlClient.SqlClient
    const permits = yield* Effect.makeSemaphore(Math.max(1, options.concurrency))
    // This worker's holds in every run's wallet, kept alive while it runs: once it dies they are
    // freed for the other workers (SpendCap.makeShared).
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
          const before = yield* store.spendOf({ experimentId: plan.experimentId })
          // The run's wallet in Postgres, one for every worker: --max-usd holds across them.
          const maxUsd = settings.maxUsd ?? null
          const wallet = yield* SpendCap.makeShared(sql, `run:${runId}`, maxUsd, before.knownUsd, { holder })
          const made = cellRunner(plan, { maxUsd, timeoutSeconds: settings.timeoutSecs ?? null, handlers: {} }, runId, before.knownUsd, wallet)
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
          return { plan, runner } as { readonly plan: Plan; readonly runner: CellRunner }
        }).pipe(Effect.mapError((e) => new ClusterError({ reason: "cell", detail: `run ${runId}: ${e.message}` })))
    })
    const runPayload = (p: CellPayload) =>
      Effect.gen(function*() {
        const key = { environmentId: p.environmentId, candidate: p.candidate, repetition: p.repetition }
        const fail = (e: { readonly message: string }) => new ClusterError({ reason: "cell", detail: e.message })
        // Certified already (by a worker that stored it and died before replying): not run again.
        const latest = (yield* store.latestCells([key]).pipe(Effect.mapError(fail))).get(Store.cellKeyOf(key))
        if (latest !== undefined && latest.id !== p.after && latest.inputsId === p.inputsId && latest.ended !== "fault-live") {
          return { attemptId: latest.id, skipped: null }
        }
        const { plan, runner } = yield* runners.get(p.runId)
        const cell = plan.cells.find((c) => c.key.environmentId === p.environmentId && c.key.candidate === p.candidate && c.key.repetition === p.repetition)
        if (cell === undefined) return yield* new ClusterError({ reason: "unknown-cell", detail: `run ${p.runId} has no cell ${Store.cellKeyOf(key)}` })
        const done = yield* runner(cell).pipe(Effect.mapError(fail))
        return done === null ? { attemptId: null, skipped: "skipped (see the run's skipped cells)" } : { attemptId: done.id, skipped: null }
      }).pipe(permits.withPermits(1))
    return CellWorkflow.toLayer((payload) =>
      Activity.make({ name: "assay/evaluate", success: CellOutcome, error: ClusterError, execute: runPayload(payload) })
    )
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

/** The submitting side: a client of the cluster only (it runs no cell and holds no shard). */
export const clientLayer = (url: string) =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(afterSchema(NodeClusterSocket.layer({ clientOnly: true, storage: "sql", shardingConfig }))),
    Layer.provideMerge(clusterClient(url))
  )

/** Workers whose heartbeat is recent: none means a submitted cell would wait forever. */
export const liveWorkers = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const exists = yield* sql<{ n: number }>`SELECT CASE WHEN to_regclass('cluster_runners') IS NULL THEN 0 ELSE 1 END AS n`
  if ((exists[0]?.n ?? 0) === 0) return 0
  const rows = yield* sql<{ n: string | number }>`SELECT count(*) AS n FROM cluster_runners WHERE healthy AND last_heartbeat > now() - interval '20 seconds'`
  return Number(rows[0]?.n ?? 0)
})

/**
 * Runs each cell on the cluster: submitted as a workflow, answered once a worker stored its
 * Attempt, which is then read from the store. For RunSettings.dispatch.
 */
export const dispatcher = (plan: Plan) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const engine = yield* Effect.context<WorkflowEngine>()
    // The Attempt each cell has now: a cell run again (stale, faulted) is a new workflow.
    const after = new Map(Array.from(yield* store.latestCells(plan.cells.map((c) => c.key)), ([key, c]) => [key, c.id]))
    return (cell: Cell, run: { readonly runId: string }) =>
      Effect.gen(function*() {
        const outcome = yield* CellWorkflow.execute({
          runId: run.runId,
          environmentId: cell.key.environmentId,
          candidate: cell.key.candidate,
          repetition: cell.key.repetition,
          inputsId: cell.predictedInputsId,
          after: after.get(Store.cellKeyOf(cell.key)) ?? null
        }).pipe(Effect.provide(engine))
        if (outcome.attemptId === null) return null
        const stored = (yield* store.latestAttempts([cell.key])).get(Store.cellKeyOf(cell.key))
        if (stored === undefined) {
          return yield* new Store.StoreError({ reason: "query", detail: `the worker stored no Attempt of ${Store.cellKeyOf(cell.key)}` })
        }
        return { id: stored.id, attempt: stored.attempt }
      }).pipe(
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
  }).pipe(Effect.provide(clientLayer(url)))
