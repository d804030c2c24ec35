/**
 * docs/security.md: catalogue rows I-1–I-6 and checklist V1–V3: introspection
 * (RFC 7662) and revocation (RFC 7009) need the application's credentials, see
 * only its own tokens, answer exactly `{"active":false}` for anything else, and
 * never read the token from the URL.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type Client, manualClock, post, read, type Stack, startStack, token } from "./harness.js"

let s: Stack

beforeAll(async () => {
  s = await startStack()
})

afterAll(async () => {
  await s?.close()
})

const introspectPath = "/oauth2/oauth2/introspect"
const revokePath = "/oauth2/oauth2/revoke"

const introspect = async (
  value: string,
  client: Client | string = s.A,
  extra: Record<string, string> = {},
  stack: Stack = s
) =>
  read(
    await post(
      stack,
      introspectPath,
      { token: value, ...extra },
      { authorization: typeof client === "string" ? client : client.basic }
    )
  )

const revoke = async (value: string, client: Client = s.A, extra: Record<string, string> = {}) =>
  read(await post(s, revokePath, { token: value, ...extra }, { authorization: client.basic }))

/** A fresh token set for alice from client A (password grant): access and refresh. */
const aliceTokens = async (): Promise<{ access: string; refresh: string }> => {
  const r = await read(
    await token(s, { grant_type: "password", username: s.alice.username, password: s.alice.password })
  )
  assert.strictEqual(r.status, 200)
  return { access: r.body.access_token as string, refresh: r.body.refresh_token as string }
}

const assertInactive = (r: { status: number; body: Record<string, unknown>; res: Response }) => {
  assert.strictEqual(r.status, 200)
  assert.deepStrictEqual(r.body, { active: false })
  assert.include(r.res.headers.get("cache-control") ?? "", "no-store")
}

const junk = "junk-token-that-was-never-issued-0123456789abcdefghijkl"

describe("I — introspection and revocation (docs/security.md, catalogue I-)", () => {
  it("I-1: introspect (and revoke) without client authentication → 401 invalid_client with WWW-Authenticate", async () => {
    const { access } = await aliceTokens()
    for (const path of [introspectPath, revokePath]) {
      const r = await read(await post(s, path, { token: access }))
      assert.strictEqual(r.status, 401, path)
      assert.strictEqual(r.body.error, "invalid_client")
      assert.match(r.res.headers.get("www-authenticate") ?? "", /^Basic realm="/)
      assert.notProperty(r.body, "active")
    }
    assert.strictEqual((await introspect(access)).body.active, true)
  })

  it('I-2: a junk, expired or revoked token → 200 exactly {"active":false}', async () => {
    assertInactive(await introspect(junk))
    assertInactive(await introspect(junk, s.A, { token_type_hint: "refresh_token" }))
    // revoked
    const { access } = await aliceTokens()
    assert.strictEqual((await revoke(access)).status, 200)
    assertInactive(await introspect(access))
    // expired: a one-second access token on a stack whose clock stands still until moved
    // (issued at a fractional second), so neither check depends on how fast the requests are
    const clock = manualClock()
    const t = await startStack({ clock: clock.clock })
    try {
      const brief = await t.client({ name: "Brief Tokens", accessTokenTtl: 1 })
      const issued = await read(await token(t, { grant_type: "client_credentials" }, brief))
      const value = issued.body.access_token as string
      assert.strictEqual((await introspect(value, brief, {}, t)).body.active, true)
      // a second past its expires_in: lapsed whatever the fraction of the issue time
      clock.advance(((issued.body.expires_in as number) + 1) * 1000)
      assertInactive(await introspect(value, brief, {}, t))
    } finally {
      await t.close()
    }
  })

  it("I-3: revoking a junk token → 200 with an empty body", async () => {
    for (const hint of [{}, { token_type_hint: "access_token" }, { token_type_hint: "refresh_token" }]) {
      const r = await revoke(junk, s.A, hint)
      assert.strictEqual(r.status, 200)
      assert.deepStrictEqual(r.body, {})
    }
  })

  it("I-4: revoke a refresh token, then introspect its access token → active:false (the whole family)", async () => {
    const { access, refresh } = await aliceTokens()
    const refreshed = await read(await token(s, { grant_type: "refresh_token", refresh_token: refresh }))
    assert.strictEqual(refreshed.status, 200)
    const access2 = refreshed.body.access_token as string
    const refresh2 = refreshed.body.refresh_token as string
    assert.strictEqual((await revoke(refresh2, s.A, { token_type_hint: "refresh_token" })).status, 200)
    assertInactive(await introspect(access))
    assertInactive(await introspect(access2))
    assertInactive(await introspect(refresh2))
    const again = await read(await token(s, { grant_type: "refresh_token", refresh_token: refresh2 }))
    assert.strictEqual(again.status, 400)
    assert.strictEqual(again.body.error, "invalid_grant")
  })

  it("I-5: B revoking A's token changes nothing and answers exactly as for a junk token", async () => {
    const { access, refresh } = await aliceTokens()
    const byB = await revoke(access, s.B)
    const junkByB = await revoke(junk, s.B)
    assert.strictEqual(byB.status, junkByB.status)
    assert.deepStrictEqual(byB.body, junkByB.body)
    assert.strictEqual(byB.res.headers.get("content-type"), junkByB.res.headers.get("content-type"))
    assert.strictEqual(byB.res.headers.get("content-length"), junkByB.res.headers.get("content-length"))
    await revoke(refresh, s.B, { token_type_hint: "refresh_token" })
    assert.strictEqual((await introspect(access)).body.active, true)
    assert.strictEqual((await introspect(refresh)).body.active, true)
    // and B cannot see it either
    assertInactive(await introspect(access, s.B))
  })

  it("I-6: a token in the query string of introspection or revocation → 400 invalid_request, never read from the URL", async () => {
    const { access } = await aliceTokens()
    for (const path of [introspectPath, revokePath]) {
      // the name percent-encoded (`%74oken`) is the same parameter (fixed: it used to be read past)
      for (const name of ["token", "%74oken", "tok%65n"]) {
        for (const body of ["", `token=${encodeURIComponent(access)}`]) {
          const r = await read(
            await post(s, `${path}?${name}=${encodeURIComponent(access)}`, body, { authorization: s.A.basic })
          )
          assert.strictEqual(r.status, 400, `${path}?${name}= body=${body !== ""}`)
          assert.strictEqual(r.body.error, "invalid_request")
        }
      }
      // a GET with the token in the URL is not an introspection or a revocation either
      const g = await read(
        await fetch(`${s.base}${path}?token=${encodeURIComponent(access)}`, {
          headers: { authorization: s.A.basic }
        })
      )
      assert.strictEqual(g.status, 405)
      assert.notProperty(g.body, "active")
    }
    assert.strictEqual((await introspect(access)).body.active, true)
  })
})

describe("V — introspection and revocation checklist (docs/security.md, checklist V)", () => {
  it("V1: introspection needs client authentication — none, a wrong secret or a Bearer token → 401 with WWW-Authenticate", async () => {
    const { access } = await aliceTokens()
    const wrong = `Basic ${Buffer.from(`${s.A.appKey}:wrong-secret`).toString("base64")}`
    for (const authorization of [undefined, wrong, `Bearer ${access}`]) {
      const r = await read(
        await post(s, introspectPath, { token: access }, authorization === undefined ? {} : { authorization })
      )
      assert.strictEqual(r.status, 401)
      assert.strictEqual(r.body.error, "invalid_client")
      assert.match(r.res.headers.get("www-authenticate") ?? "", /^Basic realm="latchkey"/)
    }
  })

  it('V2: unknown → exactly {"active":false}; B may not introspect A\'s tokens (decided: inactive); an active token has exactly active, client_id, exp, iat, scope, sub, subject_type and token_type (RFC 7662 §2.2, docs/security.md)', async () => {
    assertInactive(await introspect(junk))
    const { access, refresh } = await aliceTokens()
    assertInactive(await introspect(access, s.B))
    assertInactive(await introspect(refresh, s.B))
    const r = await introspect(access)
    assert.strictEqual(r.status, 200)
    assert.deepStrictEqual(Object.keys(r.body).sort(), [
      "active",
      "client_id",
      "exp",
      "iat",
      "scope",
      "sub",
      "subject_type",
      "token_type"
    ])
    assert.strictEqual(r.body.subject_type, "user")
    assert.strictEqual(r.body.client_id, s.A.appKey)
    assert.strictEqual(r.body.scope, "read,write")
    assert.strictEqual(r.body.token_type, "Bearer")
    assert.isTrue((r.body.exp as number) > (r.body.iat as number))
    // the application's own token has no subject
    const cc = await read(await token(s, { grant_type: "client_credentials" }))
    const own = await introspect(cc.body.access_token as string)
    assert.strictEqual(own.body.active, true)
    assert.notProperty(own.body, "sub")
  })

  it("V3: revoke the refresh token → 200 and its access token inactive; junk → 200; B cannot revoke A's; token_type_hint=foo is ignored", async () => {
    const first = await aliceTokens()
    assert.strictEqual((await revoke(first.refresh)).status, 200)
    assertInactive(await introspect(first.access))
    assert.strictEqual((await revoke(junk)).status, 200)
    const second = await aliceTokens()
    assert.strictEqual((await revoke(second.access, s.B)).status, 200)
    assert.strictEqual((await introspect(second.access)).body.active, true)
    const hinted = await revoke(second.refresh, s.A, { token_type_hint: "foo" })
    assert.strictEqual(hinted.status, 200)
    assertInactive(await introspect(second.refresh))
    assertInactive(await introspect(second.access))
    assert.strictEqual((await introspect(junk, s.A, { token_type_hint: "foo" })).status, 200)
  })
})
