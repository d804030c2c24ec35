// scripts/size-check.mjs (`pnpm lint:size`): a file over 500 lines and a function over 80 lines
// fail; at the limits they pass.
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { root, run, tree } from "./fixture.js"

/** A function of `lines` lines in all, declared as `name`. */
const fn = (name: string, lines: number): string =>
  [
    `export const ${name} = (): number => {`,
    "  let n = 0",
    ...Array(lines - 4).fill("  n += 1"),
    "  return n",
    "}",
    ""
  ].join("\n")

/** `lines` lines of short statements. */
const long = (lines: number): string =>
  `${Array.from({ length: lines }, (_, i) => `export const c${i} = ${i}`).join("\n")}\n`

const size = (dir: string) =>
  run(process.execPath, [join(root, "scripts/size-check.mjs"), "--no-allowlist", "src"], dir)

describe("the size check", () => {
  it("passes a 500-line file and an 80-line function", async () => {
    const result = await size(tree({ "src/long.ts": long(500), "src/fn.ts": fn("fits", 80) }))
    expect(result.output).toContain("0 new violations")
    expect(result.code).toBe(0)
  })

  it("fails a 501-line file", async () => {
    const result = await size(tree({ "src/long.ts": long(501) }))
    expect(result.code).toBe(1)
    expect(result.output).toContain("src/long.ts: 501 lines (at most 500)")
  })

  it("fails an 81-line function, named after its declaration", async () => {
    const result = await size(tree({ "src/fn.ts": fn("tooLong", 81) }))
    expect(result.code).toBe(1)
    expect(result.output).toContain("src/fn.ts:1: function tooLong spans 81 lines (at most 80)")
  })

  it("fails a long method and a long callback inside a short-named declaration", async () => {
    const method = [
      "export class Box {",
      `  ${fn("x", 81).replace("export const x = (): number =>", "open(): number")}`,
      "}",
      ""
    ].join("\n")
    const callback = `export const handler = [1].map(() => {\n${Array(85).fill("  void 0").join("\n")}\n})\n`
    const result = await size(tree({ "src/method.ts": method, "src/callback.ts": callback }))
    expect(result.code).toBe(1)
    expect(result.output).toContain("function open spans")
    expect(result.output).toContain("function handler spans 87 lines")
  })
})
