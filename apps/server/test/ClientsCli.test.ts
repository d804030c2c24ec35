import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Commands from "../src/Commands.js"
import { tempDir } from "./helpers.js"

// These run on SQLite: they need the public-client columns and the signing-key table in the
// SQLite store (its KeyStore), which the storage adapters provide.
const tmp = tempDir()
const db = join(tmp.dir, "clients.sqlite")
afterAll(() => tmp.cleanup())

const cli = async (args: ReadonlyArray<string>) => {
  let stdout = ""
  let stderr = ""
  const code = await Commands.run(args, {
    stdout: (t) => {
      stdout += t
    },
    stderr: (t) => {
      stderr += t
    },
    env: { LATCHKEY_DB: db },
    readStdin: async () => ""
  })
  return { code, stdout, stderr }
}

const json = async <A = Record<string, unknown>>(args: ReadonlyArray<string>): Promise<A> => {
  const r = await cli(args)
  assert.strictEqual(r.code, 0, r.stderr)
  return JSON.parse(r.stdout) as A
}

const create = ["app", "create", "--name", "Native", "--redirect-uri", "http://127.0.0.1:8123/cb"]

describe("app create --public and the access token options", () => {
  it("--public --json prints no app_secret; the text says there is none", async () => {
    const created = await json([...create, "--public", "--json"])
    assert.notProperty(created, "app_secret")
    assert.deepStrictEqual(Object.keys(created), [
      "app_key",
      "name",
      "redirect_uris",
      "scopes",
      "grant_types",
      "public"
    ])
    assert.deepStrictEqual(created.grant_types, ["authorization_code", "refresh_token"])
    const text = await cli([...create, "--public"])
    assert.strictEqual(text.code, 0, text.stderr)
    assert.include(text.stdout, "  Client type:   public (no App Secret; PKCE S256)")
    assert.notMatch(text.stdout, /^\s*App Secret:/m, "no App Secret line")
    const shown = await json(["app", "show", created.app_key as string, "--json"])
    assert.deepInclude(shown, { public: true, require_pkce: true, access_token_format: "opaque" })
  })

  it("--public with client_credentials is refused (exit 1, naming the rule); a bad format too", async () => {
    const r = await cli([...create, "--public", "--grant-types", "client_credentials"])
    assert.strictEqual(r.code, 1)
    assert.include(
      r.stderr,
      "a public application may use only the authorization_code and refresh_token grants"
    )
    assert.strictEqual(r.stdout, "")
    const bad = await cli([...create, "--access-token-format", "paseto"])
    assert.strictEqual(bad.code, 1)
    assert.include(bad.stderr, 'access_token_format must be "opaque" or "jwt"')
  })

  it("--access-token-format jwt and --access-token-audience appear in --json; update switches and answers a new secret once", async () => {
    const created = await json([
      ...create,
      "--grant-types",
      "authorization_code,refresh_token",
      "--access-token-format",
      "jwt",
      "--access-token-audience",
      "https://api.example/",
      "--json"
    ])
    assert.deepInclude(created, { access_token_format: "jwt", access_token_audience: "https://api.example/" })
    const appKey = created.app_key as string
    const toPublic = await json([
      "app",
      "update",
      appKey,
      "--public",
      "--access-token-audience",
      "default",
      "--json"
    ])
    assert.notProperty(toPublic, "app_secret")
    assert.deepInclude(toPublic, { public: true, access_token_audience: null })
    const toConfidential = await json(["app", "update", appKey, "--confidential", "--json"])
    assert.match(toConfidential.app_secret as string, /^[A-Za-z0-9_-]{43}$/)
    assert.isFalse(toConfidential.public)
    const both = await cli(["app", "update", appKey, "--public", "--confidential"])
    assert.strictEqual(both.code, 2)
  })
})

describe("keys", () => {
  it("keys rotate then keys list shows two keys, one signing; never a private part", async () => {
    const rotated = await json<Record<string, unknown>>(["keys", "rotate", "--algorithm", "RS256", "--json"])
    assert.deepInclude(rotated, { alg: "RS256", status: "signing" })
    const listed = await json<Array<Record<string, unknown>>>(["keys", "list", "--json"])
    assert.lengthOf(listed, 2)
    assert.deepStrictEqual(
      listed.map((k) => k.status),
      ["signing", "published"]
    )
    assert.strictEqual(listed[0]?.kid, rotated.kid)
    assert.notMatch(JSON.stringify(listed), /"d"|private|sealed/i)
    const table = await cli(["keys", "list"])
    assert.include(table.stdout, "KID")
    const bad = await cli(["keys", "rotate", "--algorithm", "HS256"])
    assert.strictEqual(bad.code, 1)
    assert.include(bad.stderr, "algorithm must be one of ES256, RS256")
    const audit = await json<Array<Record<string, unknown>>>([
      "audit",
      "tail",
      "--type",
      "signing_key_rotated",
      "--json"
    ])
    assert.lengthOf(audit, 1)
    assert.strictEqual(audit[0]?.actor, "cli")
  })
})
