import { request } from "node:http"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import {
  basic,
  createApp,
  createUser,
  postForm,
  startServer,
  type TestServer,
  tokenRequest
} from "./helpers.js"

let s: TestServer
let app: { appKey: string; appSecret: string; redirectUri: string }
let other: { appKey: string; appSecret: string; redirectUri: string }

beforeAll(async () => {
  s = await startServer()
  app = await createApp(s)
  other = await createApp(s, { name: "Other" })
})
afterAll(() => s.close())

const introspect = (a: { appKey: string; appSecret: string }, fields: Record<string, string>) =>
  postForm(`${s.base}/oauth2/oauth2/introspect`, fields, { authorization: basic(a.appKey, a.appSecret) })
const revoke = (a: { appKey: string; appSecret: string }, fields: Record<string, string>) =>
  postForm(`${s.base}/oauth2/oauth2/revoke`, fields, { authorization: basic(a.appKey, a.appSecret) })

const userTokens = async () => {
  const user = await createUser(s)
  const res = await tokenRequest(s, app, { grant_type: "password", ...user })
  return (await res.json()) as { access_token: string; refresh_token: string; open_id: string }
}

describe("introspection (RFC 7662)", () => {
  it("describes an active token of the caller", async () => {
    const t = await userTokens()
    const res = await introspect(app, { token: t.access_token })
    assert.strictEqual(res.status, 200)
    assert.strictEqual(res.headers.get("cache-control"), "no-store")
    const body = (await res.json()) as Record<string, unknown>
    assert.strictEqual(body.active, true)
    assert.strictEqual(body.client_id, app.appKey)
    assert.strictEqual(body.scope, "email,profile")
    assert.strictEqual(body.token_type, "Bearer")
    assert.strictEqual(body.sub, t.open_id)
    assert.isNumber(body.exp)
    assert.isNumber(body.iat)
    const refresh = (await (
      await introspect(app, { token: t.refresh_token, token_type_hint: "refresh_token" })
    ).json()) as {
      active: boolean
    }
    assert.strictEqual(refresh.active, true)
  })

  it("answers exactly {active:false} for unknown tokens and other applications' tokens", async () => {
    const t = await userTokens()
    assert.strictEqual(await (await introspect(app, { token: "junk" })).text(), '{"active":false}')
    assert.strictEqual(await (await introspect(other, { token: t.access_token })).text(), '{"active":false}')
  })

  it("requires client authentication and reads the token from the body only", async () => {
    const res = await postForm(`${s.base}/oauth2/oauth2/introspect`, { token: "x" })
    assert.strictEqual(res.status, 401)
    assert.strictEqual(res.headers.get("www-authenticate"), 'Basic realm="latchkey"')
    const query = await postForm(`${s.base}/oauth2/oauth2/introspect?token=x`, "", {
      authorization: basic(app.appKey, app.appSecret)
    })
    assert.strictEqual(query.status, 400)
    const get = await fetch(`${s.base}/oauth2/oauth2/introspect`)
    assert.strictEqual(get.status, 405)
  })
})

describe("revocation (RFC 7009)", () => {
  it("revokes a refresh token and the access tokens of its family", async () => {
    const t = await userTokens()
    const res = await revoke(app, { token: t.refresh_token })
    assert.strictEqual(res.status, 200)
    assert.strictEqual(await res.text(), "")
    assert.deepStrictEqual(await (await introspect(app, { token: t.access_token })).json(), { active: false })
    const refreshed = await tokenRequest(s, app, {
      grant_type: "refresh_token",
      refresh_token: t.refresh_token
    })
    assert.strictEqual(refreshed.status, 400)
  })

  it("answers 200 to junk and changes nothing for another application", async () => {
    assert.strictEqual((await revoke(app, { token: "junk" })).status, 200)
    const t = await userTokens()
    assert.strictEqual((await revoke(other, { token: t.access_token })).status, 200)
    const still = (await (await introspect(app, { token: t.access_token })).json()) as { active: boolean }
    assert.strictEqual(still.active, true)
  })

  it("requires client authentication", async () => {
    const res = await postForm(`${s.base}/oauth2/oauth2/revoke`, { token: "x" })
    assert.strictEqual(res.status, 401)
    assert.strictEqual(res.headers.get("www-authenticate"), 'Basic realm="latchkey"')
  })
})

describe("metadata (RFC 8414)", () => {
  it("describes the server, readable by a page of any origin", async () => {
    const res = await fetch(`${s.base}/.well-known/oauth-authorization-server`)
    assert.strictEqual(res.status, 200)
    // Public and cached: `*` on every answer, so a copy cached without Origin serves any page
    assert.strictEqual(res.headers.get("access-control-allow-origin"), "*")
    assert.isNull(res.headers.get("access-control-allow-credentials"))
    const doc = (await res.json()) as Record<string, unknown>
    assert.strictEqual(doc.issuer, s.issuer)
    assert.strictEqual(doc.authorization_endpoint, `${s.issuer}/oauth2/oauth2/authorize`)
    assert.strictEqual(doc.introspection_endpoint, `${s.issuer}/oauth2/oauth2/introspect`)
    assert.strictEqual(doc.revocation_endpoint, `${s.issuer}/oauth2/oauth2/revoke`)
    assert.strictEqual(doc.authorization_response_iss_parameter_supported, true)
    assert.deepStrictEqual(doc.code_challenge_methods_supported, ["S256"])
  })

  it("answers 405 to POST", async () => {
    const res = await postForm(`${s.base}/.well-known/oauth-authorization-server`, {})
    assert.strictEqual(res.status, 405)
  })
})

describe("requireBearer (RFC 6750)", () => {
  it("refuses two Authorization headers with 400 invalid_request, whichever comes first", async () => {
    const t = await userTokens()
    for (const pair of [
      [`Bearer ${t.access_token}`, "Bearer nope"],
      ["Bearer nope", `Bearer ${t.access_token}`]
    ]) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(`${s.base}/api/me`, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
        req.setHeader("authorization", pair)
        req.on("error", reject)
        req.end()
      })
      assert.strictEqual(status, 400)
    }
  })

  it("lets a valid token through and exposes the principal", async () => {
    const t = await userTokens()
    const res = await fetch(`${s.base}/api/me`, { headers: { authorization: `Bearer ${t.access_token}` } })
    assert.strictEqual(res.status, 200)
    assert.deepStrictEqual(await res.json(), {
      open_id: t.open_id,
      client_id: app.appKey,
      scope: "email,profile"
    })
  })

  it("challenges a request without a Bearer token, without an error code", async () => {
    const res = await fetch(`${s.base}/api/me`)
    assert.strictEqual(res.status, 401)
    assert.strictEqual(res.headers.get("www-authenticate"), 'Bearer realm="latchkey"')
    const basicAuth = await fetch(`${s.base}/api/me`, { headers: { authorization: basic("a", "b") } })
    assert.strictEqual(basicAuth.status, 401)
  })

  it("answers invalid_token for an unknown, revoked or malformed token", async () => {
    const unknown = await fetch(`${s.base}/api/me`, { headers: { authorization: "Bearer nope" } })
    assert.strictEqual(unknown.status, 401)
    assert.match(
      unknown.headers.get("www-authenticate") as string,
      /^Bearer realm="latchkey", error="invalid_token"/
    )
    assert.strictEqual(((await unknown.json()) as { error: string }).error, "invalid_token")
    const t = await userTokens()
    await revoke(app, { token: t.access_token })
    const revoked = await fetch(`${s.base}/api/me`, {
      headers: { authorization: `Bearer ${t.access_token}` }
    })
    assert.strictEqual(revoked.status, 401)
    const malformed = await fetch(`${s.base}/api/me`, { headers: { authorization: "Bearer a b c" } })
    assert.strictEqual(malformed.status, 400)
    assert.match(malformed.headers.get("www-authenticate") as string, /error="invalid_request"/)
  })

  it("answers 403 insufficient_scope with the scope needed", async () => {
    const t = await userTokens()
    const res = await fetch(`${s.base}/api/admin`, { headers: { authorization: `Bearer ${t.access_token}` } })
    assert.strictEqual(res.status, 403)
    assert.match(res.headers.get("www-authenticate") as string, /error="insufficient_scope".*scope="admin"/)
  })
})
