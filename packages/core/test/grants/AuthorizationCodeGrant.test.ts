import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, TestClock } from "effect"
import * as Admin from "../../src/admin/Admin.js"
import * as Pkce from "../../src/model/Pkce.js"
import { CodeStore } from "../../src/storage/CodeStore.js"
import { TokenStore } from "../../src/storage/TokenStore.js"
import { UserStore } from "../../src/storage/UserStore.js"
import { cb, issueCode, newApp, newUser, post, TestLayer, token } from "../fixtures.js"

const exchange = (code: string, basic: string, extra: Record<string, string> = {}) =>
  token({ grant_type: "authorization_code", code, redirect_uri: cb, ...extra }, basic)

const introspect = (value: string, basic: string) =>
  post("/oauth2/oauth2/introspect", { token: value }, basic)

describe("authorization_code grant", () => {
  it.effect(
    "exchanges a code once for an access and refresh token carrying the granted scope and open_id",
    () =>
      Effect.gen(function* () {
        const { app, basic } = yield* newApp()
        const { user } = yield* newUser()
        const code = yield* issueCode(app.appKey, user.userId, { scope: "read" })
        const res = yield* exchange(code, basic)
        assert.strictEqual(res.status, 200)
        assert.strictEqual(res.headers["cache-control"], "no-store")
        assert.strictEqual(res.headers.pragma, "no-cache")
        assert.strictEqual(res.json?.token_type, "Bearer")
        assert.strictEqual(res.json?.scope, "read")
        assert.strictEqual(res.json?.expires_in, 3600)
        assert.isString(res.json?.refresh_token)
        assert.isString(res.json?.open_id)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a replayed code is invalid_grant and revokes the tokens issued from it and their descendants",
    () =>
      Effect.gen(function* () {
        const { app, basic } = yield* newApp()
        const { user } = yield* newUser()
        const code = yield* issueCode(app.appKey, user.userId)
        const first = yield* exchange(code, basic)
        const refreshed = yield* token(
          { grant_type: "refresh_token", refresh_token: first.json?.refresh_token as string },
          basic
        )
        assert.strictEqual(refreshed.status, 200)
        const replay = yield* exchange(code, basic)
        assert.strictEqual(replay.status, 400)
        assert.strictEqual(replay.json?.error, "invalid_grant")
        for (const t of [
          first.json?.access_token,
          refreshed.json?.access_token,
          refreshed.json?.refresh_token
        ]) {
          assert.deepStrictEqual((yield* introspect(t as string, basic)).json, { active: false })
        }
        const again = yield* token(
          { grant_type: "refresh_token", refresh_token: refreshed.json?.refresh_token as string },
          basic
        )
        assert.strictEqual(again.json?.error, "invalid_grant")
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a code is bound to its client: another application's credentials get invalid_grant", () =>
    Effect.gen(function* () {
      const a = yield* newApp()
      const b = yield* newApp()
      const { user } = yield* newUser()
      const code = yield* issueCode(a.app.appKey, user.userId)
      const res = yield* exchange(code, b.basic)
      assert.strictEqual(res.status, 400)
      assert.strictEqual(res.json?.error, "invalid_grant")
      assert.strictEqual((yield* exchange(code, a.basic)).status, 200)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("redirect_uri must equal the one of the authorization request", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp()
      const { user } = yield* newUser()
      const code = yield* issueCode(app.appKey, user.userId)
      assert.strictEqual(
        (yield* exchange(code, basic, { redirect_uri: `${cb}/` })).json?.error,
        "invalid_grant"
      )
      const missing = yield* token({ grant_type: "authorization_code", code }, basic)
      assert.strictEqual(missing.json?.error, "invalid_request")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a code expires after the code lifetime (60 s by default)", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp()
      const { user } = yield* newUser()
      const code = yield* issueCode(app.appKey, user.userId)
      yield* TestClock.adjust("61 seconds")
      assert.strictEqual((yield* exchange(code, basic)).json?.error, "invalid_grant")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an unknown code is invalid_grant; a missing code is invalid_request", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      assert.strictEqual((yield* exchange("nope", basic)).json?.error, "invalid_grant")
      assert.strictEqual(
        (yield* token({ grant_type: "authorization_code", redirect_uri: cb }, basic)).json?.error,
        "invalid_request"
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an access token or refresh token presented as a code is invalid_grant (no type confusion)", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp()
      const { user } = yield* newUser()
      const first = yield* exchange(yield* issueCode(app.appKey, user.userId), basic)
      for (const t of [first.json?.access_token, first.json?.refresh_token]) {
        assert.strictEqual((yield* exchange(t as string, basic)).json?.error, "invalid_grant")
      }
    }).pipe(Effect.provide(TestLayer()))
  )

  describe("PKCE", () => {
    const verifier = "v".repeat(43) + "-._~0123456789"

    it.effect("S256: the right verifier succeeds; missing or wrong verifiers are invalid_grant", () =>
      Effect.gen(function* () {
        const { app, basic } = yield* newApp()
        const { user } = yield* newUser()
        const challenge = yield* Pkce.s256(verifier)
        const withPkce = { code_challenge: challenge, code_challenge_method: "S256" }
        const c1 = yield* issueCode(app.appKey, user.userId, withPkce)
        assert.strictEqual((yield* exchange(c1, basic)).json?.error, "invalid_grant")
        assert.strictEqual(
          (yield* exchange(c1, basic, { code_verifier: "w".repeat(43) })).json?.error,
          "invalid_grant"
        )
        assert.strictEqual((yield* exchange(c1, basic, { code_verifier: verifier })).status, 200)
      }).pipe(Effect.provide(TestLayer()))
    )

    it.effect("a verifier for a code issued without a challenge is invalid_grant (no downgrade)", () =>
      Effect.gen(function* () {
        const { app, basic } = yield* newApp()
        const { user } = yield* newUser()
        const code = yield* issueCode(app.appKey, user.userId)
        assert.strictEqual(
          (yield* exchange(code, basic, { code_verifier: verifier })).json?.error,
          "invalid_grant"
        )
      }).pipe(Effect.provide(TestLayer()))
    )

    it.effect("verifiers of 42 or 129 characters or with + / = are invalid_request", () =>
      Effect.gen(function* () {
        const { app, basic } = yield* newApp()
        const { user } = yield* newUser()
        const code = yield* issueCode(app.appKey, user.userId, {
          code_challenge: yield* Pkce.s256(verifier),
          code_challenge_method: "S256"
        })
        for (const bad of ["a".repeat(42), "a".repeat(129), `${"a".repeat(43)}+/=`]) {
          assert.strictEqual(
            (yield* exchange(code, basic, { code_verifier: bad })).json?.error,
            "invalid_request"
          )
        }
      }).pipe(Effect.provide(TestLayer()))
    )

    it("a verifier matches its own S256 challenge and no other verifier's", async () => {
      const verifierArb = fc.stringMatching(/^[A-Za-z0-9\-._~]{43,128}$/)
      await fc.assert(
        fc.asyncProperty(verifierArb, verifierArb, async (v, w) => {
          const c = await Effect.runPromise(Pkce.s256(v))
          assert.isTrue(await Effect.runPromise(Pkce.verify(v, c, "S256")))
          if (v !== w) assert.isFalse(await Effect.runPromise(Pkce.verify(w, c, "S256")))
        }),
        { numRuns: 200 }
      )
    })
  })

  it("for any number of concurrent redemptions of one code exactly one succeeds, and a replay revokes its tokens", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 16 }), async (n) => {
        const program = Effect.gen(function* () {
          const { app, basic } = yield* newApp()
          const { user } = yield* newUser()
          const code = yield* issueCode(app.appKey, user.userId)
          const results = yield* Effect.all(
            Array.from({ length: n }, () => exchange(code, basic)),
            { concurrency: "unbounded" }
          )
          const wins = results.filter((r) => r.status === 200)
          assert.strictEqual(wins.length, 1)
          assert.isTrue(results.every((r) => r.status === 200 || r.json?.error === "invalid_grant"))
          const winner = wins[0]?.json?.access_token as string
          const status = yield* post("/oauth2/oauth2/introspect", { token: winner }, basic)
          // the losers were replays of a used code: the winner's tokens are revoked
          assert.deepStrictEqual(status.json, { active: false })
        })
        await Effect.runPromise(program.pipe(Effect.provide(TestLayer())))
      }),
      { numRuns: 25 }
    )
  })

  it.effect("a code of a user disabled since it was issued is invalid_grant", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp()
      const { user } = yield* newUser()
      const code = yield* issueCode(app.appKey, user.userId)
      yield* Admin.disableUser(user.userId)
      const r = yield* token({ grant_type: "authorization_code", code, redirect_uri: cb }, basic)
      assert.deepStrictEqual([r.status, r.json?.error], [400, "invalid_grant"])
    }).pipe(Effect.provide(TestLayer()))
  )

  /** How many tokens of the user for the application are not revoked (revoking them: a probe for a failing test). */
  const unrevoked = (appKey: string, userId: string) =>
    Effect.flatMap(TokenStore, (tokens) => tokens.revokeSubject({ appKey, userId }, 0))

  for (const change of ["disabled", "deleted"] as const) {
    it.effect(
      `a user ${change} between the grant's user check and its write: invalid_grant and no token issued (D13)`,
      () =>
        Effect.gen(function* () {
          const { app, basic } = yield* newApp()
          const { user } = yield* newUser()
          const code = yield* issueCode(app.appKey, user.userId)
          const users = yield* UserStore
          const codes = yield* CodeStore
          // The change commits after the grant read the user enabled and before its write
          const racing = {
            ...codes,
            redeem: (...args: Parameters<typeof codes.redeem>) =>
              Effect.zipRight(
                change === "disabled"
                  ? users.setDisabled(user.userId, true, 1)
                  : users.remove(user.userId, 1),
                codes.redeem(...args)
              )
          }
          const r = yield* exchange(code, basic).pipe(Effect.provideService(CodeStore, racing))
          assert.deepStrictEqual(
            [r.status, r.json?.error, r.json?.error_description],
            [400, "invalid_grant", "authorization code is invalid or expired"]
          )
          assert.strictEqual(yield* unrevoked(app.appKey, user.userId), 0)
        }).pipe(Effect.provide(TestLayer()))
    )
  }

  it.effect("a code issued before its consent was withdrawn is invalid_grant and issues nothing", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp()
      const { user } = yield* newUser()
      const code = yield* issueCode(app.appKey, user.userId)
      assert.isTrue(yield* Admin.withdrawConsentOf(user.userId, app.appKey))
      const r = yield* exchange(code, basic)
      assert.deepStrictEqual(
        [r.status, r.json?.error, r.json?.error_description],
        [400, "invalid_grant", "authorization code is invalid or expired"]
      )
      assert.strictEqual(yield* unrevoked(app.appKey, user.userId), 0)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a scope taken from the application after the code was issued is not in the tokens it redeems to",
    () =>
      Effect.gen(function* () {
        const { app, basic } = yield* newApp({ scope: "read,write" })
        const { user } = yield* newUser()
        const code = yield* issueCode(app.appKey, user.userId, { scope: "read,write" })
        yield* Admin.updateApplication(app.appKey, { scope: "read" })
        const r = yield* exchange(code, basic)
        assert.strictEqual(r.status, 200)
        assert.strictEqual(r.json?.scope, "read")
        const refreshed = yield* token(
          { grant_type: "refresh_token", refresh_token: r.json?.refresh_token as string },
          basic
        )
        assert.strictEqual(refreshed.json?.scope, "read", "nor in its refresh token")
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a code issued without PKCE to an application that requires PKCE since is invalid_grant", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp()
      const { user } = yield* newUser()
      const code = yield* issueCode(app.appKey, user.userId)
      yield* Admin.updateApplication(app.appKey, { requirePkce: true })
      const r = yield* exchange(code, basic)
      assert.deepStrictEqual([r.status, r.json?.error], [400, "invalid_grant"])
      assert.strictEqual(yield* unrevoked(app.appKey, user.userId), 0)
    }).pipe(Effect.provide(TestLayer()))
  )
})
