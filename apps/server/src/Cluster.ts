/**
 * LATCHKEY_WORKERS above 1: this process becomes a node:cluster primary that forks that many
 * workers sharing the port (the primary hands each new connection to the next worker in turn);
 * each worker runs the single-process server of `main.ts`. The primary serves nothing and keeps
 * no state: it migrates the database once before forking, restarts a worker that dies
 * unexpectedly (at a bounded rate), and passes SIGTERM/SIGINT on to the workers, exiting once
 * they have all stopped. With LATCHKEY_ADMIN_PORT set, the primary also runs the admin listener
 * (`AdminServer.startForCluster`), and gathers the workers' metrics for it over the IPC channel
 * (`workerMetrics`, answered by `answerMetrics` in each worker).
 */
import cluster, { type Worker } from "node:cluster"
import type { MetricObjectWithValues, MetricValue, Registry } from "prom-client"
import type { Log } from "./Log.js"

/** The message a worker sends the primary once it serves requests (its "listening" line). */
const readyMessage = { latchkey: "ready" } as const

/** Whether an IPC message is `readyMessage`. */
const isReady = (m: unknown): boolean =>
  typeof m === "object" && m !== null && (m as { latchkey?: unknown }).latchkey === readyMessage.latchkey

/** Tell the primary this worker serves requests; nothing when this process is no cluster worker. */
export const reportReady = (): void => {
  if (cluster.isWorker && process.send !== undefined) process.send(readyMessage, undefined, {}, () => {})
}

/** The metrics of one registry, as `Registry.getMetricsAsJSON` gives them. */
export type MetricsJson = ReadonlyArray<MetricObjectWithValues<MetricValue<string>>>

/** The primary's request for a worker's metrics, and the worker's answer. */
const metricsTag = "metrics"

const isMetricsMessage = (m: unknown): m is { latchkey: "metrics"; id: number; metrics?: MetricsJson } =>
  typeof m === "object" &&
  m !== null &&
  (m as { latchkey?: unknown }).latchkey === metricsTag &&
  typeof (m as { id?: unknown }).id === "number"

/** In a cluster worker: answer the primary's requests for the metrics of `registry`; nothing elsewhere. */
export const answerMetrics = (registry: Registry): void => {
  if (!cluster.isWorker || process.send === undefined) return
  process.on("message", (m: unknown) => {
    if (!isMetricsMessage(m) || m.metrics !== undefined) return
    registry.getMetricsAsJSON().then(
      (metrics) => process.send?.({ latchkey: metricsTag, id: m.id, metrics }, undefined, {}, () => {}),
      () => process.send?.({ latchkey: metricsTag, id: m.id, metrics: [] }, undefined, {}, () => {})
    )
  })
}

let nextRequest = 0
const pendingRequests = new Map<number, (worker: number, metrics: MetricsJson) => void>()
let listening = false

/**
 * In the primary: the metrics of every connected worker, each asked over its IPC channel; a worker
 * that has not answered within `timeoutMs` (starting, stopping, stuck) is left out of this answer.
 */
export const workerMetrics = (timeoutMs = 2_000): Promise<Array<MetricsJson>> => {
  if (!listening) {
    listening = true
    cluster.on("message", (worker, m: unknown) => {
      if (isMetricsMessage(m) && m.metrics !== undefined) pendingRequests.get(m.id)?.(worker.id, m.metrics)
    })
  }
  const id = nextRequest++
  const asked = new Set<number>()
  for (const w of Object.values(cluster.workers ?? {})) {
    if (w === undefined || !w.isConnected()) continue
    try {
      w.send({ latchkey: metricsTag, id })
      asked.add(w.id)
    } catch {
      // its channel closed meanwhile: left out
    }
  }
  return new Promise((resolve) => {
    const answers: Array<MetricsJson> = []
    const done = () => {
      clearTimeout(timer)
      pendingRequests.delete(id)
      resolve(answers)
    }
    const timer = setTimeout(done, timeoutMs)
    pendingRequests.set(id, (worker, metrics) => {
      if (!asked.delete(worker)) return
      answers.push(metrics)
      if (asked.size === 0) done()
    })
    if (asked.size === 0) done()
  })
}

/** How often workers may be restarted: at most `max` restarts within any `windowMs`. */
export interface RestartPolicy {
  readonly max: number
  readonly windowMs: number
}

/** Twice the number of workers per minute: one crash of each is absorbed at once, a crash loop is slowed down. */
export const restartPolicy = (workers: number): RestartPolicy => ({ max: 2 * workers, windowMs: 60_000 })

/**
 * Milliseconds to wait before one more restart at `now`, given the times of the restarts so far
 * (ascending, scheduled ones included): 0 while fewer than `max` fall within the window, else
 * until the oldest of the last `max` leaves it.
 */
export const restartDelay = (restarts: ReadonlyArray<number>, now: number, policy: RestartPolicy): number => {
  if (restarts.length < policy.max) return 0
  const oldest = restarts[restarts.length - policy.max] as number
  return Math.max(0, oldest + policy.windowMs - now)
}

/** Why a worker exited, for the log. */
const exitFields = (worker: Worker, code: number, signal: string | null) => ({
  worker: worker.id,
  pid: worker.process.pid,
  code,
  signal
})

/**
 * Run as the primary of `workers` workers: `migrate` first (failing it exits 1 with "could not
 * start"), then fork. A worker that exits before it is ready at the first start exits the whole
 * server (1), like a single server that cannot start; one that exits with code 0 was asked to
 * stop (a signal of its own) and is not replaced; any other exit is a crash, restarted within
 * `restartPolicy`. The first SIGTERM or SIGINT is passed to every worker (the same signal again
 * within a second counts once, as in a worker); a later one is passed on too, so the workers exit
 * at once. The primary exits when the last worker has: 0 when every one stopped with code 0.
 *
 * `serve`, when given, starts what the primary serves itself (the admin listener) after the
 * migration and before the workers: failing it exits 1 like a failed migration (`onStartError`
 * reports the reason first); the function it resolves with is called before the primary exits.
 */
export const runPrimary = async (
  workers: number,
  log: Log,
  migrate: () => Promise<void>,
  serve?: () => Promise<() => Promise<void>>,
  onStartError: (e: unknown) => void = () => {}
): Promise<void> => {
  let stopServing: () => Promise<void> = async () => {}
  let exiting = false
  const flushAndExit = (code: number) => {
    if (exiting) return
    exiting = true
    stopServing()
      .catch((e: unknown) =>
        log.error(
          { reason: e instanceof Error ? e.message : String(e) },
          "stopping the admin listener failed"
        )
      )
      .finally(() => log.flush(() => process.exit(code)))
  }
  try {
    await migrate()
    if (serve !== undefined) stopServing = await serve()
  } catch (e) {
    onStartError(e)
    log.fatal({ reason: e instanceof Error ? e.message : String(e) }, "could not start")
    flushAndExit(1)
    return
  }
  const policy = restartPolicy(workers)
  const restarts: Array<number> = []
  const pending = new Set<NodeJS.Timeout>()
  const ready = new Set<number>()
  let starting = true
  let stopping = false
  let exitCode = 0

  const fork = () => {
    const worker = cluster.fork()
    log.info({ worker: worker.id, pid: worker.process.pid }, "worker started")
    worker.on("message", (m: unknown) => {
      if (!isReady(m)) return
      ready.add(worker.id)
      if (starting && ready.size === workers) {
        starting = false
        log.info({ workers }, `all ${workers} workers ready`)
      }
    })
  }

  // A worker stays in cluster.workers until its IPC channel closes, which may follow its exit
  const live = () =>
    Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead())

  const forward = (signal: NodeJS.Signals) => {
    for (const w of live()) {
      try {
        w.process.kill(signal)
      } catch {
        // already gone: its exit event follows
      }
    }
  }

  const stopAll = (signal: NodeJS.Signals, code: number) => {
    stopping = true
    exitCode = Math.max(exitCode, code)
    for (const t of pending) clearTimeout(t)
    pending.clear()
    if (live().length === 0) {
      log.info("stopped")
      flushAndExit(exitCode)
      return
    }
    forward(signal)
  }

  cluster.on("exit", (worker, code, signal) => {
    const wasReady = ready.delete(worker.id)
    if (stopping) {
      if (code !== 0) exitCode = 1
      log.info(exitFields(worker, code, signal), "worker stopped")
      if (live().length === 0 && pending.size === 0) {
        log.info("stopped")
        flushAndExit(exitCode)
      }
      return
    }
    if (starting && !wasReady) {
      log.fatal(exitFields(worker, code, signal), "could not start: a worker exited before it was ready")
      stopAll("SIGTERM", 1)
      return
    }
    if (code === 0 && signal === null) {
      // Asked to stop by a signal of its own (e.g. from a service manager signalling the whole group)
      log.info(exitFields(worker, code, signal), "worker stopped")
      if (live().length === 0 && pending.size === 0) {
        log.info("stopped")
        flushAndExit(0)
      }
      return
    }
    const now = Date.now()
    const delay = restartDelay(restarts, now, policy)
    restarts.push(now + delay)
    if (restarts.length > policy.max) restarts.splice(0, restarts.length - policy.max)
    if (delay === 0) {
      log.warn(exitFields(worker, code, signal), "worker died: restarting it")
      fork()
      return
    }
    log.warn(
      { ...exitFields(worker, code, signal), delayMs: delay, ...policy },
      "worker died: restart delayed (too many restarts)"
    )
    const timer = setTimeout(() => {
      pending.delete(timer)
      if (!stopping) fork()
    }, delay)
    pending.add(timer)
  })

  let first: { readonly signal: NodeJS.Signals; readonly at: number } | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    const at = Date.now()
    if (first !== undefined) {
      // The same signal again within a second is the same request (see main.ts)
      if (signal === first.signal && at - first.at < 1000) return
      log.warn({ signal }, "second signal: the workers exit at once")
      stopAll(signal, 1)
      return
    }
    first = { signal, at }
    log.info({ signal }, "signal received: stopping the workers")
    stopAll(signal, 0)
  }
  process.on("SIGTERM", onSignal)
  process.on("SIGINT", onSignal)

  log.info({ workers }, `starting ${workers} workers`)
  for (let i = 0; i < workers; i++) fork()
}
