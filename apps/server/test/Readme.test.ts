import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { repoRoot, serverDir } from "./helpers.js"

describe("README examples", () => {
  it("the @latchkey/express README example is test/examples/express-readme.ts (which typechecks)", () => {
    const readme = readFileSync(join(repoRoot, "packages", "express", "README.md"), "utf8")
    const example = readFileSync(join(serverDir, "test", "examples", "express-readme.ts"), "utf8")
    const block = /## Example\n\n```ts\n([\s\S]*?)```\n/.exec(readme)?.[1]
    assert.strictEqual(block, example)
  })
})
