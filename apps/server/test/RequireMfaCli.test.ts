/**
 * `app create --require-mfa` and `app update --require-mfa | --no-require-mfa`: stored, shown in
 * the JSON (`require_mfa: true`, only when on) and the text, both flags at once a usage error.
 */
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { cliInProcess, tempDir } from "./helpers.js"

const tmp = tempDir()
const db = join(tmp.dir, "require-mfa.sqlite")
afterAll(() => tmp.cleanup())

const cli = (args: ReadonlyArray<string>) => cliInProcess(db, args)

const json = async (args: ReadonlyArray<string>): Promise<Record<string, unknown>> => {
  const r = await cli(args)
  assert.strictEqual(r.code, 0, r.stderr)
  return JSON.parse(r.stdout) as Record<string, unknown>
}

const create = ["app", "create", "--name", "Strict", "--redirect-uri", "https://app.example/cb"]

describe("app create|update --require-mfa", () => {
  it("create --require-mfa stores it: the JSON and the text show it; without it nothing is shown", async () => {
    const created = await json([...create, "--require-mfa", "--json"])
    assert.strictEqual(created.require_mfa, true)
    const appKey = created.app_key as string
    assert.strictEqual((await json(["app", "show", appKey, "--json"])).require_mfa, true)
    assert.include(
      (await cli(["app", "show", appKey])).stdout,
      "  Second factor: required for every authorization"
    )
    const plain = await json([...create, "--json"])
    assert.notProperty(plain, "require_mfa")
    assert.notInclude((await cli(["app", "show", plain.app_key as string])).stdout, "Second factor")
  })

  it("update turns it on and off; both flags at once is a usage error that changes nothing", async () => {
    const appKey = (await json([...create, "--json"])).app_key as string
    assert.strictEqual((await json(["app", "update", appKey, "--require-mfa", "--json"])).require_mfa, true)
    const both = await cli(["app", "update", appKey, "--require-mfa", "--no-require-mfa"])
    assert.strictEqual(both.code, 2)
    assert.include(both.stderr, "give either --require-mfa or --no-require-mfa")
    assert.strictEqual((await json(["app", "show", appKey, "--json"])).require_mfa, true)
    assert.notProperty(await json(["app", "update", appKey, "--no-require-mfa", "--json"]), "require_mfa")
  })
})
