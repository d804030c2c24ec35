/**
 * docs/security.md: catalogue H1–H17 (client authentication with HTTP Basic) and
 * checklist A1–A10 (client authentication and the token endpoint).
 * Where a row offers a choice, missing, malformed or wrong credentials are all 401
 * `invalid_client` with `WWW-Authenticate: Basic realm="latchkey"` (RFC 6749 §5.2).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Admin } from "@latchkey/core"
import { Exit } from "effect"
import { basic } from "../helpers.js"
import {
  expectError,
  introspect,
  portOf,
  rawExchange,
  rawJson,
  rawStatus,
  redeem,
  refresh,
  retryAfter,
  type SignedIn,
  stableHeaders,
  tokenSet,
  untilThrottled,
  useSignedInStack
} from "./flows.js"
import {
  type Client,
  callsDuring,
  cb,
  manualClock,
  post,
  read,
  type Stack,
  startStack,
  token
} from "./harness.js"

const path = "/oauth2/oauth2/token"
const cc = { grant_type: "client_credentials" }

/** Basic credentials without the Appendix B form-encoding. */
const rawBasic = (text: string | Buffer): string =>
  `Basic ${(typeof text === "string" ? Buffer.from(text) : text).toString("base64")}`

/** 401 invalid_client with the Basic challenge (RFC 6749 §5.2). */
const expectInvalidClient = (r: Awaited<ReturnType<typeof read>>) => {
  expectError(r, 401, "invalid_client")
  assert.strictEqual(r.res.headers.get("www-authenticate"), 'Basic realm="latchkey"')
}

// Failures here must not lock anybody out: throttling has its own stack below
let s: Stack
let alice: SignedIn
useSignedInStack(
  (stack, signedIn) => {
    s = stack
    alice = signedIn
  },
  { throttle: { freeFailures: 1_000_000, addressFreeFailures: 1_000_000 } }
)

describe("H: client authentication (Basic)", () => {
  it("H1: no Authorization header and no body credentials is 401 invalid_client with WWW-Authenticate: Basic", async () => {
    expectInvalidClient(await read(await post(s, path, cc)))
  })

  it("H2: an empty `Authorization: Basic` is 401 invalid_client with WWW-Authenticate: Basic", async () => {
    for (const header of ["Basic", "Basic ", "Basic    "]) {
      expectInvalidClient(await read(await token(s, cc, header)))
    }
  })

  it("H3: a non-base64 Basic header (`!!!%%%`) is 401 invalid_client, never decoded leniently (malformed credentials are invalid_client, RFC 6749 §5.2)", async () => {
    const good = s.A.basic.slice("Basic ".length)
    for (const header of [
      "Basic !!!%%%",
      `Basic ${good.slice(0, 4)}!${good.slice(4)}`,
      `Basic ${good}===`,
      `Basic ${good.replace(/=+$/, "")}`.replace(/.$/, "*")
    ]) {
      expectInvalidClient(await read(await token(s, cc, header)))
    }
  })

  it("H4: base64 of the App Key without a colon is 401 invalid_client (malformed credentials are invalid_client, RFC 6749 §5.2)", async () => {
    expectInvalidClient(await read(await token(s, cc, rawBasic(s.A.appKey))))
  })

  it("H5: base64(`:secret`) and base64(`key:`) are 401 invalid_client (missing credentials are invalid_client, RFC 6749 §5.2)", async () => {
    expectInvalidClient(await read(await token(s, cc, rawBasic(`:${s.A.appSecret}`))))
    expectInvalidClient(await read(await token(s, cc, rawBasic(`${s.A.appKey}:`))))
    expectInvalidClient(await read(await token(s, cc, rawBasic(":"))))
  })

  it("H6: a valid App Key with a wrong secret is 401 invalid_client with WWW-Authenticate: Basic realm", async () => {
    expectInvalidClient(await read(await token(s, cc, basic(s.A.appKey, `${s.A.appSecret}x`))))
  })

  it("H7: an unknown App Key gets a byte-identical answer to a wrong secret (status, headers, body)", async () => {
    const wrong = await token(s, cc, basic(s.A.appKey, "wrong-secret-0000000000000000000000000"))
    const unknown = await token(s, cc, basic("no-such-app-key", "wrong-secret-0000000000000000000000000"))
    assert.strictEqual(unknown.status, wrong.status)
    assert.deepStrictEqual(stableHeaders(unknown), stableHeaders(wrong))
    assert.strictEqual(await unknown.text(), await wrong.text())
  })

  it("H8: the scheme is case-insensitive: `basic …` and `BASIC …` are accepted (RFC 9110 §11.1)", async () => {
    const credentials = s.A.basic.slice("Basic ".length)
    for (const scheme of ["basic", "BASIC", "bAsIc"]) {
      const r = await read(await token(s, cc, `${scheme} ${credentials}`))
      assert.strictEqual(r.status, 200, JSON.stringify(r.body))
    }
  })

  it("H9: `Authorization: Bearer <access_token>` at the token endpoint is 401 invalid_client", async () => {
    const { access } = await tokenSet(s)
    expectInvalidClient(await read(await token(s, cc, `Bearer ${access}`)))
  })

  it("H10: a secret with `:`, `+`, `%` and `&` works form-encoded per RFC 6749 Appendix B and is 401 unencoded; decoding is one pass (non-ASCII secrets cannot be registered)", async () => {
    const secrets = [
      "s3cret:with+plus&amp%2541-0123456789abcdef",
      "s3cret:with+plus&amp%zz-0123456789abcdefgh"
    ]
    for (const [i, appSecret] of secrets.entries()) {
      const appKey = `imported-h10-${i}`
      await s.client({ appKey, appSecret })
      const encoded = await read(await token(s, cc, basic(appKey, appSecret)))
      assert.strictEqual(encoded.status, 200, JSON.stringify(encoded.body))
      // `+` read as a space, `%25`/`%zz` decoded or refused: never the registered secret
      expectInvalidClient(await read(await token(s, cc, rawBasic(`${appKey}:${appSecret}`))))
      // encoded twice means decoded once: the literal escapes do not match
      expectInvalidClient(await read(await token(s, cc, basic(appKey, encodeURIComponent(appSecret)))))
    }
    // non-ASCII: refused at registration, and an encoded non-ASCII secret is 401, not 500
    const refused = await s.runtime.runPromiseExit(
      Admin.createApplication({
        name: "x",
        redirectUris: [cb],
        appKey: "h10-utf8",
        appSecret: "é".repeat(40)
      })
    )
    assert.isTrue(Exit.isFailure(refused))
    expectInvalidClient(await read(await token(s, cc, basic(s.A.appKey, `${s.A.appSecret}é`))))
  })

  it("H11: a malformed percent-escape inside Basic (`key%ZZ:…`) is 401 invalid_client (malformed credentials are invalid_client, RFC 6749 §5.2)", async () => {
    expectInvalidClient(await read(await token(s, cc, rawBasic(`${s.A.appKey}%ZZ:${s.A.appSecret}`))))
    expectInvalidClient(await read(await token(s, cc, rawBasic(`${s.A.appKey}:${s.A.appSecret}%`))))
  })

  it("H12: Basic A plus body client_id=A&client_secret=… is 400 invalid_request (one authentication method)", async () => {
    expectError(
      await read(await token(s, { ...cc, client_id: s.A.appKey, client_secret: s.A.appSecret })),
      400,
      "invalid_request"
    )
    expectError(await read(await token(s, { ...cc, client_secret: s.A.appSecret })), 400, "invalid_request")
  })

  it("H13: Basic A plus body client_id=B is 400 invalid_request (client_id mismatch)", async () => {
    expectError(await read(await token(s, { ...cc, client_id: s.B.appKey })), 400, "invalid_request")
  })

  it("H14: two Authorization headers are rejected deterministically, whatever their order (malformed credentials are 401 invalid_client, RFC 6749 §5.2)", async () => {
    for (const pair of [
      [s.A.basic, s.B.basic],
      [s.A.basic, s.A.basic],
      ["Basic !!!", s.A.basic]
    ]) {
      const r = await rawExchange(
        portOf(s.base),
        [
          `POST ${path} HTTP/1.1`,
          "Host: 127.0.0.1",
          ...pair.map((h) => `Authorization: ${h}`),
          "Content-Type: application/x-www-form-urlencoded",
          "Content-Length: 29",
          "Connection: close",
          "",
          "grant_type=client_credentials"
        ].join("\r\n")
      )
      assert.strictEqual(rawStatus(r.text), 401, r.text.slice(0, 300))
      assert.strictEqual(rawJson(r.text).error, "invalid_client")
      assert.match(r.text, /www-authenticate: Basic realm="latchkey"/i)
    }
  })

  it("H15: a 20 KB Authorization header is 431 from Node and the process keeps serving", async () => {
    const r = await rawExchange(
      portOf(s.base),
      [
        `POST ${path} HTTP/1.1`,
        "Host: 127.0.0.1",
        `Authorization: Basic ${"A".repeat(20 * 1024)}`,
        "Content-Type: application/x-www-form-urlencoded",
        "Content-Length: 29",
        "Connection: close",
        "",
        "grant_type=client_credentials"
      ].join("\r\n")
    )
    assert.strictEqual(rawStatus(r.text), 431, r.text.slice(0, 200))
    // a long header under Node's limit is still refused cheaply as malformed credentials
    expectInvalidClient(await read(await token(s, cc, `Basic ${"A".repeat(8 * 1024)}`)))
    assert.strictEqual((await token(s, cc)).status, 200)
  })

  it("H17: decoded Basic credentials with invalid UTF-8 (0xC3 0x28) are 401 invalid_client, not 500", async () => {
    for (const bytes of [
      Buffer.concat([Buffer.from(`${s.A.appKey}:`), Buffer.from([0xc3, 0x28])]),
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`:${s.A.appSecret}`)]),
      Buffer.concat([Buffer.from(`${s.A.appKey}:${s.A.appSecret}`), Buffer.from([0xed, 0xa0, 0x80])])
    ]) {
      expectInvalidClient(await read(await token(s, cc, rawBasic(bytes))))
    }
  })
})

describe("A: client authentication and the token endpoint (docs/security.md, checklist A)", () => {
  it("A1: a wrong secret is 401 with WWW-Authenticate: Basic realm and the JSON body {error: invalid_client}", async () => {
    const r = await read(await token(s, cc, basic(s.B.appKey, "not-the-secret")))
    expectInvalidClient(r)
    assert.deepStrictEqual(Object.keys(r.body).sort(), ["error", "error_description"])
  })

  it("A2: Appendix B decoding: split at the first colon, then form-urldecode each part once (`+` is a space)", async () => {
    const appKey = "imported-a2"
    const appSecret = "a2 secret:has a space+plus%and:colons-0123456789"
    // a space cannot be imported (printable ASCII only), so register the `+` form and send it encoded
    const registered = appSecret.replace(/ /g, "~")
    await s.client({ appKey, appSecret: registered })
    assert.strictEqual((await token(s, cc, basic(appKey, registered))).status, 200)
    // `+` in the encoded form is a space, so `~`→`+` does not match `~`
    expectInvalidClient(
      await read(
        await token(s, cc, rawBasic(`${appKey}:${encodeURIComponent(registered).replace(/~/g, "+")}`))
      )
    )
    // malformed %ZZ: every malformed credential is 401 invalid_client (RFC 6749 §5.2; the row allows 400)
    expectInvalidClient(await read(await token(s, cc, rawBasic(`${appKey}:%ZZ${registered}`))))
  })

  it("A3: Basic plus a body client_secret, or a body client_id that differs, is 400 invalid_request; the same client_id is allowed", async () => {
    expectError(await read(await token(s, { ...cc, client_secret: "x" })), 400, "invalid_request")
    expectError(await read(await token(s, { ...cc, client_id: "someone-else" })), 400, "invalid_request")
    assert.strictEqual((await token(s, { ...cc, client_id: s.A.appKey })).status, 200)
  })

  it("A5: unknown key and wrong secret are indistinguishable in body, headers and cost (the same digests and store calls); odd secret lengths never 500", async () => {
    const victim = await s.client({ name: "A5 victim" })
    const wrong = () => token(s, cc, basic(victim.appKey, "x".repeat(43)))
    const unknown = () => token(s, cc, basic("A5-unknown-app-key-0000000", "x".repeat(43)))
    const w = await wrong()
    const u = await unknown()
    assert.deepStrictEqual(stableHeaders(u), stableHeaders(w))
    assert.strictEqual(await u.text(), await w.text())
    // odd lengths: timingSafeEqual on unequal lengths would throw (a 500 oracle)
    for (const secret of ["x", "y".repeat(500), "z".repeat(2000)]) {
      expectInvalidClient(await read(await token(s, cc, basic(victim.appKey, secret))))
    }
    // the same cost: one keyed digest of the presented secret for an unknown key as for a wrong secret, the same store calls
    for (let i = 0; i < 3; i++) {
      const w = await callsDuring(s, async () => (await wrong()).text())
      const u = await callsDuring(s, async () => (await unknown()).text())
      assert.strictEqual(w.calls["Digest.hmac"], 1)
      assert.deepStrictEqual(u.calls, w.calls)
    }
  })

  it("A6: GET with the parameters in the query is 405 (no token); POST ?password=… with an empty body is 400 invalid_request", async () => {
    const get = await read(
      await fetch(`${s.base}${path}?grant_type=client_credentials`, { headers: { authorization: s.A.basic } })
    )
    expectError(get, 405, "invalid_request")
    const query = new URLSearchParams({
      grant_type: "password",
      username: "alice",
      password: s.alice.password
    })
    const r = await read(
      await fetch(`${s.base}${path}?${query}`, {
        method: "POST",
        headers: { authorization: s.A.basic, "content-type": "application/x-www-form-urlencoded" }
      })
    )
    expectError(r, 400, "invalid_request")
  })

  it("A7: a repeated parameter is 400 invalid_request, `code=` counts as omitted (400 invalid_request), unknown parameters are ignored", async () => {
    expectError(
      await read(await token(s, "grant_type=password&grant_type=password&username=alice&password=x")),
      400,
      "invalid_request"
    )
    expectError(
      await read(
        await token(s, `grant_type=authorization_code&code=&redirect_uri=${encodeURIComponent(cb)}`)
      ),
      400,
      "invalid_request"
    )
    const ok = await read(await token(s, "grant_type=client_credentials&foo=bar&x="))
    assert.strictEqual(ok.status, 200)
  })

  it("A8: each RFC 6749 §5.2 error code where it belongs; a bad user password is 400 invalid_grant, not 401", async () => {
    expectError(await read(await token(s, { grant_type: "password" })), 400, "invalid_request")
    expectInvalidClient(await read(await token(s, cc, basic(s.A.appKey, "nope"))))
    expectError(
      await read(await token(s, { grant_type: "password", username: "alice", password: "wrong-password" })),
      400,
      "invalid_grant"
    )
    const ccOnly = await s.client({ grantTypes: ["client_credentials"] })
    expectError(
      await read(await token(s, { grant_type: "password", username: "alice", password: "x" }, ccOnly)),
      400,
      "unauthorized_client"
    )
    expectError(await read(await token(s, { grant_type: "urn:x:foo" })), 400, "unsupported_grant_type")
    const { refresh: rt } = await tokenSet(s)
    expectError(await read(await refresh(s, rt, { scope: "admin" })), 400, "invalid_scope")
  })

  it("A9: Cache-Control: no-store, Pragma: no-cache and JSON on 200 and 4xx of every grant, introspection and revocation", async () => {
    const code = await alice.code()
    const { refresh: rt } = await tokenSet(s)
    const responses: Array<[string, Response]> = [
      ["client_credentials", await token(s, cc)],
      ["password", await token(s, { grant_type: "password", username: "alice", password: s.alice.password })],
      ["authorization_code", await redeem(s, code)],
      ["refresh_token", await refresh(s, rt)],
      ["code replay", await redeem(s, code)],
      ["bad password", await token(s, { grant_type: "password", username: "alice", password: "wrong" })],
      ["invalid_client", await token(s, cc, basic(s.A.appKey, "wrong"))],
      ["unsupported", await token(s, { grant_type: "foo" })],
      ["405", await fetch(s.base + path)],
      ["413", await token(s, "x".repeat(17 * 1024))],
      [
        "introspect",
        await post(s, "/oauth2/oauth2/introspect", { token: "junk" }, { authorization: s.A.basic })
      ],
      ["introspect 401", await post(s, "/oauth2/oauth2/introspect", { token: "junk" })],
      ["revoke 401", await post(s, "/oauth2/oauth2/revoke", { token: "junk" })]
    ]
    for (const [name, res] of responses) {
      assert.strictEqual(res.headers.get("cache-control"), "no-store", name)
      assert.strictEqual(res.headers.get("pragma"), "no-cache", name)
      assert.strictEqual(res.headers.get("content-type"), "application/json; charset=utf-8", name)
      JSON.parse(await res.text())
    }
    // revocation answers 200 with an empty body: no-store, and no content to type
    const revoked = await post(s, "/oauth2/oauth2/revoke", { token: "junk" }, { authorization: s.A.basic })
    assert.strictEqual(revoked.status, 200)
    assert.strictEqual(revoked.headers.get("cache-control"), "no-store")
    assert.strictEqual(revoked.headers.get("pragma"), "no-cache")
    assert.strictEqual(await revoked.text(), "")
  })

  it("A10: a client not registered for client_credentials is 400 unauthorized_client (no public clients exist: every application has a secret); an application token's subject is never a user", async () => {
    const codeOnly = await s.client({ grantTypes: ["authorization_code", "refresh_token"] })
    expectError(await read(await token(s, cc, codeOnly)), 400, "unauthorized_client")
    const own = await read(await token(s, cc))
    assert.strictEqual(own.status, 200)
    assert.isUndefined(own.body.open_id)
    assert.isUndefined(own.body.refresh_token)
    const info = await introspect(s, own.body.access_token as string)
    assert.strictEqual(info.active, true)
    assert.strictEqual(info.client_id, s.A.appKey)
    assert.isUndefined(info.sub)
    // a user's token from the same application does carry a subject, and it is not the user id
    const pw = await read(
      await token(s, { grant_type: "password", username: "alice", password: s.alice.password })
    )
    const userInfo = await introspect(s, pw.body.access_token as string)
    assert.isString(userInfo.sub)
    assert.notStrictEqual(userInfo.sub, s.alice.userId)
  })
})

describe("throttling of client authentication (H16, A4)", () => {
  let t: Stack
  // Lockouts run on a clock the test moves: a pause of the loaded machine between two requests
  // can neither end a lockout early nor make a test wait for one
  const clock = manualClock()
  beforeAll(async () => {
    t = await startStack({
      throttle: {
        freeFailures: 3,
        addressFreeFailures: 1_000_000,
        baseLockout: 1,
        maxLockout: 2,
        window: 60
      },
      clock: clock.clock
    })
  })
  afterAll(async () => {
    await t.close()
  })

  const wrongSecret = (c: Client, i: number) => `SENTINEL-WRONG-SECRET-${c.appKey}-${i}`

  it("H16: repeated wrong secrets for one App Key are throttled (429 + Retry-After), logged without the secret; the client recovers after the window", async () => {
    const c = await t.client({ name: "H16" })
    const answers = await untilThrottled(12, (i) => token(t, cc, basic(c.appKey, wrongSecret(c, i))))
    const last = answers.at(-1) as (typeof answers)[number]
    expectError(last, 429, "temporarily_unavailable")
    const wait = retryAfter(last)
    assert.isAtMost(wait, 2)
    for (const r of answers.slice(0, 3)) expectInvalidClient(r)
    // another application is not affected
    assert.strictEqual((await token(t, cc, t.B)).status, 200)
    clock.advance(wait * 1000)
    assert.strictEqual((await token(t, cc, c)).status, 200)
    const logs = t.logs()
    assert.include(logs, "client_auth_throttled")
    for (let i = 0; i < answers.length; i++) assert.notInclude(logs, wrongSecret(c, i))
    assert.notInclude(logs, c.appSecret)
  })

  it("A4: while an App Key is locked out the right secret gets the same 429 as a wrong one; it works again after Retry-After (no permanent lock)", async () => {
    const c = await t.client({ name: "A4" })
    const answers = await untilThrottled(12, (i) => token(t, cc, basic(c.appKey, wrongSecret(c, i))))
    assert.strictEqual(answers.at(-1)?.status, 429)
    const right = await read(await token(t, cc, c))
    const wrong = await read(await token(t, cc, basic(c.appKey, "still-wrong")))
    expectError(right, 429, "temporarily_unavailable")
    assert.strictEqual(right.status, wrong.status)
    assert.deepStrictEqual(right.body, wrong.body)
    clock.advance(Math.max(retryAfter(right), retryAfter(wrong)) * 1000)
    const recovered = await read(await token(t, cc, c))
    assert.strictEqual(recovered.status, 200, JSON.stringify(recovered.body))
  })
})
