// scripts/dead-exports.mjs with the repository's knip.json (`pnpm lint:dead`): an export of a
// published package that no code of the workspace uses fails, even inside a public namespace;
// one that a test uses passes.
import { copyFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { root, run, tree } from "./fixture.js"

/** A workspace of one published package whose test uses `Code.used`, and `Code.ts` as given. */
const workspace = (code: string): string => {
  const dir = tree({
    "package.json": JSON.stringify({ name: "fixture", private: true, type: "module" }),
    "pnpm-workspace.yaml": 'packages:\n  - "packages/*"\n',
    "packages/core/package.json": JSON.stringify({
      name: "@latchkey/core",
      type: "module",
      exports: "./src/index.ts"
    }),
    "packages/core/src/index.ts": 'export * as Code from "./Code.js"\n',
    "packages/core/src/Code.ts": code,
    "packages/core/test/Code.test.ts": 'import { Code } from "../src/index.js"\nconsole.log(Code.used)\n'
  })
  copyFileSync(join(root, "knip.json"), join(dir, "knip.json"))
  return dir
}

const dead = (dir: string) =>
  run(process.execPath, [join(root, "scripts/dead-exports.mjs"), "--no-allowlist"], dir)

describe("the dead-export check", () => {
  it("passes when every export is used", async () => {
    const result = await dead(workspace("export const used = 1\n"))
    expect(result.output).toContain("0 new findings")
    expect(result.code).toBe(0)
  })

  it("fails on a member of a public namespace that nothing uses", async () => {
    const result = await dead(workspace("export const used = 1\nexport const unused = 2\n"))
    expect(result.code).toBe(1)
    expect(result.output).toContain("dead: packages/core/src/Code.ts: unused (exports)")
  })

  it("keeps an export used in its own file, or tagged @public", async () => {
    const code = [
      "export const used = 1",
      "export const limit = 3",
      "export const check = (n: number): boolean => n < limit",
      "/** @public */",
      "export const published = 4",
      ""
    ].join("\n")
    const result = await dead(workspace(code.replace("export const check", "const check")))
    expect(result.output).toContain("0 new findings")
    expect(result.code).toBe(0)
  })
})
