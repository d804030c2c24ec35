/**
 * Reading a server's request durations from its log: only the request lines after the offset
 * whose requests arrived and finished within the measured run count, other and malformed lines
 * are skipped, and the p99 is by nearest rank.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import * as RequestLog from "../src/requestLog.js"

/** The measured run: 10 s from 2026-01-01T00:00:00Z. */
const run: RequestLog.Window = {
  fromMs: Date.parse("2026-01-01T00:00:00.000Z"),
  toMs: Date.parse("2026-01-01T00:00:10.000Z")
}

const request = (durationMs: unknown, fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    level: "info",
    time: "2026-01-01T00:00:05.000Z",
    service: "latchkey",
    reqId: "r",
    method: "POST",
    path: "/oauth2/oauth2/token",
    status: 200,
    durationMs,
    remoteAddress: "127.0.0.1",
    msg: "request",
    ...fields
  })

const dirs: Array<string> = []
const logFile = (text: string): string => {
  const dir = mkdtempSync(join(tmpdir(), "latchkey-bench-log-"))
  dirs.push(dir)
  const file = join(dir, "server.log")
  writeFileSync(file, text)
  return file
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe("RequestLog.fromLog", () => {
  it("reads only the request lines after the offset, skipping other and malformed lines", () => {
    // Warm-up: long requests that must not count
    const warmup = `${[request(900), request(800), JSON.stringify({ msg: "listening on 127.0.0.1:1" })].join("\n")}\n`
    const measured = [
      // 1 to 100 ms, shuffled, with every kind of line that is not a request's duration between them
      ...Array.from({ length: 100 }, (_, i) => request(((i * 37) % 100) + 1)),
      JSON.stringify({ level: "info", msg: "audit", durationMs: 5_000 }),
      request("7000"),
      request(null),
      request(6_000, { msg: "requests" }),
      "not json at all",
      '{"msg":"request","durationMs":9000',
      "[1,2,3]",
      "",
      request(5_000).slice(0, 60)
    ].join("\n")
    const file = logFile(warmup + measured)
    expect(RequestLog.fromLog(file, Buffer.byteLength(warmup), run)).toEqual({ requests: 100, p99Ms: 99 })
    // From the start, the two warm-up lines count too (and lead the p99)
    expect(RequestLog.fromLog(file, 0, run)).toEqual({ requests: 102, p99Ms: 800 })
  })

  it("keeps the requests that arrived and finished within the measured run", () => {
    const lines = [
      // A warm-up request still in flight when the run started: arrived 1 ms before it
      request(1_001, { time: "2026-01-01T00:00:01.000Z" }),
      // One the load generator no longer waited for: finished 1 ms after the run
      request(2, { time: "2026-01-01T00:00:10.001Z" }),
      // No time, or one that is no date
      request(3, { time: undefined }),
      request(4, { time: "yesterday" }),
      // Arrived exactly at the start, finished exactly at the end, and pino's epoch-ms time
      request(1_000, { time: "2026-01-01T00:00:01.000Z" }),
      request(5, { time: "2026-01-01T00:00:10.000Z" }),
      request(6, { time: run.fromMs + 7_000 })
    ]
    expect(RequestLog.fromLog(logFile(`${lines.join("\n")}\n`), 0, run)).toEqual({
      requests: 3,
      p99Ms: 1_000
    })
  })

  it("skips a line the offset cuts and counts a last line without its newline", () => {
    const first = request(500)
    const file = logFile(`${first}\n${request(3)}\n${request(4)}`)
    expect(RequestLog.fromLog(file, 10, run)).toEqual({ requests: 2, p99Ms: 4 })
  })

  it("is null when no request line follows the offset", () => {
    const text = `${request(1)}\n`
    const file = logFile(`${text}${JSON.stringify({ msg: "stopped" })}\n`)
    expect(RequestLog.fromLog(file, Buffer.byteLength(text), run)).toBeNull()
    expect(RequestLog.fromLog(file, statSync(file).size, run)).toBeNull()
  })
})
