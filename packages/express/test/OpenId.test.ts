import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { createApp, createUser, postForm, startServer, type TestServer, tokenRequest } from "./helpers.js"

let s: TestServer
let app: { appKey: string; appSecret: string; redirectUri: string }

beforeAll(async () => {
  s = await startServer()
  app = await createApp(s, { scope: "openid,profile" })
})
afterAll(() => s.close())

describe("OpenID Connect endpoints through the router", () => {
  it("serves the OpenID configuration, and its jwks_uri and userinfo_endpoint resolve", async () => {
    const res = await fetch(`${s.base}/.well-known/openid-configuration`)
    assert.strictEqual(res.status, 200)
    const doc = (await res.json()) as { issuer: string; jwks_uri: string; userinfo_endpoint: string }
    assert.strictEqual(doc.issuer, s.issuer)
    const jwks = await fetch(doc.jwks_uri.replace(s.issuer, s.base))
    assert.strictEqual(jwks.status, 200)
    assert.strictEqual(jwks.headers.get("cache-control"), "public, max-age=60")
    assert.isAbove(((await jwks.json()) as { keys: Array<unknown> }).keys.length, 0)
    const bare = await fetch(doc.userinfo_endpoint.replace(s.issuer, s.base))
    assert.strictEqual(bare.status, 401)
    assert.strictEqual(bare.headers.get("www-authenticate"), 'Bearer realm="latchkey"')
  })

  it("answers userinfo on GET with the header and on POST with the token in the body", async () => {
    const user = await createUser(s)
    const t = (await (await tokenRequest(s, app, { grant_type: "password", ...user })).json()) as {
      access_token: string
      open_id: string
    }
    const expected = { sub: t.open_id, preferred_username: user.username }
    const get = await fetch(`${s.base}/oauth2/oauth2/userinfo`, {
      headers: { authorization: `Bearer ${t.access_token}` }
    })
    assert.strictEqual(get.status, 200)
    assert.strictEqual(get.headers.get("cache-control"), "no-store")
    assert.deepStrictEqual(await get.json(), expected)
    const post = await postForm(`${s.base}/oauth2/oauth2/userinfo`, { access_token: t.access_token })
    assert.strictEqual(post.status, 200)
    assert.deepStrictEqual(await post.json(), expected)
  })
})
