// scripts/api-report.mjs with api-extractor.base.json (each published package's `api:check` and
// `api:update`): the check passes while the sources match etc/<package>.api.md and fails once
// the public surface changes without it.
import { appendFileSync, copyFileSync, existsSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { root, run, tree } from "./fixture.js"

const report = (dir: string, ...args: ReadonlyArray<string>) =>
  run(process.execPath, [join(root, "scripts/api-report.mjs"), ...args], dir)

describe("the API report check", () => {
  it("fails when the public surface changes without its report", async () => {
    const dir = tree({
      "package.json": JSON.stringify({ name: "fixture-api", version: "0.0.0", types: "dist/index.d.ts" }),
      "tsconfig.src.json": JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          declaration: true,
          rootDir: "src",
          outDir: "dist",
          types: []
        },
        include: ["src"]
      }),
      "api-extractor.json": JSON.stringify({
        extends: join(root, "api-extractor.base.json"),
        projectFolder: "."
      }),
      "src/index.ts": "/** A number. */\nexport const one = 1 as number\n",
      "etc/.keep": ""
    })
    copyFileSync(join(root, "packages/core/LICENSE"), join(dir, "LICENSE"))
    const update = await report(dir, "--local")
    expect(update.code).toBe(0)
    expect(existsSync(join(dir, "etc/fixture-api.api.md"))).toBe(true)

    const same = await report(dir)
    expect(same.code).toBe(0)

    appendFileSync(join(dir, "src/index.ts"), '/** Another. */\nexport const two = "2" as string\n')
    const changed = await report(dir)
    expect(changed.code).not.toBe(0)
    expect(changed.output).toContain("You have changed the API signature")
  })
})
