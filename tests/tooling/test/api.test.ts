// API Extractor with api-extractor.base.json (each published package's `api:check`): the check
// passes while the declarations match etc/<package>.api.md and fails once they change.
import { appendFileSync, copyFileSync, existsSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { bin, root, run, tree } from "./fixture.js"

describe("the API report check", () => {
  it("fails when the public surface changes without its report", async () => {
    const dir = tree({
      "package.json": JSON.stringify({ name: "fixture-api", version: "0.0.0", types: "dist/index.d.ts" }),
      "api-extractor.json": JSON.stringify({
        extends: join(root, "api-extractor.base.json"),
        projectFolder: "."
      }),
      "dist/index.d.ts": "/** A number. */\nexport declare const one: number;\n",
      "etc/.keep": ""
    })
    copyFileSync(join(root, "packages/core/LICENSE"), join(dir, "LICENSE"))
    const update = await run(bin("api-extractor"), ["run", "--local"], dir)
    expect(update.code).toBe(0)
    expect(existsSync(join(dir, "etc/fixture-api.api.md"))).toBe(true)

    const same = await run(bin("api-extractor"), ["run"], dir)
    expect(same.code).toBe(0)

    appendFileSync(join(dir, "dist/index.d.ts"), "/** Another. */\nexport declare const two: string;\n")
    const changed = await run(bin("api-extractor"), ["run"], dir)
    expect(changed.code).not.toBe(0)
    expect(changed.output).toContain("You have changed the API signature")
  })
})
