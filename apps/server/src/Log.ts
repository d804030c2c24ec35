/**
 * Structured JSON logs with pino, for the server's own lines and for the core's
 * Effect log calls (bridged through an Effect Logger).
 */
import { Cause, HashMap, type Layer, Logger } from "effect"
import { pino } from "pino"

/** The pino logger type used throughout the server. */
export type Log = pino.Logger

/** Writes up to this size are atomic on a pipe (POSIX PIPE_BUF on Linux). */
const pipeBuf = 4096

let timeMs = Number.NaN
let timeText = ""

/**
 * pino's `isoTime` (the same `time` field), its text made once per millisecond: the lines of one
 * millisecond (under load, many requests' request and audit lines) share it instead of each
 * formatting a Date.
 */
export const isoTime = (): string => {
  const now = Date.now()
  if (now !== timeMs) {
    timeMs = now
    timeText = `,"time":"${new Date(now).toISOString()}"`
  }
  return timeText
}

/** The settings of every Latchkey logger: JSON lines, the level by name, an ISO time, `service` (and `worker`). */
export const loggerOptions = (level: string, worker?: number): pino.LoggerOptions => ({
  level,
  base: worker === undefined ? { service: "latchkey" } : { service: "latchkey", worker },
  timestamp: isoTime,
  formatters: { level: (label) => ({ level: label }) }
})

/**
 * A JSON logger writing to stdout (server) or stderr (CLI). The server's lines are
 * written asynchronously (buffered, flushed by pino on exit and by `stop`), so no
 * request waits for a write to the terminal or pipe; the CLI's synchronously.
 *
 * Each write holds whole lines and at most PIPE_BUF bytes: the lines of processes sharing one
 * stdout pipe (the workers of LATCHKEY_WORKERS, which pass `worker`, their node:cluster id, put on
 * every line) never interleave, and the buffer that waits for the write in progress stays small.
 * sonic-boom measures that buffer's bytes at every line, which copies it whole: with its default
 * 16 KiB bound, up to 16 KiB copied per line under load (docs/performance.md). `sync` writes each
 * line at once (the cluster's primary).
 */
export const make = (
  level: string,
  destination: 1 | 2 = 1,
  options: { readonly worker?: number; readonly sync?: boolean } = {}
): Log =>
  pino(
    loggerOptions(level, options.worker),
    pino.destination({
      fd: destination,
      sync: options.sync ?? destination === 2,
      maxWrite: pipeBuf
    })
  )

const levels: Record<string, "fatal" | "error" | "warn" | "info" | "debug" | "trace"> = {
  FATAL: "fatal",
  ERROR: "error",
  WARN: "warn",
  INFO: "info",
  DEBUG: "debug",
  TRACE: "trace"
}

/** Effect's logger replaced by one writing through `log`. */
export const effectLayer = (log: Log): Layer.Layer<never> =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message, annotations, cause }) => {
      const level = levels[logLevel.label] ?? "info"
      const fields: Record<string, unknown> = {}
      for (const [k, v] of HashMap.toEntries(annotations)) fields[k] = v
      if (!Cause.isEmpty(cause)) fields.cause = Cause.pretty(cause)
      const parts = Array.isArray(message) ? message : [message]
      const text = parts.map((m) => (typeof m === "string" ? m : JSON.stringify(m))).join(" ")
      log[level](fields, text)
    })
  )
