import { createRequire } from "node:module"
import { pino } from "pino"
import { afterEach, assert, describe, it, vi } from "vitest"
import * as Log from "../src/Log.js"

// The module object the destination (sonic-boom) calls `write` on
const fs = createRequire(import.meta.url)("node:fs") as typeof import("node:fs")

describe("Log.isoTime", () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it("is pino's isoTime at each millisecond, the lines of one millisecond sharing one text", () => {
    vi.useFakeTimers()
    const times: Array<string> = []
    for (const at of [
      Date.UTC(2026, 0, 2, 3, 4, 5, 6),
      Date.UTC(2026, 0, 2, 3, 4, 5, 7),
      Date.UTC(2030, 11, 31)
    ]) {
      vi.setSystemTime(at)
      const first = Log.isoTime()
      assert.strictEqual(first, pino.stdTimeFunctions.isoTime())
      assert.strictEqual(Log.isoTime(), first)
      times.push(first)
    }
    assert.deepStrictEqual(times, [
      ',"time":"2026-01-02T03:04:05.006Z"',
      ',"time":"2026-01-02T03:04:05.007Z"',
      ',"time":"2030-12-31T00:00:00.000Z"'
    ])
  })

  it("gives every line of a logger made with loggerOptions the time it was written at", () => {
    vi.useFakeTimers()
    const lines: Array<{ time: string }> = []
    const log = pino(Log.loggerOptions("info"), { write: (s: string) => lines.push(JSON.parse(s)) })
    vi.setSystemTime(Date.UTC(2026, 5, 1, 12, 0, 0, 1))
    log.info("a")
    vi.setSystemTime(Date.UTC(2026, 5, 1, 12, 0, 0, 2))
    log.info("b")
    assert.deepStrictEqual(
      lines.map((l) => l.time),
      ["2026-06-01T12:00:00.001Z", "2026-06-01T12:00:00.002Z"]
    )
  })
})

describe("Log.make", () => {
  it("writes whole lines of at most PIPE_BUF (4096) bytes, however many lines wait for the write in progress", async () => {
    // Every write of the destination held until released: the lines logged meanwhile wait in its buffer
    const writes: Array<string> = []
    const held: Array<() => void> = []
    const write = vi.spyOn(fs, "write").mockImplementation(((...args: Array<unknown>) => {
      const text = String(args[1])
      const done = args[args.length - 1] as (error: Error | null, written: number) => void
      writes.push(text)
      held.push(() => done(null, Buffer.byteLength(text)))
    }) as unknown as typeof fs.write)
    try {
      const log = Log.make("info", 1)
      for (let i = 0; i < 200; i++) log.info({ request: i, padding: "x".repeat(200) }, "a request")
      for (let release = held.shift(); release !== undefined; release = held.shift()) {
        release()
        await new Promise((resolve) => setImmediate(resolve))
      }
      const lines = writes
        .join("")
        .split("\n")
        .filter((line) => line !== "")
      assert.deepStrictEqual(
        lines.map((line) => JSON.parse(line).request),
        Array.from({ length: 200 }, (_, i) => i)
      )
      for (const text of writes) {
        assert.isAtMost(Buffer.byteLength(text), 4096)
        assert.isTrue(text.endsWith("\n"))
      }
    } finally {
      write.mockRestore()
    }
  })
})
