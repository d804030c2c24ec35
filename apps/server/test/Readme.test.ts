import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { repoRoot, serverDir } from "./helpers.js"

describe("README examples", () => {
  it.each(["express", "node"])(
    "the @latchkey/%s README example is test/examples/%s-readme.ts (which typechecks)",
    (pkg) => {
      const readme = readFileSync(join(repoRoot, "packages", pkg, "README.md"), "utf8")
      const example = readFileSync(join(serverDir, "test", "examples", `${pkg}-readme.ts`), "utf8")
      const block = /## Example\n\n```ts\n([\s\S]*?)```\n/.exec(readme)?.[1]
      assert.strictEqual(block, example)
    }
  )
})
