/**
 * A server's own view of its request durations: the JSON `request` line the reference server
 * and durable-floor write to stdout per request (pino, one object a line, `time` when it finished
 * and `durationMs` since it arrived), read from the run's log file from a byte offset on, keeping
 * the requests that arrived and finished within the measured run.
 */
import { closeSync, openSync, readSync } from "node:fs"
import { StringDecoder } from "node:string_decoder"

/** What a server logged about the requests of one measured run. */
export interface ServerLatency {
  /** Request lines read. */
  readonly requests: number
  /** The 99th percentile of their `durationMs` (nearest rank). */
  readonly p99Ms: number
}

/** When the measured run started and ended (epoch ms, the clock of the `time` of log lines). */
export interface Window {
  readonly fromMs: number
  readonly toMs: number
}

const finishedAt = (time: unknown): number =>
  typeof time === "number" ? time : typeof time === "string" ? Date.parse(time) : Number.NaN

/**
 * The `durationMs` of a request line that arrived (`time` − `durationMs`) and finished (`time`)
 * within `window`; null for any other line, and for one that is not a JSON object.
 */
const duration = (line: string, window: Window): number | null => {
  // Most lines are request lines; the check spares parsing the few others
  if (!line.startsWith("{") || !line.includes('"durationMs"')) return null
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return null
  }
  if (typeof value !== "object" || value === null) return null
  const { msg, durationMs, time } = value as Record<string, unknown>
  if (msg !== "request" || typeof durationMs !== "number" || !Number.isFinite(durationMs)) return null
  const finished = finishedAt(time)
  // NaN (no time) fails both comparisons
  return finished - durationMs >= window.fromMs && finished <= window.toMs ? durationMs : null
}

/** The q-quantile of `values` by nearest rank (q in (0, 1]), or null when there are none. */
const quantile = (values: ReadonlyArray<number>, q: number): number | null => {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] as number
}

const chunkBytes = 16 * 1024 * 1024

/**
 * The request lines of `file` from byte `offset` to its end whose requests arrived and finished
 * within `window`: how many, and the p99 of their durations; null when there is none. A line cut
 * by the offset, lines that are not request lines and malformed lines are skipped. (The offset
 * spares reading the warm-up; the window leaves out its requests still in flight when the
 * measured run started, and those of the measured run the load generator no longer waited for.)
 */
export const fromLog = (file: string, offset: number, window: Window): ServerLatency | null => {
  const durations: Array<number> = []
  const fd = openSync(file, "r")
  try {
    const buffer = Buffer.alloc(chunkBytes)
    // A character cut by the end of a chunk is completed by the next one
    const decoder = new StringDecoder("utf8")
    let position = offset
    let rest = ""
    for (;;) {
      const n = readSync(fd, buffer, 0, chunkBytes, position)
      if (n === 0) break
      position += n
      const lines = (rest + decoder.write(buffer.subarray(0, n))).split("\n")
      rest = lines.pop() ?? ""
      for (const line of lines) {
        const d = duration(line, window)
        if (d !== null) durations.push(d)
      }
    }
    const last = duration(rest + decoder.end(), window)
    if (last !== null) durations.push(last)
  } finally {
    closeSync(fd)
  }
  const p99Ms = quantile(durations, 0.99)
  return p99Ms === null ? null : { requests: durations.length, p99Ms }
}
