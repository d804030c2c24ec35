/**
 * docs/security.md, checklist K for the token side: K1 (entropy), K2 (only digests
 * at rest), K4 (SQL-shaped input), K6 (short-lived access tokens), and the parts of
 * K3 (no credential echoed) and K5 (X-Forwarded-For never moves rate-limit keys
 * unless LATCHKEY_TRUST_PROXY names the proxy) that fit here; the full log and
 * database grep after every flow is Secrets.test.ts.
 */
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { basic } from "../helpers.js"
import {
  authorizeUrl,
  entropyBits,
  expectError,
  introspect,
  redeem,
  refresh,
  type SignedIn,
  tokenSet,
  untilThrottled,
  useSignedInStack
} from "./flows.js"
import { cb, post, read, type Stack, startStack, token } from "./harness.js"

let s: Stack
let alice: SignedIn
useSignedInStack((stack, signedIn) => {
  s = stack
  alice = signedIn
})

const sha256 = (value: string) => createHash("sha256").update(value).digest("base64url")

describe("K: tokens, storage and logging (docs/security.md, checklist K)", () => {
  it("K1: access tokens, refresh tokens, codes and generated App Secrets are unique 256-bit base64url values (> 128 bits by the Shannon heuristic)", async () => {
    const access: Array<string> = []
    const refreshTokens: Array<string> = []
    for (let batch = 0; batch < 10; batch++) {
      const sets = await Promise.all(
        Array.from({ length: 20 }, (_, i) => tokenSet(s, s.A, `k1-${batch}-${i}`))
      )
      for (const t of sets) {
        access.push(t.access)
        refreshTokens.push(t.refresh)
      }
    }
    const codes = await Promise.all(Array.from({ length: 50 }, () => alice.code()))
    const secrets = (await Promise.all(Array.from({ length: 30 }, () => s.client()))).map((c) => c.appSecret)
    for (const [name, values] of [
      ["access token", access],
      ["refresh token", refreshTokens],
      ["code", codes],
      ["App Secret", secrets]
    ] as const) {
      assert.strictEqual(new Set(values).size, values.length, `${name}s repeat`)
      for (const v of values) {
        // 43 base64url characters carry 256 bits; RFC 6749 A.17 VSCHAR holds for all of them
        assert.match(v, /^[A-Za-z0-9_-]{43}$/, name)
        assert.isAbove(entropyBits(v), 128, `${name} ${v}`)
      }
    }
    assert.strictEqual(new Set([...access, ...refreshTokens, ...codes, ...secrets]).size, 480)
  })

  it("K2: after a full flow the database files hold no token, code or secret, only their SHA-256 digests", async () => {
    const code = await alice.code()
    const exchanged = await read(await redeem(s, code))
    const refreshed = await read(await refresh(s, exchanged.body.refresh_token as string))
    const pw = await read(
      await token(s, { grant_type: "password", username: "alice", password: s.alice.password })
    )
    const raw = [
      code,
      exchanged.body.access_token,
      exchanged.body.refresh_token,
      refreshed.body.access_token,
      refreshed.body.refresh_token,
      pw.body.access_token,
      pw.body.refresh_token
    ] as Array<string>
    const files = [s.dbPath, `${s.dbPath}-wal`].filter(existsSync).map((f) => readFileSync(f))
    const bytes = Buffer.concat(files)
    for (const value of [...raw, s.A.appSecret, s.B.appSecret, s.alice.password]) {
      assert.strictEqual(bytes.indexOf(value), -1, "a raw credential is stored")
    }
    for (const value of raw) assert.notStrictEqual(bytes.indexOf(sha256(value)), -1, "a digest is missing")
  })

  it("K3: token-endpoint errors never echo the submitted secret, password, code, refresh token or open_id, and neither do the logs", async () => {
    const sentinel = "SENTINEL-K3-7731-"
    const sent = [
      `${sentinel}secret`,
      `${sentinel}password`,
      `${sentinel}code`,
      `${sentinel}refresh`,
      `${sentinel}open id`,
      `${sentinel}verifier`
    ]
    const answers = [
      await token(s, { grant_type: "client_credentials" }, basic(s.A.appKey, sent[0] as string)),
      await token(s, { grant_type: "password", username: "alice", password: sent[1] as string }),
      await token(s, { grant_type: "password", username: sent[1] as string, password: sent[1] as string }),
      await redeem(s, sent[2] as string),
      await refresh(s, sent[3] as string),
      await token(s, { grant_type: "client_credentials", open_id: sent[4] as string }),
      await redeem(s, await alice.code(), { code_verifier: sent[5] as string }),
      await token(s, { grant_type: sent[0] as string })
    ]
    for (const res of answers) {
      const text = await res.text()
      assert.isAtLeast(res.status, 400)
      for (const v of sent) assert.notInclude(text, v)
      assert.notInclude(text, "SENTINEL")
    }
    assert.notInclude(s.logs(), sentinel)
  })

  it("K4: SQL-shaped values in every parameter are ordinary 4xx (never 500) and leave no database error in the logs", async () => {
    const sql = [
      "' OR '1'='1",
      "'; DROP TABLE tokens;--",
      "1) OR (1=1",
      '" OR ""="',
      "x' UNION SELECT * FROM users--"
    ]
    for (const v of sql) {
      const results = [
        await token(s, { grant_type: "password", username: v, password: v }),
        await token(s, { grant_type: "authorization_code", code: v, redirect_uri: v }),
        await token(s, { grant_type: "authorization_code", code: v, redirect_uri: cb, code_verifier: v }),
        await token(s, { grant_type: "refresh_token", refresh_token: v, scope: v }),
        await token(s, { grant_type: v }),
        await token(s, { grant_type: "client_credentials" }, basic(v, v)),
        await fetch(
          `${s.base}/oauth2/oauth2/authorize?${new URLSearchParams({ client_id: v, redirect_uri: v })}`
        )
      ]
      for (const res of results) {
        assert.isAtLeast(res.status, 400, v)
        assert.isBelow(res.status, 500, v)
        await res.arrayBuffer()
      }
      // introspection and revocation answer an unknown token with 200 (RFC 7662 §2.2, RFC 7009 §2.2)
      const info = await post(
        s,
        "/oauth2/oauth2/introspect",
        { token: v, token_type_hint: v },
        { authorization: s.A.basic }
      )
      assert.deepStrictEqual(await info.json(), { active: false })
      const revoked = await post(s, "/oauth2/oauth2/revoke", { token: v }, { authorization: s.A.basic })
      assert.strictEqual(revoked.status, 200)
    }
    assert.notMatch(s.logs(), /"level":50/)
    assert.notMatch(s.logs(), /SqliteError|SQLITE_/)
    // the tables are intact
    assert.strictEqual(
      (await token(s, { grant_type: "password", username: "alice", password: s.alice.password })).status,
      200
    )
  })

  it("K6: every grant answers a numeric expires_in ≤ 3600 that matches the token's lifetime; a per-application lifetime is honoured", async () => {
    const { refresh: rt } = await tokenSet(s)
    const implicit = new URLSearchParams(
      new URL(await alice.authorize(authorizeUrl(s, { response_type: "token" }))).hash.slice(1)
    )
    assert.strictEqual(implicit.get("expires_in"), "3600")
    const bodies = [
      (await read(await token(s, { grant_type: "client_credentials" }))).body,
      (await read(await token(s, { grant_type: "password", username: "alice", password: s.alice.password })))
        .body,
      (await read(await redeem(s, await alice.code()))).body,
      (await read(await refresh(s, rt))).body
    ]
    for (const body of bodies) {
      assert.strictEqual(typeof body.expires_in, "number")
      assert.isAtMost(body.expires_in as number, 3600)
      const info = await introspect(s, body.access_token as string)
      // RFC 7519 §4.1.6: iat is not in the future; exp is at least expires_in after the issue instant
      assert.isAtMost((info.iat as number) * 1000, Date.now())
      assert.include(
        [body.expires_in, (body.expires_in as number) + 1],
        (info.exp as number) - (info.iat as number)
      )
    }
    const short = await s.client({ name: "Short access", accessTokenTtl: 600 })
    const r = await read(await token(s, { grant_type: "client_credentials" }, short))
    assert.strictEqual(r.body.expires_in, 600)
  })
})

describe("K5: X-Forwarded-* from a client that is not a named proxy changes nothing", () => {
  // Lockouts long enough that no pause between two requests of a spray on a loaded machine
  // outlasts one (a 1 s lockout made the count depend on timing)
  const throttle = {
    freeFailures: 1_000_000,
    addressFreeFailures: 3,
    baseLockout: 60,
    maxLockout: 60,
    window: 600
  }
  const stacks: Array<Stack> = []
  afterAll(async () => {
    for (const stack of stacks) await stack.close()
  })
  const start = async (trustProxy: string | false) => {
    const stack = await startStack({ throttle, trustProxy })
    stacks.push(stack)
    return stack
  }
  /** Failed client authentications (unknown App Keys) with the given X-Forwarded-For per attempt. */
  const spray = (stack: Stack, xff: (i: number) => string) =>
    untilThrottled(8, (i) =>
      post(
        stack,
        "/oauth2/oauth2/token",
        { grant_type: "client_credentials" },
        {
          authorization: basic(`k5-unknown-${i}`, "wrong"),
          "x-forwarded-for": xff(i)
        }
      )
    )

  it("K5: without LATCHKEY_TRUST_PROXY, or when it names another proxy, a rotating X-Forwarded-For does not move the per-address rate-limit key", async () => {
    for (const trustProxy of [false, "10.0.0.1"] as const) {
      const stack = await start(trustProxy)
      const answers = await spray(stack, (i) => `192.0.2.${i + 1}`)
      assert.strictEqual(answers.length, 5, `trustProxy ${trustProxy}`)
      expectError(answers.at(-1) as (typeof answers)[number], 429, "temporarily_unavailable")
      assert.notMatch(stack.logs(), /192\.0\.2\./)
    }
  })

  it("K5: when LATCHKEY_TRUST_PROXY names the proxy (127.0.0.1 here), the forwarded client address is the key", async () => {
    const stack = await start("127.0.0.1")
    const rotating = await spray(stack, (i) => `192.0.2.${i + 1}`)
    assert.strictEqual(rotating.length, 8)
    for (const r of rotating) expectError(r, 401, "invalid_client")
    const fixed = await spray(stack, () => "198.51.100.7")
    assert.strictEqual(fixed.length, 5)
    expectError(fixed.at(-1) as (typeof fixed)[number], 429, "temporarily_unavailable")
    assert.include(stack.logs(), "198.51.100.7")
  })

  it("K5: a spoofed X-Forwarded-Proto: https changes neither the issuer nor adds HSTS (plain-HTTP refusal is the TLS proxy's job: not a server feature)", async () => {
    const stack = await start(false)
    const headers = { "x-forwarded-proto": "https", "x-forwarded-host": "evil.example" }
    const meta = await fetch(`${stack.base}/.well-known/oauth-authorization-server`, { headers })
    const doc = (await meta.json()) as { issuer: string; token_endpoint: string }
    assert.strictEqual(doc.issuer, stack.base)
    assert.isTrue(doc.token_endpoint.startsWith(stack.base))
    const res = await post(
      stack,
      "/oauth2/oauth2/token",
      { grant_type: "client_credentials" },
      {
        authorization: stack.A.basic,
        ...headers
      }
    )
    assert.strictEqual(res.status, 200)
    assert.isNull(res.headers.get("strict-transport-security"))
  })
})
