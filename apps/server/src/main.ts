/**
 * Entry point of `pnpm start`: read the environment, start, and stop on
 * SIGTERM/SIGINT. With LATCHKEY_WORKERS above 1 this process is the primary of
 * that many workers (`Cluster.ts`), each of which runs the same server; the primary
 * runs the admin listener, when there is one.
 */
import cluster from "node:cluster"
import { PostgresStorage } from "@latchkey/storage-postgres"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Effect } from "effect"
import * as AdminServer from "./AdminServer.js"
import * as Cluster from "./Cluster.js"
import * as Env from "./Env.js"
import { ListenError } from "./Listen.js"
import * as Log from "./Log.js"
import * as Server from "./Server.js"

/**
 * Migrate the store once, before the workers open it (they would also be safe racing: SQLite
 * migrates in one BEGIN IMMEDIATE transaction, PostgreSQL under an advisory lock).
 */
const migrateOnce = async (env: Env.ServerEnv): Promise<void> => {
  await Effect.runPromise(
    env.databaseUrl !== null
      ? PostgresStorage.migrate({
          connectionString: env.databaseUrl,
          auditRetentionDays: env.auditRetentionDays
        })
      : SqliteStorage.migrate({ filename: env.dbPath })
  )
}

const main = async (): Promise<void> => {
  let env: Env.ServerEnv
  try {
    env = Env.read()
  } catch (e) {
    if (e instanceof Env.EnvError) {
      process.stderr.write(`latchkey: ${e.message}\n`)
      process.exit(1)
    }
    throw e
  }
  // A port in use (or the like): one line on stderr naming the variable to change, never a stack
  const reportListenError = (e: unknown) => {
    if (e instanceof ListenError) process.stderr.write(`latchkey: ${e.message}\n`)
  }
  const warn = (log: Log.Log) => {
    for (const warning of Env.warnings()) log.warn(warning)
  }
  if (env.workers > 1 && cluster.isPrimary) {
    const log = Log.make(env.logLevel, 1, { sync: true })
    warn(log)
    await Cluster.runPrimary(
      env.workers,
      log,
      () => migrateOnce(env),
      env.admin === null ? undefined : () => AdminServer.startForCluster(env, log),
      reportListenError
    )
    return
  }
  const log = Log.make(env.logLevel, 1, cluster.isWorker ? { worker: cluster.worker?.id ?? 0 } : {})
  if (!cluster.isWorker) warn(log)
  let running: Server.Running
  try {
    running = await Server.start(env, log, { adminListener: !cluster.isWorker })
  } catch (e) {
    reportListenError(e)
    log.fatal({ reason: e instanceof Error ? e.message : String(e) }, "could not start")
    process.exit(1)
  }
  Cluster.answerMetrics(running.metrics.registry)
  Cluster.reportReady()
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
    log.info({ signal }, "signal received")
    running.stop().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error({ reason: e instanceof Error ? e.message : String(e) }, "shutdown failed")
        process.exit(1)
      }
    )
  }
  process.on("SIGTERM", onSignal)
  process.on("SIGINT", onSignal)
}

void main()
