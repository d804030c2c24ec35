/**
 * A server's own view of its request durations: the JSON `request` line the reference server
 * and durable-floor write to stdout per request (pino, one object a line, `durationMs` from the
 * request's arrival to its finish), read from the run's log file from a byte offset on.
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

/** The `durationMs` of a request line; null for any other line, and for one that is not a JSON object. */
const duration = (line: string): number | null => {
  // Most lines are request lines; the check spares parsing the few others
  if (!line.startsWith("{") || !line.includes('"durationMs"')) return null
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return null
  }
  if (typeof value !== "object" || value === null) return null
  const { msg, durationMs } = value as Record<string, unknown>
  return msg === "request" && typeof durationMs === "number" && Number.isFinite(durationMs)
    ? durationMs
    : null
}

/** The q-quantile of `values` by nearest rank (q in (0, 1]), or null when there are none. */
const quantile = (values: ReadonlyArray<number>, q: number): number | null => {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] as number
}

const chunkBytes = 16 * 1024 * 1024

/**
 * The request lines of `file` from byte `offset` to its end: how many, and the p99 of their
 * durations; null when there is none. A line cut by the offset, lines that are not request lines
 * and malformed lines are skipped.
 */
export const fromLog = (file: string, offset: number): ServerLatency | null => {
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
        const d = duration(line)
        if (d !== null) durations.push(d)
      }
    }
    const last = duration(rest + decoder.end())
    if (last !== null) durations.push(last)
  } finally {
    closeSync(fd)
  }
  const p99Ms = quantile(durations, 0.99)
  return p99Ms === null ? null : { requests: durations.length, p99Ms }
}
