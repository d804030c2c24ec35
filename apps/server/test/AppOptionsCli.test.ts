import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { cliInProcess, tempDir } from "./helpers.js"

const tmp = tempDir()
const db = join(tmp.dir, "options.sqlite")
afterAll(() => tmp.cleanup())

const cli = (args: ReadonlyArray<string>) => cliInProcess(db, args)

const json = async <A = Record<string, unknown>>(args: ReadonlyArray<string>): Promise<A> => {
  const r = await cli(args)
  assert.strictEqual(r.code, 0, r.stderr)
  return JSON.parse(r.stdout) as A
}

const create = ["app", "create", "--name", "Web", "--redirect-uri", "https://app.example/cb"]

describe("app create|update --web-origin, --token-endpoint-auth-method, --scope-delimiter", () => {
  it("create takes them; --json, app show --json and the text show them", async () => {
    const created = await json([
      ...create,
      "--web-origin",
      "https://spa.example",
      "--web-origin",
      "http://localhost:5173",
      "--web-origin",
      "https://spa.example",
      "--token-endpoint-auth-method",
      "client_secret_post",
      "--scope-delimiter",
      "space",
      "--json"
    ])
    assert.deepInclude(created, {
      web_origins: ["https://spa.example", "http://localhost:5173"],
      token_endpoint_auth_method: "client_secret_post",
      scope_delimiter: "space"
    })
    const appKey = created.app_key as string
    assert.deepInclude(await json<Record<string, unknown>>(["app", "show", appKey, "--json"]), {
      web_origins: ["https://spa.example", "http://localhost:5173"],
      token_endpoint_auth_method: "client_secret_post",
      scope_delimiter: "space"
    })
    const text = await cli(["app", "show", appKey])
    assert.include(text.stdout, "  Web origins:   https://spa.example, http://localhost:5173")
    assert.include(
      text.stdout,
      "  Client auth:   client_secret_post (client_id and client_secret in the body)"
    )
    assert.include(text.stdout, "  Scopes joined: with a space (RFC 6749 §3.3)")
  })

  it("a default application's create --json and show text are as before; show --json has the defaults", async () => {
    const created = await json([...create, "--json"])
    assert.notProperty(created, "web_origins")
    assert.notProperty(created, "token_endpoint_auth_method")
    assert.notProperty(created, "scope_delimiter")
    assert.deepInclude(
      await json<Record<string, unknown>>(["app", "show", created.app_key as string, "--json"]),
      {
        web_origins: [],
        token_endpoint_auth_method: "client_secret_basic",
        scope_delimiter: "comma"
      }
    )
    const text = await cli(["app", "show", created.app_key as string])
    assert.notInclude(text.stdout, "Web origins")
    assert.notInclude(text.stdout, "Client auth")
    assert.notInclude(text.stdout, "Scopes joined")
  })

  it("update replaces the origins, --no-web-origins clears them, and switches the method and delimiter", async () => {
    const created = await json([...create, "--web-origin", "https://a.example", "--json"])
    const appKey = created.app_key as string
    const replaced = await json([
      "app",
      "update",
      appKey,
      "--web-origin",
      "https://b.example",
      "--token-endpoint-auth-method",
      "client_secret_post",
      "--scope-delimiter",
      "space",
      "--json"
    ])
    assert.deepInclude(replaced, {
      web_origins: ["https://b.example"],
      token_endpoint_auth_method: "client_secret_post",
      scope_delimiter: "space"
    })
    const cleared = await json(["app", "update", appKey, "--no-web-origins", "--json"])
    assert.deepStrictEqual(cleared.web_origins, [])
    const back = await json([
      "app",
      "update",
      appKey,
      "--token-endpoint-auth-method",
      "client_secret_basic",
      "--scope-delimiter",
      "comma",
      "--json"
    ])
    assert.deepInclude(back, { token_endpoint_auth_method: "client_secret_basic", scope_delimiter: "comma" })
  })

  it("bad values exit 1 naming the field and change nothing; --web-origin with --no-web-origins exits 2", async () => {
    const created = await json([...create, "--web-origin", "https://a.example", "--json"])
    const appKey = created.app_key as string
    const before = (await cli(["app", "show", appKey, "--json"])).stdout
    for (const [flag, value, field] of [
      ["--web-origin", "https://a.example/path", "web origin"],
      ["--web-origin", "http://a.example", "web origin"],
      ["--token-endpoint-auth-method", "private_key_jwt", "token_endpoint_auth_method"],
      ["--scope-delimiter", "tab", "scope_delimiter"]
    ] as const) {
      const r = await cli(["app", "update", appKey, flag, value])
      assert.strictEqual(r.code, 1, `${flag} ${value}: ${r.stderr}`)
      assert.include(r.stderr, field)
      const c = await cli([...create, flag, value])
      assert.strictEqual(c.code, 1, `${flag} ${value}`)
    }
    const both = await cli(["app", "update", appKey, "--web-origin", "https://b.example", "--no-web-origins"])
    assert.strictEqual(both.code, 2)
    const pub = await cli([...create, "--public", "--token-endpoint-auth-method", "client_secret_post"])
    assert.strictEqual(pub.code, 1)
    assert.include(pub.stderr, "a public application has no App Secret")
    assert.strictEqual((await cli(["app", "show", appKey, "--json"])).stdout, before)
  })
})
