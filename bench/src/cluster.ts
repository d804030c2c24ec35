/**
 * The reference server with LATCHKEY_WORKERS (node:cluster): when it is ready, read from its
 * JSON log lines. The primary logs `all N workers ready` once every worker listens; each worker
 * logs its own `listening on …` line carrying a `worker` field; a `fatal` line means it could
 * not start.
 */

/** What the log says so far about a cluster of `workers` workers. */
export interface WorkersStatus {
  /** The primary logged `all <workers> workers ready`. */
  readonly ready: boolean
  /** Distinct workers that logged their `listening …` line. */
  readonly listening: number
  /** The first fatal line's message (and reason), when there is one. */
  readonly fatal: string | null
}

const parse = (line: string): Record<string, unknown> | null => {
  if (!line.startsWith("{")) return null
  try {
    const v: unknown = JSON.parse(line)
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null
  } catch {
    return null
  }
}

/**
 * Read a cluster's log (pino JSON, one object a line; other lines and a torn last line are
 * skipped). Only the primary's line for exactly `workers` workers counts as ready.
 */
export const workersStatus = (log: string, workers: number): WorkersStatus => {
  let ready = false
  let fatal: string | null = null
  const listening = new Set<unknown>()
  for (const line of log.split("\n")) {
    const l = parse(line.trim())
    if (l === null) continue
    const msg = typeof l.msg === "string" ? l.msg : ""
    if (msg === `all ${workers} workers ready` && l.worker === undefined) ready = true
    else if (msg.startsWith("listening") && l.worker !== undefined) listening.add(l.worker)
    else if (l.level === "fatal" && fatal === null)
      fatal = typeof l.reason === "string" ? `${msg}: ${l.reason}` : msg
  }
  return { ready, listening: listening.size, fatal }
}
