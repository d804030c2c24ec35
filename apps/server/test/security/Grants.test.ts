/**
 * docs/security.md: catalogue G1–G8 (grant and parameter semantics) and C-1..C-10
 * (authorization_code), checklist C1–C6 and P1–P5 (PKCE). Codes come
 * from the real sign-in and consent pages.
 */
import { createHash, randomBytes } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { CodeStore, Digest } from "@latchkey/core"
import { Effect, Option } from "effect"
import * as Env from "../../src/Env.js"
import {
  createUser,
  deleteUser,
  entropyBits,
  expectError,
  introspect,
  redeem,
  refresh,
  type SignedIn,
  signIn,
  tokenSet,
  useSignedInStack
} from "./flows.js"
import {
  callsDuring,
  callsMatching,
  cb,
  manualClock,
  read,
  type Stack,
  startStack,
  token
} from "./harness.js"

let s: Stack
let alice: SignedIn
useSignedInStack((stack, signedIn) => {
  s = stack
  alice = signedIn
})

const verifierOf = (seed: string) => createHash("sha256").update(seed).digest("base64url").padEnd(64, "v")
const challengeOf = (verifier: string) => createHash("sha256").update(verifier).digest("base64url")
const s256 = (verifier: string) => ({ code_challenge: challengeOf(verifier), code_challenge_method: "S256" })

/** An authorize request answered with a redirect before any sign-in (validation errors). */
const authorizeError = async (params: Record<string, string>, client = s.A) => {
  const res = await fetch(
    `${s.base}/oauth2/oauth2/authorize?${new URLSearchParams({
      response_type: "code",
      client_id: client.appKey,
      redirect_uri: cb,
      state: "xyz",
      ...params
    })}`,
    { redirect: "manual" }
  )
  assert.strictEqual(res.status, 302)
  const location = new URL(res.headers.get("location") as string)
  assert.strictEqual(`${location.origin}${location.pathname}`, cb)
  assert.strictEqual(location.searchParams.get("state"), "xyz")
  assert.isNull(location.searchParams.get("code"))
  return location.searchParams
}

describe("G: grant and parameter semantics", () => {
  it("G1: a missing grant_type is 400 invalid_request", async () => {
    expectError(await read(await token(s, {})), 400, "invalid_request")
    expectError(await read(await token(s, "grant_type=")), 400, "invalid_request")
  })

  it("G2: grant_type urn:x:foo / PASSWORD / `password ` / implicit / __proto__ is 400 unsupported_grant_type (case-sensitive)", async () => {
    for (const g of [
      "urn:x:foo",
      "PASSWORD",
      "password ",
      " password",
      "implicit",
      "__proto__",
      "toString"
    ]) {
      expectError(await read(await token(s, { grant_type: g })), 400, "unsupported_grant_type")
    }
  })

  it("G3: grant_type=password&grant_type=client_credentials is 400 invalid_request (repeated)", async () => {
    expectError(
      await read(await token(s, "grant_type=password&grant_type=client_credentials")),
      400,
      "invalid_request"
    )
  })

  it("G4: code=X&code=Y is 400 invalid_request and neither code is consumed", async () => {
    const x = await alice.code()
    const y = await alice.code()
    expectError(
      await read(
        await token(
          s,
          `grant_type=authorization_code&code=${x}&code=${y}&redirect_uri=${encodeURIComponent(cb)}`
        )
      ),
      400,
      "invalid_request"
    )
    assert.strictEqual((await redeem(s, x)).status, 200)
    assert.strictEqual((await redeem(s, y)).status, 200)
  })

  it("G5: bracketed names (scope[]=, scope[a]=, code[$ne]=, __proto__[admin]=) are plain unknown names: ignored, never objects; no prototype pollution", async () => {
    const ignored = await read(
      await token(
        s,
        "grant_type=client_credentials&scope[]=admin&scope[a]=b&__proto__[admin]=1&__proto__=x&constructor[prototype][admin]=1"
      )
    )
    assert.strictEqual(ignored.status, 200)
    assert.strictEqual(ignored.body.scope, "read,write")
    assert.isUndefined(({} as Record<string, unknown>).admin)
    expectError(
      await read(
        await token(s, `grant_type=authorization_code&code[$ne]=1&redirect_uri=${encodeURIComponent(cb)}`)
      ),
      400,
      "invalid_request"
    )
    expectError(
      await read(await token(s, "grant_type=password&username[$gt]=&password[$gt]=")),
      400,
      "invalid_request"
    )
  })

  it("G6: `code=` (empty) counts as omitted: 400 invalid_request", async () => {
    expectError(
      await read(await token(s, { grant_type: "authorization_code", code: "", redirect_uri: cb })),
      400,
      "invalid_request"
    )
  })

  it("G7: unknown parameters (foo=bar, code_challenge at the token endpoint) are ignored; the flow succeeds", async () => {
    const code = await alice.code()
    const r = await read(await redeem(s, code, { foo: "bar", code_challenge: "x".repeat(43), state: "s" }))
    assert.strictEqual(r.status, 200, JSON.stringify(r.body))
    assert.strictEqual((await token(s, { grant_type: "client_credentials", foo: "bar" })).status, 200)
  })

  it("G8: a client not registered for password / client_credentials / authorization_code / refresh_token is 400 unauthorized_client", async () => {
    const implicitOnly = await s.client({ name: "Implicit only", grantTypes: ["implicit"] })
    for (const body of [
      { grant_type: "password", username: "alice", password: s.alice.password },
      { grant_type: "client_credentials" },
      { grant_type: "authorization_code", code: "x", redirect_uri: cb },
      { grant_type: "refresh_token", refresh_token: "x" }
    ]) {
      expectError(await read(await token(s, body, implicitOnly)), 400, "unauthorized_client")
    }
  })
})

describe("C: authorization_code grant", () => {
  it("C-1: a code redeemed twice: the second is 400 invalid_grant and every token from the first (and refreshed from it) is revoked", async () => {
    const code = await alice.code()
    const first = await read(await redeem(s, code))
    assert.strictEqual(first.status, 200)
    const refreshed = await read(await refresh(s, first.body.refresh_token as string))
    assert.strictEqual(refreshed.status, 200)
    expectError(await read(await redeem(s, code)), 400, "invalid_grant")
    for (const t of [first.body.access_token, refreshed.body.access_token, refreshed.body.refresh_token]) {
      assert.deepStrictEqual(await introspect(s, t as string), { active: false })
    }
    expectError(await read(await refresh(s, refreshed.body.refresh_token as string)), 400, "invalid_grant")
  })

  it("C-2: 20 concurrent redemptions of one code, 20 times: exactly one 200 each, the rest 400 invalid_grant, never 5xx; the winner's tokens are then revoked", async () => {
    // In-process the SQLite adapter is synchronous, so requests interleave only between
    // awaits; the two-OS-process race is packages/storage-sqlite/test/MultiProcess.test.ts.
    for (let iteration = 0; iteration < 20; iteration++) {
      const code = await alice.code()
      const answers = await Promise.all(Array.from({ length: 20 }, async () => read(await redeem(s, code))))
      const winners = answers.filter((r) => r.status === 200)
      assert.strictEqual(winners.length, 1, `iteration ${iteration}: ${answers.map((r) => r.status)}`)
      for (const r of answers) if (r.status !== 200) expectError(r, 400, "invalid_grant")
      const winner = winners[0] as (typeof winners)[number]
      assert.deepStrictEqual(await introspect(s, winner.body.access_token as string), { active: false })
    }
  })

  it("C-3: a code of A redeemed with B's credentials is 400 invalid_grant (not 200, not 401)", async () => {
    const code = await alice.code()
    expectError(await read(await redeem(s, code, {}, s.B)), 400, "invalid_grant")
  })

  it("C-4: redirect_uri …/cb/, …/CB, …/cb?x=1 or another registered-looking URI is 400 invalid_grant; omitted is 400 invalid_request", async () => {
    const code = await alice.code()
    for (const uri of [`${cb}/`, cb.replace("cb", "CB"), `${cb}?x=1`, `${cb}#`, "https://app.example/c%62"]) {
      expectError(await read(await redeem(s, code, { redirect_uri: uri })), 400, "invalid_grant")
    }
    expectError(
      await read(await token(s, { grant_type: "authorization_code", code })),
      400,
      "invalid_request"
    )
  })

  it("C-5: a code used after its lifetime + 1 s is 400 invalid_grant (LATCHKEY_CODE_TTL=1)", async () => {
    // the stack's time stands still until moved: the code is used its lifetime + 1 s after its issue
    const clock = manualClock()
    const short = await startStack({ env: { LATCHKEY_CODE_TTL: "1" }, clock: clock.clock })
    try {
      const code = await (await signIn(short)).code()
      clock.advance(2000)
      expectError(await read(await redeem(short, code)), 400, "invalid_grant")
    } finally {
      await short.close()
    }
  })

  it("C-6: garbage codes (1 char, 10 KB, SQL, NUL, emoji) are 400 with no database error, and cost no more than an unknown code: invalid_grant after one code lookup, or invalid_request, when oversized or with control characters, before any", async () => {
    const cases: Array<[string, string]> = [
      ["x", "invalid_grant"],
      ["' OR '1'='1", "invalid_grant"],
      ['"; DROP TABLE tokens;--', "invalid_grant"],
      ["😀".repeat(20), "invalid_grant"],
      ["a".repeat(10 * 1024), "invalid_request"],
      ["abc\u0000def", "invalid_request"]
    ]
    const unknown = await callsDuring(s, async () =>
      read(await redeem(s, randomBytes(32).toString("base64url")))
    )
    expectError(unknown.value, 400, "invalid_grant")
    assert.strictEqual(unknown.calls["CodeStore.find"], 1)
    const { "CodeStore.find": _find, "Digest.sha256": _sha256, ...clientAuthOnly } = unknown.calls
    for (const [code, error] of cases) {
      const r = await callsDuring(s, async () => read(await redeem(s, code)))
      expectError(r.value, 400, error)
      assert.deepStrictEqual(
        r.calls,
        error === "invalid_grant" ? unknown.calls : clientAuthOnly,
        code.slice(0, 20)
      )
    }
    // the tables are intact
    assert.strictEqual((await redeem(s, await alice.code())).status, 200)
    assert.notMatch(s.logs(), /"level":50/)
  })

  it("C-7: an access token or a refresh token presented as `code` is 400 invalid_grant (lookups namespaced by type)", async () => {
    const { access, refresh: rt } = await tokenSet(s)
    expectError(await read(await redeem(s, access)), 400, "invalid_grant")
    expectError(await read(await redeem(s, rt)), 400, "invalid_grant")
  })

  it("C-8: PKCE: a missing or wrong verifier is 400 invalid_grant; a 42- or 129-character verifier or one with + / = is 400 invalid_request", async () => {
    const verifier = verifierOf("c-8")
    const code = await alice.code(s256(verifier))
    expectError(await read(await redeem(s, code)), 400, "invalid_grant")
    expectError(
      await read(await redeem(s, code, { code_verifier: verifierOf("other") })),
      400,
      "invalid_grant"
    )
    for (const bad of [
      "a".repeat(42),
      "a".repeat(129),
      `${"a".repeat(42)}+`,
      `${"a".repeat(42)}/`,
      `${"a".repeat(42)}=`
    ]) {
      expectError(await read(await redeem(s, code, { code_verifier: bad })), 400, "invalid_request")
    }
    assert.strictEqual((await redeem(s, code, { code_verifier: verifier })).status, 200)
  })

  it("C-9: PKCE downgrade: no challenge at authorize, a code_verifier at the token endpoint is 400 invalid_grant", async () => {
    const code = await alice.code()
    expectError(await read(await redeem(s, code, { code_verifier: verifierOf("c-9") })), 400, "invalid_grant")
  })

  it("C-10: a code issued before its user was deleted is 400 invalid_grant (deleting the user also drops the consent; revoking a consent alone is not a feature)", async () => {
    const bob = await createUser(s, "bob-c10", "bob-password-c10")
    const code = await (await signIn(s, { username: "bob-c10", password: "bob-password-c10" })).code()
    assert.isTrue(await deleteUser(s, bob.userId))
    expectError(await read(await redeem(s, code)), 400, "invalid_grant")
  })
})

describe("C1–C6: authorization code checklist (docs/security.md, checklist C)", () => {
  it("C1: a code is single use: the second redemption is 400 invalid_grant, the first access token introspects inactive and the first refresh token is invalid_grant", async () => {
    const code = await alice.code()
    const first = await read(await redeem(s, code))
    assert.strictEqual(first.status, 200)
    expectError(await read(await redeem(s, code)), 400, "invalid_grant")
    assert.deepStrictEqual(await introspect(s, first.body.access_token as string), { active: false })
    expectError(await read(await refresh(s, first.body.refresh_token as string)), 400, "invalid_grant")
  })

  it("C2: codes are short-lived: 60 s by default, never configurable past 600 s", async () => {
    const code = await alice.code()
    const stored = await s.runtime.runPromise(
      Effect.flatMap(CodeStore.CodeStore, (codes) => Effect.flatMap(Digest.sha256(code), codes.find))
    )
    assert.isTrue(Option.isSome(stored))
    const c = Option.getOrThrow(stored)
    assert.strictEqual(c.expiresAt - c.issuedAt, 60)
    assert.throws(() => Env.read({ LATCHKEY_CODE_TTL: "601" }), Env.EnvError)
  })

  it("C3: a code is bound to its client: A's code with B's valid credentials is 400 invalid_grant", async () => {
    const code = await alice.code()
    const r = await read(await redeem(s, code, {}, s.B))
    expectError(r, 400, "invalid_grant")
  })

  it("C4: redirect_uri must be identical at the token endpoint: …/cb/ is 400 invalid_grant, omitted is 400 invalid_request", async () => {
    const code = await alice.code()
    expectError(await read(await redeem(s, code, { redirect_uri: `${cb}/` })), 400, "invalid_grant")
    expectError(
      await read(await token(s, { grant_type: "authorization_code", code })),
      400,
      "invalid_request"
    )
    assert.strictEqual((await redeem(s, code)).status, 200)
  })

  it("C5: 1,000 codes are unique, 43-character base64url, share no prefix and carry > 96 bits by the Shannon heuristic", async () => {
    const codes: Array<string> = []
    for (let batch = 0; batch < 50; batch++) {
      codes.push(...(await Promise.all(Array.from({ length: 20 }, () => alice.code()))))
    }
    assert.strictEqual(new Set(codes).size, 1000)
    for (const c of codes) {
      assert.match(c, /^[A-Za-z0-9_-]{43}$/)
      assert.isAbove(entropyBits(c), 96)
    }
    // no timestamp or counter: no common prefix across the sample
    const first = codes.map((c) => c.slice(0, 2))
    assert.isAbove(new Set(first).size, 500)
  })

  it("C6: 500 random codes are cheap 400 invalid_grant with no database write: one code lookup each, and the SQLite files are byte-identical", async () => {
    const files = () =>
      [s.dbPath, `${s.dbPath}-wal`].filter(existsSync).map((f) => readFileSync(f).toString("base64"))
    const one = await callsDuring(s, async () => read(await redeem(s, randomBytes(32).toString("base64url"))))
    const before = files()
    const all = await callsDuring(s, async () => {
      for (let batch = 0; batch < 20; batch++) {
        const answers = await Promise.all(
          Array.from({ length: 25 }, async () => read(await redeem(s, randomBytes(32).toString("base64url"))))
        )
        for (const r of answers) expectError(r, 400, "invalid_grant")
      }
    })
    assert.deepStrictEqual(
      all.calls,
      Object.fromEntries(Object.entries(one.calls).map(([k, n]) => [k, 500 * n]))
    )
    assert.strictEqual(one.calls["CodeStore.find"], 1)
    // only digests and reads: no store call but a find
    assert.deepStrictEqual(callsMatching(one.calls, /^(?!Digest\.|\w+Store\.find)/), [])
    assert.deepStrictEqual(files(), before)
  })
})

describe("P: PKCE (docs/security.md, checklist P)", () => {
  it("P1: with an S256 challenge, no verifier and a wrong one are 400 invalid_grant, the right one 200; an application registered as requiring PKCE cannot skip it", async () => {
    const verifier = verifierOf("p1")
    const code = await alice.code(s256(verifier))
    expectError(await read(await redeem(s, code)), 400, "invalid_grant")
    expectError(
      await read(await redeem(s, code, { code_verifier: verifierOf("p1-wrong") })),
      400,
      "invalid_grant"
    )
    assert.strictEqual((await redeem(s, code, { code_verifier: verifier })).status, 200)
    // the nearest thing to a public client: an application registered with --require-pkce
    const strict = await s.client({ name: "Requires PKCE", requirePkce: true })
    const refused = await authorizeError({}, strict)
    assert.strictEqual(refused.get("error"), "invalid_request")
    const strictCode = await alice.code(s256(verifier), strict)
    expectError(await read(await redeem(s, strictCode, {}, strict)), 400, "invalid_grant")
    assert.strictEqual((await redeem(s, strictCode, { code_verifier: verifier }, strict)).status, 200)
  })

  it("P2: PKCE downgrade (no challenge at authorize, a verifier at the token endpoint) is 400 invalid_grant", async () => {
    const code = await alice.code()
    expectError(await read(await redeem(s, code, { code_verifier: verifierOf("p2") })), 400, "invalid_grant")
  })

  it("P3: code_challenge_method=plain (not configured), a challenge without method (means plain), and S512 are redirect errors invalid_request with state", async () => {
    const challenge = challengeOf(verifierOf("p3"))
    for (const params of [
      { code_challenge: challenge, code_challenge_method: "plain" },
      { code_challenge: challenge },
      { code_challenge: challenge, code_challenge_method: "S512" },
      { code_challenge: challenge, code_challenge_method: "s256" },
      { code_challenge_method: "S256" }
    ]) {
      const error = await authorizeError(params)
      assert.strictEqual(error.get("error"), "invalid_request", JSON.stringify(params))
      assert.strictEqual(error.get("iss"), s.base)
    }
  })

  it("P4: verifier syntax is 43–128 of [A-Za-z0-9-._~]: 42, 129 and + / = are 400 invalid_request; a malformed challenge is a redirect error", async () => {
    const verifier = "a".repeat(128)
    const code = await alice.code(s256(verifier))
    for (const bad of [
      "a".repeat(42),
      "a".repeat(129),
      `${"a".repeat(43)}+`,
      `${"a".repeat(43)}/`,
      `${"a".repeat(43)}=`
    ]) {
      expectError(await read(await redeem(s, code, { code_verifier: bad })), 400, "invalid_request")
    }
    assert.strictEqual((await redeem(s, code, { code_verifier: verifier })).status, 200)
    for (const challenge of ["a".repeat(42), "a".repeat(129), `${"a".repeat(42)}+`]) {
      const error = await authorizeError({ code_challenge: challenge, code_challenge_method: "S256" })
      assert.strictEqual(error.get("error"), "invalid_request")
    }
  })

  it("P5: the challenge is stored with each code: a constant challenge still binds every code to its verifier, once (flagging a reused challenge, optional, is not implemented)", async () => {
    const verifier = verifierOf("p5")
    const codes = [
      await alice.code(s256(verifier)),
      await alice.code(s256(verifier)),
      await alice.code(s256(verifier))
    ]
    for (const code of codes) {
      expectError(
        await read(await redeem(s, code, { code_verifier: verifierOf("p5-other") })),
        400,
        "invalid_grant"
      )
      assert.strictEqual((await redeem(s, code, { code_verifier: verifier })).status, 200)
      expectError(await read(await redeem(s, code, { code_verifier: verifier })), 400, "invalid_grant")
    }
  })
})
