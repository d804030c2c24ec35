/**
 * docs/security.md: catalogue F-1..F-9 (refresh_token grant) and checklist F1–F7:
 * binding to the client, rotation with reuse detection, scope narrowing that does
 * not stick, lifetimes and the retry policy (RFC 6749 §6, RFC 9700 §4.14).
 */
import { assert, describe, it } from "@effect/vitest"
import {
  authorizeUrl,
  createUser,
  deleteUser,
  expectError,
  introspect,
  redeem,
  refresh,
  type SignedIn,
  tokenSet,
  useSignedInStack
} from "./flows.js"
import { manualClock, post, read, type Stack, startStack, token } from "./harness.js"

let s: Stack
let alice: SignedIn
// The stack's time stands still until a lifetime test moves it (never by waiting)
const clock = manualClock()
useSignedInStack(
  (stack, signedIn) => {
    s = stack
    alice = signedIn
  },
  { clock: clock.clock }
)

/** A code-flow token set granted `read,write` by alice through the pages. */
const granted = async () => {
  const r = await read(await redeem(s, await alice.code()))
  assert.strictEqual(r.status, 200)
  assert.strictEqual(r.body.scope, "read,write")
  return { access: r.body.access_token as string, refresh: r.body.refresh_token as string }
}

/** Refresh and expect 200; returns the new pair and scope. */
const rotate = async (rt: string, extra: Record<string, string> = {}, stack = s) => {
  const r = await read(await refresh(stack, rt, extra))
  assert.strictEqual(r.status, 200, JSON.stringify(r.body))
  return {
    access: r.body.access_token as string,
    refresh: r.body.refresh_token as string,
    scope: r.body.scope as string
  }
}

describe("F: refresh_token grant", () => {
  it("F-1: RT0 → RT1, then RT0 again is 400 invalid_grant and RT1 and every access token of the family are revoked", async () => {
    const t0 = await granted()
    const t1 = await rotate(t0.refresh)
    expectError(await read(await refresh(s, t0.refresh)), 400, "invalid_grant")
    expectError(await read(await refresh(s, t1.refresh)), 400, "invalid_grant")
    for (const t of [t0.access, t1.access, t1.refresh]) {
      assert.deepStrictEqual(await introspect(s, t), { active: false })
    }
  })

  it("F-2: 20 concurrent refreshes with one refresh token (strict policy), 10 times: exactly one 200, the rest 400 invalid_grant, no 5xx, and no live family is left", async () => {
    for (let iteration = 0; iteration < 10; iteration++) {
      const { refresh: rt } = await tokenSet(s, s.A, `f-2-${iteration}`)
      const answers = await Promise.all(Array.from({ length: 20 }, async () => read(await refresh(s, rt))))
      const winners = answers.filter((r) => r.status === 200)
      assert.strictEqual(winners.length, 1, `iteration ${iteration}: ${answers.map((r) => r.status)}`)
      for (const r of answers) if (r.status !== 200) expectError(r, 400, "invalid_grant")
      // the losers were reuses: the family, the winner's new pair included, is revoked
      const winner = (winners[0] as (typeof winners)[number]).body
      expectError(await read(await refresh(s, winner.refresh_token as string)), 400, "invalid_grant")
      assert.deepStrictEqual(await introspect(s, winner.access_token as string), { active: false })
    }
  })

  it("F-3: A's refresh token with B's credentials is 400 invalid_grant (and A's token keeps working)", async () => {
    const { refresh: rt } = await granted()
    expectError(await read(await refresh(s, rt, {}, s.B)), 400, "invalid_grant")
    await rotate(rt)
  })

  it("F-4: granted read,write; refresh with scope=read,write,admin is 400 invalid_scope", async () => {
    const { refresh: rt } = await granted()
    expectError(await read(await refresh(s, rt, { scope: "read,write,admin" })), 400, "invalid_scope")
    // a refused narrowing does not use up the refresh token
    await rotate(rt)
  })

  it("F-5: refresh with scope=read gives an access token for read; the next refresh without scope is read,write again", async () => {
    const { refresh: rt } = await granted()
    const narrowed = await rotate(rt, { scope: "read" })
    assert.strictEqual(narrowed.scope, "read")
    assert.strictEqual((await introspect(s, narrowed.access)).scope, "read")
    assert.strictEqual((await introspect(s, narrowed.refresh)).scope, "read,write")
    const full = await rotate(narrowed.refresh)
    assert.strictEqual(full.scope, "read,write")
  })

  it("F-6: refresh with scope=write,read (reordered) is 200 with the same effect as read,write", async () => {
    const { refresh: rt } = await granted()
    assert.strictEqual((await rotate(rt, { scope: "write,read" })).scope, "read,write")
  })

  it("F-7: an access token presented as refresh_token is 400 invalid_grant", async () => {
    const { access } = await granted()
    expectError(await read(await refresh(s, access)), 400, "invalid_grant")
  })

  it("F-8: an expired refresh token, one whose user was deleted, and a revoked one are 400 invalid_grant (password change is not a feature)", async () => {
    const shortLived = await s.client({ name: "Short refresh", refreshTokenTtl: 1 })
    const expiring = await tokenSet(s, shortLived)
    // user deleted
    const dave = await createUser(s, "dave-f8", "dave-password-f8")
    const daves = await read(
      await token(s, { grant_type: "password", username: "dave-f8", password: "dave-password-f8" })
    )
    assert.strictEqual(daves.status, 200)
    assert.isTrue(await deleteUser(s, dave.userId))
    expectError(await read(await refresh(s, daves.body.refresh_token as string)), 400, "invalid_grant")
    // revoked (RFC 7009)
    const revoked = await granted()
    const r = await post(s, "/oauth2/oauth2/revoke", { token: revoked.refresh }, { authorization: s.A.basic })
    assert.strictEqual(r.status, 200)
    expectError(await read(await refresh(s, revoked.refresh)), 400, "invalid_grant")
    // expired: lifetime 1 s, used 2 s after its issue (a second past it, whatever the fraction)
    clock.advance(2000)
    expectError(await read(await refresh(s, expiring.refresh, {}, shortLived)), 400, "invalid_grant")
  })

  it("F-9: `refresh_token=` (empty) or missing is 400 invalid_request", async () => {
    expectError(
      await read(await token(s, { grant_type: "refresh_token", refresh_token: "" })),
      400,
      "invalid_request"
    )
    expectError(await read(await token(s, { grant_type: "refresh_token" })), 400, "invalid_request")
  })
})

describe("F1–F7: refresh token checklist (docs/security.md, checklist F)", () => {
  it("F1: the refresh token is bound to its client: A's token with B's credentials is 400 invalid_grant, every time", async () => {
    const { refresh: rt } = await granted()
    for (let i = 0; i < 3; i++) {
      expectError(await read(await refresh(s, rt, {}, s.B)), 400, "invalid_grant")
    }
  })

  it("F2: rotation with reuse detection: RT0 → RT1, RT0 again is invalid_grant, then RT1 is invalid_grant and the family's access tokens are inactive", async () => {
    const t0 = await granted()
    const t1 = await rotate(t0.refresh)
    assert.notStrictEqual(t1.refresh, t0.refresh)
    assert.strictEqual((await introspect(s, t1.access)).active, true)
    expectError(await read(await refresh(s, t0.refresh)), 400, "invalid_grant")
    expectError(await read(await refresh(s, t1.refresh)), 400, "invalid_grant")
    assert.deepStrictEqual(await introspect(s, t0.access), { active: false })
    assert.deepStrictEqual(await introspect(s, t1.access), { active: false })
  })

  it("F3: granted read,write: scope=read,write,admin is 400 invalid_scope, scope=read is 200 with scope read", async () => {
    const { refresh: rt } = await granted()
    expectError(await read(await refresh(s, rt, { scope: "read,write,admin" })), 400, "invalid_scope")
    assert.strictEqual((await rotate(rt, { scope: "read" })).scope, "read")
  })

  it("F4: the new refresh token keeps exactly the original scope even when the access token was narrowed", async () => {
    const { refresh: rt } = await granted()
    const narrowed = await rotate(rt, { scope: "write" })
    assert.strictEqual(narrowed.scope, "write")
    const again = await rotate(narrowed.refresh)
    assert.strictEqual(again.scope, "read,write")
    assert.strictEqual((await introspect(s, again.refresh)).scope, "read,write")
  })

  it("F5: refresh tokens expire (absolute lifetime per application; idle expiry and revocation on password change or logout are not features)", async () => {
    const shortLived = await s.client({ name: "Short refresh F5", refreshTokenTtl: 1 })
    const { refresh: rt } = await tokenSet(s, shortLived)
    assert.strictEqual((await introspect(s, rt, shortLived)).active, true)
    // a second past its lifetime of 1 s
    clock.advance(2000)
    assert.deepStrictEqual(await introspect(s, rt, shortLived), { active: false })
    expectError(await read(await refresh(s, rt, {}, shortLived)), 400, "invalid_grant")
  })

  it("F6: implicit issues no refresh token, nor does client_credentials without open_id", async () => {
    const location = await alice.authorize(authorizeUrl(s, { response_type: "token" }))
    const fragment = new URLSearchParams(new URL(location).hash.slice(1))
    assert.isString(fragment.get("access_token"))
    assert.isNull(fragment.get("refresh_token"))
    assert.isNull(new URL(location).searchParams.get("access_token"))
    const own = await read(await token(s, { grant_type: "client_credentials" }))
    assert.strictEqual(own.status, 200)
    assert.notProperty(own.body, "refresh_token")
  })

  it("F7: the default retry policy is strict (LATCHKEY_REFRESH_REUSE_GRACE=0): retrying a refresh revokes the family", async () => {
    const t0 = await granted()
    const t1 = await rotate(t0.refresh)
    expectError(await read(await refresh(s, t0.refresh)), 400, "invalid_grant")
    assert.deepStrictEqual(await introspect(s, t1.access), { active: false })
  })

  it("F7: with a grace window (LATCHKEY_REFRESH_REUSE_GRACE=1), a retry within it gets a new pair of the same family; after it, reuse revokes the family", async () => {
    const gClock = manualClock()
    const g = await startStack({ env: { LATCHKEY_REFRESH_REUSE_GRACE: "1" }, clock: gClock.clock })
    try {
      const t0 = await tokenSet(g, g.A, "f7-grace")
      const t1 = await rotate(t0.refresh, {}, g)
      const retry = await rotate(t0.refresh, {}, g)
      assert.notStrictEqual(retry.refresh, t1.refresh)
      assert.strictEqual((await introspect(g, t1.access, g.A)).active, true)
      // a second past the grace of 1 s after the rotation
      gClock.advance(2000)
      expectError(await read(await refresh(g, t0.refresh, {}, g.A)), 400, "invalid_grant")
      // one family: the reuse revoked both successors
      expectError(await read(await refresh(g, t1.refresh, {}, g.A)), 400, "invalid_grant")
      expectError(await read(await refresh(g, retry.refresh, {}, g.A)), 400, "invalid_grant")
    } finally {
      await g.close()
    }
  })
})
