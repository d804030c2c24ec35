/**
 * openid-client's default set-up (`client_secret_post`, RFC 6749 §2.3.1) against a running
 * server: an application registered for it gets tokens with its credentials in the body, with
 * space-joined scopes when it registered `--scope-delimiter space`; an application on the default
 * `client_secret_basic` that sends body credentials gets 401 naming its method.
 */
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as client from "openid-client"
import { createApp, freePort, type ServerProcess, spawnServer, tempDir } from "./helpers.js"

const tmp = tempDir()
const db = join(tmp.dir, "post.sqlite")
const insecure = { execute: [client.allowInsecureRequests] }
const registration = [
  "--redirect-uri",
  "https://app.example/cb",
  "--scope",
  "notes.read,notes.write",
  "--grant-types",
  "client_credentials"
]

let server: ServerProcess
let postApp: { app_key: string; app_secret: string }
let basicApp: { app_key: string; app_secret: string }

beforeAll(async () => {
  postApp = await createApp(db, [
    "--name",
    "openid-client defaults",
    ...registration,
    "--token-endpoint-auth-method",
    "client_secret_post",
    "--scope-delimiter",
    "space"
  ])
  basicApp = await createApp(db, ["--name", "Basic", ...registration])
  const port = await freePort()
  server = await spawnServer(
    { LATCHKEY_DB: db, PORT: String(port), LATCHKEY_ISSUER: `http://127.0.0.1:${port}` },
    undefined,
    { timeoutMs: 60_000 }
  )
}, 90_000)

afterAll(async () => {
  await server?.stop()
  tmp.cleanup()
})

const bodyCredentials = (app: { app_key: string; app_secret: string }) =>
  fetch(`${server.base}/oauth2/oauth2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: app.app_key,
      client_secret: app.app_secret
    }).toString()
  })

describe("client_secret_post against a running server", () => {
  it("openid-client's default client authentication gets a token; the scope is space-joined", async () => {
    const config = await client.discovery(
      new URL(server.base),
      postApp.app_key,
      postApp.app_secret,
      undefined,
      insecure
    )
    assert.include(config.serverMetadata().token_endpoint_auth_methods_supported ?? [], "client_secret_post")
    const tokens = await client.clientCredentialsGrant(config, { scope: "notes.write notes.read" })
    assert.isString(tokens.access_token)
    assert.strictEqual(tokens.scope, "notes.read notes.write")
  })

  it("a client_secret_basic application sending body credentials gets 401 naming client_secret_basic", async () => {
    const res = await bodyCredentials(basicApp)
    assert.strictEqual(res.status, 401)
    const body = (await res.json()) as { error: string; error_description: string }
    assert.strictEqual(body.error, "invalid_client")
    assert.include(body.error_description, "this application authenticates with client_secret_basic")
    assert.notInclude(JSON.stringify(body), basicApp.app_secret)
    const ok = await bodyCredentials(postApp)
    assert.strictEqual(ok.status, 200)
  })
})
