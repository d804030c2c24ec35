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
type MetricsJson = ReadonlyArray<MetricObjectWithValues<MetricValue<string>>>

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

/** The metrics of one worker, by its node:cluster id. */
export interface WorkerMetrics {
  readonly worker: number
  readonly metrics: MetricsJson
}

/**
 * In the primary: the metrics of every connected worker, each asked over its IPC channel; a worker
 * that has not answered within `timeoutMs` (starting, stopping, stuck) is left out of this answer.
 */
export const workerMetrics = (timeoutMs = 2_000): Promise<Array<WorkerMetrics>> => {
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
    const answers: Array<WorkerMetrics> = []
    const done = () => {
      clearTimeout(timer)
      pendingRequests.delete(id)
      resolve(answers)
    }
    const timer = setTimeout(done, timeoutMs)
    pendingRequests.set(id, (worker, metrics) => {
      if (!asked.delete(worker)) return
      answers.push({ worker, metrics })
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

/** The state of a running primary: its workers, their restarts, and how it stops. */
interface Primary {
  readonly workers: number
  readonly log: Log
  readonly policy: RestartPolicy
  /** When workers were restarted (or will be), ascending: the last `policy.max` of them. */
  readonly restarts: Array<number>
  /** Restarts delayed by the policy, not yet done. */
  readonly pending: Set<NodeJS.Timeout>
  /** The ids of the workers that reported ready and have not exited. */
  readonly ready: Set<number>
  /** Until every worker of the first start is ready. */
  starting: boolean
  /** Once a signal (or a failed start) asked every worker to stop. */
  stopping: boolean
  /** The signals passed on to the workers: a worker they ended stopped as asked. */
  readonly signals: Set<string>
  exitCode: number
  /** Stops what the primary serves itself; nothing until `serve` has started it. */
  stopServing: () => Promise<void>
  exiting: boolean
}

/** Exit with `code` (once): stop what the primary serves, flush the log, exit. */
const flushAndExit = (p: Primary, code: number): void => {
  if (p.exiting) return
  p.exiting = true
  p.stopServing()
    .catch((e: unknown) =>
      p.log.error(
        { reason: e instanceof Error ? e.message : String(e) },
        "stopping the admin listener failed"
      )
    )
    .finally(() => p.log.flush(() => process.exit(code)))
}

/** Fork one worker, and count it ready when it says so ("all ready" once, at the first start). */
const fork = (p: Primary): void => {
  const worker = cluster.fork()
  p.log.info({ worker: worker.id, pid: worker.process.pid }, "worker started")
  worker.on("message", (m: unknown) => {
    if (!isReady(m)) return
    p.ready.add(worker.id)
    if (p.starting && p.ready.size === p.workers) {
      p.starting = false
      p.log.info({ workers: p.workers }, `all ${p.workers} workers ready`)
    }
  })
}

/** The workers alive. A worker stays in cluster.workers until its IPC channel closes, which may follow its exit. */
const live = (): Array<Worker> =>
  Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead())

/** Send `signal` to every live worker. */
const forward = (signal: NodeJS.Signals): void => {
  for (const w of live()) {
    try {
      w.process.kill(signal)
    } catch {
      // already gone: its exit event follows
    }
  }
}

/** Stop every worker with `signal`, the primary to exit at least with `code`; no more restarts. */
const stopAll = (p: Primary, signal: NodeJS.Signals, code: number): void => {
  p.stopping = true
  p.signals.add(signal)
  p.exitCode = Math.max(p.exitCode, code)
  for (const t of p.pending) clearTimeout(t)
  p.pending.clear()
  if (live().length === 0) {
    p.log.info("stopped")
    flushAndExit(p, p.exitCode)
    return
  }
  forward(signal)
}

/** Exit with `code` when no worker is left, alive or waiting for its restart. */
const exitIfLast = (p: Primary, code: number): void => {
  if (live().length === 0 && p.pending.size === 0) {
    p.log.info("stopped")
    flushAndExit(p, code)
  }
}

/** Restart a worker that crashed: at once, or later when the policy's window is full. */
const restart = (p: Primary, worker: Worker, code: number, signal: string | null): void => {
  const now = Date.now()
  const delay = restartDelay(p.restarts, now, p.policy)
  p.restarts.push(now + delay)
  if (p.restarts.length > p.policy.max) p.restarts.splice(0, p.restarts.length - p.policy.max)
  if (delay === 0) {
    p.log.warn(exitFields(worker, code, signal), "worker died: restarting it")
    fork(p)
    return
  }
  p.log.warn(
    { ...exitFields(worker, code, signal), delayMs: delay, ...p.policy },
    "worker died: restart delayed (too many restarts)"
  )
  const timer = setTimeout(() => {
    p.pending.delete(timer)
    if (!p.stopping) fork(p)
  }, delay)
  p.pending.add(timer)
}

/** A worker exited: stopping, a failed start, asked to stop on its own, or a crash to restart. */
const onExit = (p: Primary, worker: Worker, code: number, signal: string | null): void => {
  const wasReady = p.ready.delete(worker.id)
  if (p.stopping) {
    // Ended by the very signal passed on (before its handler was set): stopped as asked
    if (code !== 0 && !(signal !== null && p.signals.has(signal))) p.exitCode = 1
    p.log.info(exitFields(worker, code, signal), "worker stopped")
    exitIfLast(p, p.exitCode)
    return
  }
  if (code === 0 && signal === null) {
    // Asked to stop by a signal of its own (e.g. from a service manager signalling the whole
    // group), at start-up too
    p.log.info(exitFields(worker, code, signal), "worker stopped")
    exitIfLast(p, 0)
    return
  }
  if (p.starting && !wasReady) {
    p.log.fatal(exitFields(worker, code, signal), "could not start: a worker exited before it was ready")
    stopAll(p, "SIGTERM", 1)
    return
  }
  restart(p, worker, code, signal)
}

/**
 * The handler of SIGTERM and SIGINT: the first stops the workers; the same signal again within a
 * second is the same request (as in a worker, see main.ts); any later one makes them exit at once.
 */
const signalHandler = (p: Primary): ((signal: NodeJS.Signals) => void) => {
  let first: { readonly signal: NodeJS.Signals; readonly at: number } | undefined
  return (signal) => {
    const at = Date.now()
    if (first !== undefined) {
      if (signal === first.signal && at - first.at < 1000) return
      p.log.warn({ signal }, "second signal: the workers exit at once")
      stopAll(p, signal, 1)
      return
    }
    first = { signal, at }
    p.log.info({ signal }, "signal received: stopping the workers")
    stopAll(p, signal, 0)
  }
}

/** What `runPrimary` runs. */
export interface PrimaryOptions {
  readonly workers: number
  readonly log: Log
  /** The server's version, for the `starting` line. */
  readonly version: string
  /** Migrate the database, before any worker starts. */
  readonly migrate: () => Promise<void>
  /** Start what the primary serves itself (the admin listener); resolves with the function that stops it. */
  readonly serve?: () => Promise<() => Promise<void>>
  /** Report a failure of `migrate` or `serve` before the `could not start` line. */
  readonly onStartError?: (e: unknown) => void
}

/**
 * Run as the primary of `workers` workers: `migrate` first (failing it exits 1 with "could not
 * start"), then fork. A worker that exits before it is ready at the first start exits the whole
 * server (1), like a single server that cannot start; one that exits with code 0 was asked to
 * stop (a signal of its own) and is not replaced; any other exit is a crash, restarted within
 * `restartPolicy`. The first SIGTERM or SIGINT is passed to every worker (the same signal again
 * within a second counts once, as in a worker); a later one is passed on too, so the workers exit
 * at once. The primary exits when the last worker has: 0 when every one stopped with code 0 or
 * ended by the signal passed on. Signals are handled from the start: one during the migration
 * (or before any worker) exits 0 without forking.
 *
 * `serve`, when given, starts what the primary serves itself (the admin listener) after the
 * migration and before the workers: failing it exits 1 like a failed migration (`onStartError`
 * reports the reason first); the function it resolves with is called before the primary exits.
 */
export const runPrimary = async (options: PrimaryOptions): Promise<void> => {
  const { workers, log } = options
  const p: Primary = {
    workers,
    log,
    policy: restartPolicy(workers),
    restarts: [],
    pending: new Set(),
    ready: new Set(),
    starting: true,
    stopping: false,
    signals: new Set(),
    exitCode: 0,
    stopServing: async () => {},
    exiting: false
  }
  const onSignal = signalHandler(p)
  process.on("SIGTERM", onSignal)
  process.on("SIGINT", onSignal)
  log.info({ workers, version: options.version }, `starting ${workers} workers`)
  try {
    await options.migrate()
    if (p.stopping) return
    if (options.serve !== undefined) p.stopServing = await options.serve()
  } catch (e) {
    if (p.stopping) return
    options.onStartError?.(e)
    log.fatal({ reason: e instanceof Error ? e.message : String(e) }, "could not start")
    flushAndExit(p, 1)
    return
  }
  // A signal while the admin listener started: it stops with the rest
  if (p.stopping) {
    flushAndExit(p, p.exitCode)
    return
  }
  cluster.on("exit", (worker, code, signal) => onExit(p, worker, code, signal))
  for (let i = 0; i < workers; i++) fork(p)
}
