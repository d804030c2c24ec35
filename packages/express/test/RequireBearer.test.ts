/**
 * requireBearer with JWT access tokens (RFC 9068): verified locally for the audience the
 * route expects, refused for another with 401 invalid_token and its challenge; opaque tokens
 * are still looked up in the store.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import {
  basic,
  createApp,
  ordersAudience,
  postForm,
  startServer,
  type TestServer,
  tokenRequest
} from "./helpers.js"

let s: TestServer
let orders: { appKey: string; appSecret: string }
let plain: { appKey: string; appSecret: string }
let opaque: { appKey: string; appSecret: string }

beforeAll(async () => {
  s = await startServer()
  orders = await createApp(s, { accessTokenFormat: "jwt", accessTokenAudience: ordersAudience })
  plain = await createApp(s, { name: "Issuer audience", accessTokenFormat: "jwt" })
  opaque = await createApp(s, { name: "Opaque" })
})
afterAll(() => s.close())

const accessToken = async (app: { appKey: string; appSecret: string }) => {
  const res = await tokenRequest(s, app, { grant_type: "client_credentials", open_id: "device-1" })
  return ((await res.json()) as { access_token: string }).access_token
}

const get = (path: string, token: string) =>
  fetch(`${s.base}${path}`, { headers: { authorization: `Bearer ${token}` } })

const invalid =
  'Bearer realm="orders", error="invalid_token", error_description="the access token is invalid, expired or revoked"'

describe("requireBearer with JWT access tokens", () => {
  it("accepts a JWT access token for the route's audience and exposes its principal", async () => {
    const token = await accessToken(orders)
    assert.strictEqual(token.split(".").length, 3)
    const res = await get("/api/orders", token)
    assert.strictEqual(res.status, 200)
    assert.deepStrictEqual(await res.json(), {
      open_id: "device-1",
      client_id: orders.appKey,
      scope: "email,profile"
    })
  })

  it("refuses a JWT access token for another audience with 401 invalid_token and the challenge", async () => {
    const res = await get("/api/orders", await accessToken(plain))
    assert.strictEqual(res.status, 401)
    assert.strictEqual(res.headers.get("www-authenticate"), invalid)
    assert.strictEqual(((await res.json()) as { error: string }).error, "invalid_token")
    // Without an audience option the route expects the issuer: the orders token is refused there
    const me = await get("/api/me", await accessToken(orders))
    assert.strictEqual(me.status, 401)
    assert.match(me.headers.get("www-authenticate") as string, /error="invalid_token"/)
    assert.strictEqual((await get("/api/me", await accessToken(plain))).status, 200)
  })

  it("still accepts an opaque token, from the store, whatever the audience option", async () => {
    const token = await accessToken(opaque)
    assert.match(token, /^[A-Za-z0-9_-]{43}$/)
    assert.strictEqual((await get("/api/orders", token)).status, 200)
    assert.strictEqual((await get("/api/me", token)).status, 200)
  })

  it("introspection answers a JWT access token as active until it is revoked; requireBearer, verifying locally, still accepts it until exp", async () => {
    const token = await accessToken(orders)
    const auth = { authorization: basic(orders.appKey, orders.appSecret) }
    const before = await postForm(`${s.base}/oauth2/oauth2/introspect`, { token }, auth)
    assert.strictEqual(((await before.json()) as { active: boolean }).active, true)
    await postForm(`${s.base}/oauth2/oauth2/revoke`, { token }, auth)
    const after = await postForm(`${s.base}/oauth2/oauth2/introspect`, { token }, auth)
    assert.deepStrictEqual(await after.json(), { active: false })
    // The documented trade-off: local verification sees a revocation only at the token's exp
    assert.strictEqual((await get("/api/orders", token)).status, 200)
  })
})
