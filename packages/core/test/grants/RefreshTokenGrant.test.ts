import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Effect, Either, FastCheck as fc, Option, TestClock } from "effect"
import * as Admin from "../../src/admin/Admin.js"
import * as Scope from "../../src/model/Scope.js"
import { sha256 } from "../../src/services/Digest.js"
import { TokenStore } from "../../src/storage/TokenStore.js"
import { UserStore } from "../../src/storage/UserStore.js"
import { cb, issueCode, newApp, newUser, post, TestLayer, token } from "../fixtures.js"

const refresh = (rt: string, basic: string, extra: Record<string, string> = {}) =>
  token({ grant_type: "refresh_token", refresh_token: rt, ...extra }, basic)

const active = (t: string, basic: string) =>
  Effect.map(post("/oauth2/oauth2/introspect", { token: t }, basic), (r) => r.json?.active === true)

/** A signed-in user's token set with the given scope, from the code flow. */
const grant = (scope = "read,write", appScope = "read,write") =>
  Effect.gen(function* () {
    const { app, basic } = yield* newApp({ scope: appScope })
    const { user } = yield* newUser()
    const code = yield* issueCode(app.appKey, user.userId, { scope })
    const res = yield* token({ grant_type: "authorization_code", code, redirect_uri: cb }, basic)
    return { app, basic, access: res.json?.access_token as string, rt: res.json?.refresh_token as string }
  })

describe("refresh_token grant", () => {
  it.effect("rotates: a new refresh token each time, and the old one stops working", () =>
    Effect.gen(function* () {
      const { basic, rt } = yield* grant()
      const r1 = yield* refresh(rt, basic)
      assert.strictEqual(r1.status, 200)
      assert.notStrictEqual(r1.json?.refresh_token, rt)
      assert.isFalse(yield* active(rt, basic))
      assert.isTrue(yield* active(r1.json?.refresh_token as string, basic))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("reusing a rotated refresh token is invalid_grant and revokes the whole family", () =>
    Effect.gen(function* () {
      const { basic, rt, access } = yield* grant()
      const r1 = yield* refresh(rt, basic)
      const reuse = yield* refresh(rt, basic)
      assert.strictEqual(reuse.status, 400)
      assert.strictEqual(reuse.json?.error, "invalid_grant")
      for (const t of [access, r1.json?.access_token, r1.json?.refresh_token])
        assert.isFalse(yield* active(t as string, basic))
      assert.strictEqual(
        (yield* refresh(r1.json?.refresh_token as string, basic)).json?.error,
        "invalid_grant"
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "narrowing: the access token carries the narrowed scope, the new refresh token the original",
    () =>
      Effect.gen(function* () {
        const { basic, rt } = yield* grant()
        const narrowed = yield* refresh(rt, basic, { scope: "read" })
        assert.strictEqual(narrowed.json?.scope, "read")
        const full = yield* refresh(narrowed.json?.refresh_token as string, basic)
        assert.strictEqual(full.json?.scope, "read,write")
        const reordered = yield* refresh(full.json?.refresh_token as string, basic, { scope: "write read" })
        assert.strictEqual(reordered.json?.scope, "read,write")
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a scope taken from the application's registration is no longer refreshed, and refused by name",
    () =>
      Effect.gen(function* () {
        const { app, basic, rt } = yield* grant()
        yield* Admin.updateApplication(app.appKey, { scope: "read" })
        const asked = yield* refresh(rt, basic, { scope: "write" })
        assert.strictEqual(asked.json?.error, "invalid_scope")
        const narrowed = yield* refresh(rt, basic)
        assert.strictEqual(narrowed.status, 200)
        assert.strictEqual(narrowed.json?.scope, "read")
        // The new refresh token carries only the registered part of the grant, even once re-registered
        yield* Admin.updateApplication(app.appKey, { scope: "read,write" })
        const later = yield* refresh(narrowed.json?.refresh_token as string, basic)
        assert.strictEqual(later.json?.scope, "read")
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a scope wider than the original grant is invalid_scope and does not rotate the token", () =>
    Effect.gen(function* () {
      const { basic, rt } = yield* grant("read")
      const wide = yield* refresh(rt, basic, { scope: "read,write" })
      assert.strictEqual(wide.json?.error, "invalid_scope")
      assert.strictEqual((yield* refresh(rt, basic)).status, 200)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("another application's refresh token is invalid_grant and stays usable by its owner", () =>
    Effect.gen(function* () {
      const { basic, rt } = yield* grant()
      const other = yield* newApp()
      assert.strictEqual((yield* refresh(rt, other.basic)).json?.error, "invalid_grant")
      assert.strictEqual((yield* refresh(rt, basic)).status, 200)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an access token presented as a refresh token is invalid_grant", () =>
    Effect.gen(function* () {
      const { basic, access } = yield* grant()
      assert.strictEqual((yield* refresh(access, basic)).json?.error, "invalid_grant")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an empty or missing refresh_token is invalid_request", () =>
    Effect.gen(function* () {
      const { basic } = yield* grant()
      assert.strictEqual(
        (yield* token({ grant_type: "refresh_token", refresh_token: "" }, basic)).json?.error,
        "invalid_request"
      )
      assert.strictEqual(
        (yield* token({ grant_type: "refresh_token" }, basic)).json?.error,
        "invalid_request"
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a refresh token expires after its lifetime (30 days by default)", () =>
    Effect.gen(function* () {
      const { basic, rt } = yield* grant()
      yield* TestClock.adjust("30 days")
      assert.strictEqual((yield* refresh(rt, basic)).json?.error, "invalid_grant")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "with a grace window, a retry within it gets a new pair of the same family instead of revoking",
    () =>
      Effect.gen(function* () {
        const { basic, rt } = yield* grant()
        const r1 = yield* refresh(rt, basic)
        yield* TestClock.adjust("5 seconds")
        const retry = yield* refresh(rt, basic)
        assert.strictEqual(retry.status, 200)
        assert.isTrue(yield* active(r1.json?.refresh_token as string, basic))
        yield* TestClock.adjust("10 seconds")
        assert.strictEqual((yield* refresh(rt, basic)).json?.error, "invalid_grant")
        assert.isFalse(yield* active(retry.json?.refresh_token as string, basic))
      }).pipe(Effect.provide(TestLayer({ refreshReuseGrace: 10 })))
  )

  it.effect("without a grace window a retry in the same second still revokes the family", () =>
    Effect.gen(function* () {
      const { basic, rt } = yield* grant()
      const r1 = yield* refresh(rt, basic)
      assert.strictEqual((yield* refresh(rt, basic)).json?.error, "invalid_grant")
      assert.isFalse(yield* active(r1.json?.refresh_token as string, basic))
    }).pipe(Effect.provide(TestLayer()))
  )

  const tokenArb = Arbitrary.make(Scope.ScopeToken)
  const setArb = fc.uniqueArray(tokenArb, { minLength: 1, maxLength: 6 }).map(Scope.make)

  it("accepts exactly the subsets of the original scope; tokens never carry more; the refresh token keeps the original", async () => {
    await fc.assert(
      fc.asyncProperty(setArb, fc.array(tokenArb, { maxLength: 8 }), async (original, extra) => {
        const program = Effect.gen(function* () {
          const appScope = Scope.format(Scope.union(original, Scope.make(extra)))
          const { basic, rt } = yield* grant(Scope.format(original), appScope)
          const requested = Either.getOrThrow(Scope.parse([...extra, ...original.slice(0, 1)].join(",")))
          const res = yield* refresh(rt, basic, { scope: Scope.format(requested) })
          if (Scope.isSubset(requested, original)) {
            assert.strictEqual(res.status, 200)
            assert.strictEqual(res.json?.scope, Scope.format(requested))
            const next = yield* refresh(res.json?.refresh_token as string, basic)
            assert.strictEqual(next.json?.scope, Scope.format(original))
          } else {
            assert.strictEqual(res.json?.error, "invalid_scope")
          }
        })
        await Effect.runPromise(program.pipe(Effect.provide(TestLayer())))
      }),
      { numRuns: 60 }
    )
  })

  it("a rotated refresh token never works again, whatever happens after, and its reuse revokes the family", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.nat({ max: 5 }), async (rotations, pick) => {
        const program = Effect.gen(function* () {
          const { basic, rt } = yield* grant()
          const chain = [rt]
          for (let i = 0; i < rotations; i++) {
            const r = yield* refresh(chain[chain.length - 1] as string, basic)
            assert.strictEqual(r.status, 200)
            chain.push(r.json?.refresh_token as string)
          }
          const retired = chain[Math.min(pick, chain.length - 2)] as string
          assert.strictEqual((yield* refresh(retired, basic)).json?.error, "invalid_grant")
          for (const t of chain) assert.isFalse(yield* active(t, basic))
        })
        await Effect.runPromise(program.pipe(Effect.provide(TestLayer())))
      }),
      { numRuns: 40 }
    )
  })

  it.effect("concurrent refreshes with one token: exactly one succeeds", () =>
    Effect.gen(function* () {
      const { basic, rt } = yield* grant()
      const results = yield* Effect.all(
        Array.from({ length: 20 }, () => refresh(rt, basic)),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(results.filter((r) => r.status === 200).length, 1)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a refresh token of a disabled user is invalid_grant and is not rotated", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp()
      const { user } = yield* newUser()
      const code = yield* issueCode(app.appKey, user.userId)
      const rt = (yield* token({ grant_type: "authorization_code", code, redirect_uri: cb }, basic)).json
        ?.refresh_token as string
      // the account as a store sees it once disabled, tokens left unrevoked: the grant's own check
      const users = yield* UserStore
      const refused = yield* refresh(rt, basic).pipe(
        Effect.provideService(UserStore, {
          ...users,
          findById: (id) =>
            Effect.map(
              users.findById(id),
              Option.map((u) => ({ ...u, disabledAt: 1 }))
            )
        })
      )
      assert.deepStrictEqual([refused.status, refused.json?.error], [400, "invalid_grant"])
      assert.isTrue(yield* active(rt, basic), "refused, not rotated")
      yield* Admin.disableUser(user.userId)
      assert.strictEqual((yield* refresh(rt, basic)).json?.error, "invalid_grant")
      yield* Admin.enableUser(user.userId)
      assert.strictEqual((yield* refresh(rt, basic)).json?.error, "invalid_grant", "disabling revoked it")
    }).pipe(Effect.provide(TestLayer()))
  )

  for (const change of ["disabled", "deleted"] as const) {
    it.effect(
      `a user ${change} between the grant's user check and the rotation: invalid_grant and no token issued (D13)`,
      () =>
        Effect.gen(function* () {
          const { app, basic, rt } = yield* grant()
          const tokens = yield* TokenStore
          const users = yield* UserStore
          const found = yield* tokens.find("refresh", yield* sha256(rt))
          const userId = Option.getOrThrow(found).userId as string
          // The change commits after the grant read the user enabled and before its write
          const racing = {
            ...tokens,
            rotate: (...args: Parameters<typeof tokens.rotate>) =>
              Effect.zipRight(
                change === "disabled" ? users.setDisabled(userId, true, 1) : users.remove(userId, 1),
                tokens.rotate(...args)
              )
          }
          const r = yield* refresh(rt, basic).pipe(Effect.provideService(TokenStore, racing))
          assert.deepStrictEqual([r.status, r.json?.error], [400, "invalid_grant"])
          assert.strictEqual(yield* tokens.revokeSubject({ appKey: app.appKey, userId }, 0), 0)
        }).pipe(Effect.provide(TestLayer()))
    )
  }
})
