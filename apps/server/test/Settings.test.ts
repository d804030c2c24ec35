import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Env from "../src/Env.js"
import type { Setting } from "../src/settings/Parsers.js"
import { settings } from "../src/settings/Settings.js"
import { serverDir } from "./helpers.js"

/** The lines around the settings table in the README. */
const tableStart =
  "<!-- The settings table: rendered from src/settings/Settings.ts by test/Settings.test.ts -->"
const tableEnd = "<!-- End of the settings table -->"

/** The description of `setting` with its bounds in place of `{bounds}`, or after it in parentheses. */
const describeSetting = ({ bounds, description }: Setting<unknown>): string =>
  bounds === undefined
    ? description
    : description.includes("{bounds}")
      ? description.replace("{bounds}", bounds)
      : `${description} (${bounds})`

/** The settings as a Markdown table: variable, default, description. */
const table = (): string =>
  [
    "| Variable | Default | |",
    "| --- | --- | --- |",
    ...Object.entries(settings).map(
      ([name, setting]) =>
        `| \`${name}\` | ${setting.defaultText} | ${describeSetting(setting).replaceAll("|", "\\|")} |`
    )
  ].join("\n")

describe("the settings table (src/settings/Settings.ts)", () => {
  it("is the table of the README (`npx vitest run test/Settings.test.ts -u` rewrites it)", async () => {
    const path = join(serverDir, "README.md")
    const readme = readFileSync(path, "utf8")
    const start = readme.indexOf(tableStart)
    const end = readme.indexOf(tableEnd)
    assert.isTrue(start >= 0 && end > start, `the README has no lines ${tableStart} … ${tableEnd}`)
    const rendered = `${readme.slice(0, start + tableStart.length)}\n\n${table()}\n\n${readme.slice(end)}`
    await expect(rendered).toMatchFileSnapshot(path)
  })

  it("names every variable Env.read reads, and only those", () => {
    const read = new Set<string>()
    const env = new Proxy<NodeJS.ProcessEnv>(
      {
        LATCHKEY_ADMIN_PORT: "9090",
        LATCHKEY_ADMIN_TOKEN: "t".repeat(32),
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318"
      },
      {
        get: (target, name) => {
          if (typeof name === "string") read.add(name)
          return Reflect.get(target, name)
        }
      }
    )
    Env.read(env)
    read.delete("INIT_CWD")
    assert.sameMembers([...read], Object.keys(settings))
    assert.sameMembers(
      [...Env.knownVariables],
      Object.keys(settings).filter((name) => name.startsWith("LATCHKEY_"))
    )
  })

  it("accepts each default (all but the required admin token), and places each bounds at most once", () => {
    for (const [name, setting] of Object.entries(settings) as Array<[string, Setting<unknown>]>) {
      if (name !== "LATCHKEY_ADMIN_TOKEN") assert.doesNotThrow(() => setting.read(undefined, name), name)
      assert.isAtMost(setting.description.split("{bounds}").length, 2, name)
      if (setting.bounds === undefined) assert.notInclude(setting.description, "{bounds}", name)
    }
  })
})
