import { assert, it } from "vitest"
import handler, { app, issueToken } from "./server.js"

it("issues a client_credentials token through the example's fetch handler", async () => {
  const token = await issueToken()
  assert.strictEqual(token.token_type, "Bearer")
  assert.strictEqual(token.scope, "profile")
  assert.match(String(token.access_token), /^[A-Za-z0-9_-]{43}$/)
  assert.isString(app.app.appKey)
})

it("exports a default { fetch } that answers other paths with 404", async () => {
  const res = await handler.fetch(new Request("http://127.0.0.1:8080/nothing"))
  assert.strictEqual(res.status, 404)
})
