// scripts/wall-clock-check.mjs (`pnpm lint:clock`): an assertion on elapsed wall-clock time in a
// test file fails, named by file and line; counted work, clock reads that are not elapsed time and
// waits that only bound a test pass. (`pnpm lint:clock` runs it on the repository, uncached.)
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { root, run, tree } from "./fixture.js"

const clock = (dir: string, ...roots: ReadonlyArray<string>) =>
  run(process.execPath, [join(root, "scripts/wall-clock-check.mjs"), ...roots], dir)

/** A test file whose body is `lines`. */
const testFile = (...lines: ReadonlyArray<string>): string =>
  [
    'import { assert, expect, it } from "vitest"',
    'it("x", async () => {',
    ...lines.map((l) => `  ${l}`),
    "})",
    ""
  ].join("\n")

describe("the wall-clock check", () => {
  it("passes counted work, clock reads that are not elapsed time, and waits that only bound the test", async () => {
    const result = await clock(
      tree({
        "test/ok.test.ts": testFile(
          "const r = await callsDuring(s, () => work())",
          "assert.deepStrictEqual(r.calls, {})",
          "const before = Date.now()",
          "assert.isBelow(expiresMs, Date.now() + 3601_000)",
          "const iso = new Date(Date.now() - 3600_000).toISOString()",
          "assert.strictEqual(iso.length, 24)",
          "const started = Date.now()",
          "while (Date.now() - started < 5000) await tick()",
          'expect(text).toContain("elapsed")'
        )
      }),
      "test"
    )
    expect(result.output).toContain("1 test files, 0 wall-clock assertions")
    expect(result.code).toBe(0)
  })

  it("fails an assertion on a `.ms`, on a clock read minus a start, and on an `elapsed` name, each by file and line", async () => {
    const result = await clock(
      tree({
        "test/slow.test.ts": testFile(
          "const r = await timed(() => work())",
          "assert.isBelow(r.ms, 250)",
          "const start = Date.now()",
          "assert.isBelow(Date.now() - start, 5000)",
          "const elapsed = performance.now() - start",
          "expect(elapsed).toBeLessThan(500)"
        )
      }),
      "test"
    )
    expect(result.code).toBe(1)
    expect(result.output).toContain(
      "test/slow.test.ts:4: assert.isBelow(r.ms, 250) asserts elapsed wall-clock time"
    )
    expect(result.output).toContain("test/slow.test.ts:6: assert.isBelow(Date.now() - start, 5000) asserts")
    expect(result.output).toContain("test/slow.test.ts:8: expect(elapsed) asserts")
    expect(result.output).toContain("3 wall-clock assertions")
  })

  it("fails a name assigned elapsed time inside a callback, asserted later, and a comparison of medians", async () => {
    const result = await clock(
      tree({
        "test/later.test.mjs": testFile(
          "const closed = await new Promise((resolve) => {",
          "  socket.on('close', () => resolve({ closedAfterMs: Date.now() - start }))",
          "})",
          "assert.isBelow(closed.closedAfterMs, 3000)",
          "assert.isBelow(Math.abs(median(a) - median(b)), 2)"
        )
      }),
      "test"
    )
    expect(result.code).toBe(1)
    expect(result.output).toContain(
      "test/later.test.mjs:6: assert.isBelow(closed.closedAfterMs, 3000) asserts"
    )
    expect(result.output).toContain(
      "test/later.test.mjs:7: assert.isBelow(Math.abs(median(a) - median(b)), 2) asserts"
    )
  })
})
