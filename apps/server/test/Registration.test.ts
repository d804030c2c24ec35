/**
 * Dynamic client registration against the running server, by a real client library: with
 * `LATCHKEY_REGISTRATION=on` and an initial access token from the CLI, openid-client discovers
 * the registration endpoint, registers a client and gets a token with it; the client then reads,
 * replaces and deletes its registration (RFC 7592) at the URI it was given. The CLI's
 * `registration-token` commands issue, list and revoke the tokens.
 */
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as client from "openid-client"
import { cliInProcess, freePort, type ServerProcess, spawnServer, tempDir } from "./helpers.js"

const tmp = tempDir()
const db = join(tmp.dir, "registration.sqlite")
const insecure = { execute: [client.allowInsecureRequests] }

let server: ServerProcess
let issuer: string

/** `registration-token create` with `args`, its JSON answer. */
const createToken = async (...args: Array<string>) => {
  const r = await cliInProcess(db, ["registration-token", "create", ...args, "--json"])
  assert.strictEqual(r.code, 0, r.stderr)
  return JSON.parse(r.stdout) as { id: string; token: string; uses_left: number }
}

beforeAll(async () => {
  const port = await freePort()
  issuer = `http://127.0.0.1:${port}`
  server = await spawnServer({
    LATCHKEY_DB: db,
    PORT: String(port),
    LATCHKEY_ISSUER: issuer,
    LATCHKEY_REGISTRATION: "on"
  })
}, 90_000)

afterAll(async () => {
  await server?.stop()
  tmp.cleanup()
})

describe("dynamic client registration on the running server", () => {
  it("openid-client registers with an initial access token and gets a token with its credentials", async () => {
    const { token } = await createToken("--uses", "1", "--expires-in", "1h")
    const config = await client.dynamicClientRegistration(
      new URL(issuer),
      {
        client_name: "Registered by openid-client",
        redirect_uris: ["https://rp.example/cb"],
        grant_types: ["client_credentials"],
        response_types: [],
        scope: "notes.read",
        // openid-client authenticates with client_secret_post unless told otherwise
        token_endpoint_auth_method: "client_secret_post"
      },
      undefined,
      { ...insecure, initialAccessToken: token }
    )
    const metadata = config.clientMetadata()
    assert.strictEqual(metadata.client_name, "Registered by openid-client")
    assert.strictEqual(metadata.token_endpoint_auth_method, "client_secret_post")
    const issued = await client.clientCredentialsGrant(config, { scope: "notes.read" })
    assert.strictEqual(issued.token_type, "bearer")
    assert.strictEqual(issued.scope, "notes.read")
    const again = await client
      .dynamicClientRegistration(new URL(issuer), { redirect_uris: ["https://rp.example/cb"] }, undefined, {
        ...insecure,
        initialAccessToken: token
      })
      .then(
        () => 201,
        (e: unknown) => (e as { response?: { status?: number } }).response?.status
      )
    assert.strictEqual(again, 401, "its one use is spent")
  })

  it("the client reads, replaces and deletes its registration at its registration_client_uri", async () => {
    const { token } = await createToken("--uses", "1", "--expires-in", "600")
    const config = await client.dynamicClientRegistration(
      new URL(issuer),
      { client_name: "Managed RP", redirect_uris: ["https://rp.example/cb"] },
      undefined,
      { ...insecure, initialAccessToken: token }
    )
    const registered = config.clientMetadata()
    const uri = registered.registration_client_uri as string
    const headers = { authorization: `Bearer ${registered.registration_access_token}` }
    const read = await fetch(uri, { headers })
    assert.strictEqual(read.status, 200)
    assert.strictEqual(((await read.json()) as { client_name: string }).client_name, "Managed RP")
    const replaced = await fetch(uri, {
      method: "PUT",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({
        client_id: registered.client_id,
        client_name: "Renamed RP",
        redirect_uris: ["https://rp.example/other-cb"]
      })
    })
    assert.strictEqual(replaced.status, 200)
    const after = (await replaced.json()) as { client_name: string; redirect_uris: Array<string> }
    assert.deepStrictEqual(
      [after.client_name, after.redirect_uris],
      ["Renamed RP", ["https://rp.example/other-cb"]]
    )
    const deleted = await fetch(uri, { method: "DELETE", headers })
    assert.strictEqual(deleted.status, 204)
    assert.strictEqual((await fetch(uri, { headers })).status, 401)
    const shown = await cliInProcess(db, ["app", "show", registered.client_id, "--json"])
    assert.strictEqual(shown.code, 1, "the application is gone")
  })

  it("registration-token list shows live tokens by id, never the token; revoke ends one", async () => {
    const { id, token } = await createToken("--uses", "3", "--expires-in", "7d")
    const listed = await cliInProcess(db, ["registration-token", "list", "--json"])
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.isFalse(listed.stdout.includes(token))
    const entry = (JSON.parse(listed.stdout) as Array<{ id: string; uses_left: number }>).find(
      (t) => t.id === id
    )
    assert.strictEqual(entry?.uses_left, 3)
    const revoked = await cliInProcess(db, ["registration-token", "revoke", id])
    assert.strictEqual(revoked.code, 0, revoked.stderr)
    const refused = await fetch(`${issuer}/oauth2/oauth2/register`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["https://rp.example/cb"] })
    })
    assert.strictEqual(refused.status, 401)
    const bad = await cliInProcess(db, ["registration-token", "create", "--uses", "0", "--expires-in", "60"])
    assert.strictEqual(bad.code, 1)
    assert.match(bad.stderr, /uses must be a whole number from 1 to 10000/)
  })
})
