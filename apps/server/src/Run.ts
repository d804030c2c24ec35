/**
 * The server process once its modules are loaded (`main.ts`): read the environment, start, and
 * stop on SIGTERM/SIGINT. With LATCHKEY_WORKERS above 1 this process is the primary of that many
 * workers (`Cluster.ts`), each of which runs the same server; the primary runs the admin listener,
 * when there is one. A stop requested at any stage, start-up included, exits 0.
 */
import cluster from "node:cluster"
import { PostgresStorage } from "@latchkey/storage-postgres"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Effect } from "effect"
import * as AdminServer from "./AdminServer.js"
import * as Cluster from "./Cluster.js"
import * as Env from "./Env.js"
import * as Log from "./Log.js"
import * as Server from "./Server.js"
import * as StartError from "./StartError.js"
import { version } from "./Version.js"

/**
 * Migrate the store once, before the workers open it (they would also be safe racing: SQLite
 * migrates in one BEGIN IMMEDIATE transaction, PostgreSQL under an advisory lock).
 */
const migrateOnce = async (env: Env.ServerEnv): Promise<void> => {
  await Effect.runPromise(
    env.databaseUrl !== null
      ? PostgresStorage.migrate({
          connectionString: env.databaseUrl,
          auditRetentionDays: env.auditRetentionDays,
          preparedStatements: env.pgPreparedStatements
        })
      : SqliteStorage.migrate({ filename: env.dbPath })
  )
}

/** The environment read and checked; a refusal exits 1 with one line on stderr. */
const readEnv = (): Env.ServerEnv => {
  try {
    return Env.read()
  } catch (e) {
    if (e instanceof Env.EnvError) {
      process.stderr.write(`latchkey: ${e.message}\n`)
      process.exit(1)
    }
    throw e
  }
}

/** A failure to start the configuration can fix (a port in use, a missing database): one line on stderr, never a stack. */
const reportStartError =
  (env: Env.ServerEnv) =>
  (e: unknown): void => {
    const line = StartError.explain(env, e)
    if (line !== undefined) process.stderr.write(`latchkey: ${line}\n`)
  }

/** Log the warnings about the environment (`Env.warnings`), once per server. */
const warn = (log: Log.Log): void => {
  for (const warning of Env.warnings()) log.warn(warning)
}

/**
 * Run one server (alone, or as a cluster worker). SIGTERM and SIGINT are handled from the start:
 * during start-up the first exits 0 at once (nothing is served yet); once running it stops
 * gracefully and exits 0. The same signal again within a second is that one request; any other
 * later one exits 1 at once.
 */
const serve = async (env: Env.ServerEnv): Promise<void> => {
  const log = Log.make(env.logLevel, 1, cluster.isWorker ? { worker: cluster.worker?.id ?? 0 } : {})
  if (!cluster.isWorker) warn(log)
  let running: Server.Running | undefined
  let first: { readonly signal: NodeJS.Signals; readonly at: number } | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    const at = Date.now()
    if (first !== undefined) {
      // Ctrl-C under `pnpm start` (or npm, or any runner that relays signals) arrives twice: from
      // the terminal, which signals the whole foreground process group, and relayed by the runner
      // a moment later. The same signal again within a second is that one request.
      if (signal === first.signal && at - first.at < 1000) return
      log.warn({ signal }, "second signal: exiting at once")
      process.exit(1)
    }
    first = { signal, at }
    if (running === undefined) {
      // Nothing served yet, nothing half-written: the migrations run in transactions
      log.info({ signal }, "signal received during start-up: exiting")
      process.exit(0)
    }
    log.info({ signal }, "signal received")
    running.stop().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error({ reason: StartError.reason(e) }, "shutdown failed")
        process.exit(1)
      }
    )
  }
  process.on("SIGTERM", onSignal)
  process.on("SIGINT", onSignal)
  try {
    running = await Server.start(env, log, { adminListener: !cluster.isWorker })
  } catch (e) {
    reportStartError(env)(e)
    log.fatal({ reason: StartError.reason(e) }, "could not start")
    process.exit(1)
  }
  Cluster.answerMetrics(running.metrics.registry)
  Cluster.reportReady()
}

/** Start: the primary of a cluster with LATCHKEY_WORKERS above 1, else one server. */
export const run = (): void => {
  const env = readEnv()
  if (env.workers > 1 && cluster.isPrimary) {
    const log = Log.make(env.logLevel, 1, { sync: true })
    warn(log)
    void Cluster.runPrimary({
      workers: env.workers,
      log,
      version,
      migrate: () => migrateOnce(env),
      ...(env.admin === null ? {} : { serve: () => AdminServer.startForCluster(env, log) }),
      onStartError: reportStartError(env)
    })
    return
  }
  void serve(env)
}
