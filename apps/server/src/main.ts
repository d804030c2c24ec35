/**
 * Entry point of `pnpm start`: read the environment, start, and stop on
 * SIGTERM/SIGINT. With LATCHKEY_WORKERS above 1 this process is the primary of
 * that many workers (`Cluster.ts`), each of which runs the same server.
 */
import cluster from "node:cluster"
import { PostgresStorage } from "@latchkey/storage-postgres"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Effect } from "effect"
import * as Cluster from "./Cluster.js"
import * as Env from "./Env.js"
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
  if (env.workers > 1 && cluster.isPrimary) {
    await Cluster.runPrimary(env.workers, Log.make(env.logLevel, 1, { sync: true }), () => migrateOnce(env))
    return
  }
  const log = Log.make(env.logLevel, 1, cluster.isWorker ? { worker: cluster.worker?.id ?? 0 } : {})
  let running: Server.Running
  try {
    running = await Server.start(env, log)
  } catch (e) {
    log.fatal({ reason: e instanceof Error ? e.message : String(e) }, "could not start")
    process.exit(1)
  }
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
