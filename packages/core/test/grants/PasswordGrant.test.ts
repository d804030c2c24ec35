import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, TestClock } from "effect"
import * as Admin from "../../src/admin/Admin.js"
import { secondFactorRequired } from "../../src/oauth/grants/PasswordGrant.js"
import { badCredentials } from "../../src/security/Accounts.js"
import * as SecondFactor from "../../src/security/SecondFactor.js"
import * as Totp from "../../src/security/Totp.js"
import { PasswordHasher } from "../../src/services/PasswordHasher.js"
import { TokenStore } from "../../src/storage/TokenStore.js"
import { newApp, newUser, TestLayer, token } from "../fixtures.js"

describe("password grant", () => {
  it.effect("issues the application's default scopes, a refresh token and the user's open_id", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp({ scope: "read,write" })
      const { user, password } = yield* newUser()
      const res = yield* token({ grant_type: "password", username: user.username, password }, basic)
      assert.strictEqual(res.status, 200)
      assert.strictEqual(res.json?.scope, "read,write")
      assert.isString(res.json?.refresh_token)
      assert.isString(res.json?.open_id)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "ignores the scope parameter (scope is only effective for refresh_token: docs/decisions.md)",
    () =>
      Effect.gen(function* () {
        const { basic } = yield* newApp({ scope: "read,write" })
        const { user, password } = yield* newUser()
        const res = yield* token(
          { grant_type: "password", username: user.username, password, scope: "read" },
          basic
        )
        assert.strictEqual(res.json?.scope, "read,write")
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("open_id is stable per application and differs between applications", () =>
    Effect.gen(function* () {
      const a = yield* newApp()
      const b = yield* newApp()
      const { user, password } = yield* newUser()
      const form = { grant_type: "password", username: user.username, password }
      const a1 = yield* token(form, a.basic)
      const a2 = yield* token(form, a.basic)
      const b1 = yield* token(form, b.basic)
      assert.strictEqual(a1.json?.open_id, a2.json?.open_id)
      assert.notStrictEqual(a1.json?.open_id, b1.json?.open_id)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a wrong password and an unknown user get the same invalid_grant answer", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const { user } = yield* newUser()
      const wrong = yield* token(
        { grant_type: "password", username: user.username, password: "wrong password" },
        basic
      )
      const unknown = yield* token(
        { grant_type: "password", username: "nobody-here", password: "wrong password" },
        basic
      )
      assert.strictEqual(wrong.status, 400)
      assert.strictEqual(wrong.body, unknown.body)
      assert.strictEqual(wrong.json?.error, "invalid_grant")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a user with an authenticator app: the right password gets the answer of a wrong one, and no token",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(1_800_000_000_000)
        const { basic } = yield* newApp()
        const { user, password } = yield* newUser()
        const form = { grant_type: "password", username: user.username, password }
        assert.strictEqual((yield* token(form, basic)).status, 200, "before the app is added")
        const { secret } = yield* SecondFactor.enrol(user.userId, user.username)
        const code = yield* Totp.codeAt(
          Totp.fromBase32(secret) ?? new Uint8Array(),
          Totp.stepAt(1_800_000_000)
        )
        yield* SecondFactor.confirm(user.userId, code)
        const res = yield* token(form, basic)
        assert.deepStrictEqual(
          [res.status, res.json],
          [400, { error: "invalid_grant", error_description: badCredentials }]
        )
      }).pipe(Effect.provide(TestLayer()))
  )

  for (const [name, app, layer] of [
    ["an application that requires a second factor", { requireMfa: true }, TestLayer()],
    ["LATCHKEY_MFA=required", {}, TestLayer({ mfa: "required" })]
  ] as const) {
    it.effect(`${name}: the grant is refused, with no token`, () =>
      Effect.gen(function* () {
        const { user, password } = yield* newUser()
        const { basic } = yield* newApp(app)
        const res = yield* token({ grant_type: "password", username: user.username, password }, basic)
        assert.deepStrictEqual(
          [res.status, res.json],
          [400, { error: "invalid_grant", error_description: secondFactorRequired }]
        )
      }).pipe(Effect.provide(layer))
    )
  }

  it.effect("is unauthorized_client for an application not registered for it", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp({
        grantTypes: ["authorization_code", "refresh_token", "client_credentials"]
      })
      const { user, password } = yield* newUser()
      const res = yield* token({ grant_type: "password", username: user.username, password }, basic)
      assert.strictEqual(res.json?.error, "unauthorized_client")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "repeated failures are refused with 429 and Retry-After, even the right password, until the lockout ends",
    () =>
      Effect.gen(function* () {
        const { basic } = yield* newApp()
        const { user, password } = yield* newUser()
        for (let i = 0; i < 5; i++) {
          const r = yield* token(
            { grant_type: "password", username: user.username, password: "wrong password" },
            basic
          )
          assert.strictEqual(r.status, 400)
        }
        const sixth = yield* token(
          { grant_type: "password", username: user.username, password: "wrong password" },
          basic
        )
        assert.strictEqual(sixth.status, 400)
        const locked = yield* token({ grant_type: "password", username: user.username, password }, basic)
        assert.strictEqual(locked.status, 429)
        assert.strictEqual(locked.json?.error, "temporarily_unavailable")
        assert.strictEqual(locked.headers["retry-after"], "30")
        yield* TestClock.adjust("31 seconds")
        assert.strictEqual(
          (yield* token({ grant_type: "password", username: user.username, password }, basic)).status,
          200
        )
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("username and password are required", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      assert.strictEqual(
        (yield* token({ grant_type: "password", username: "a" }, basic)).json?.error,
        "invalid_request"
      )
      assert.strictEqual(
        (yield* token({ grant_type: "password", password: "a" }, basic)).json?.error,
        "invalid_request"
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  for (const change of ["disabled", "deleted"] as const) {
    it.effect(
      `a user ${change} while the grant checks the password gets invalid_grant and no active token (D13)`,
      () =>
        Effect.gen(function* () {
          const { app, basic } = yield* newApp()
          const { user, password } = yield* newUser()
          const hasher = yield* PasswordHasher
          const checking = yield* Deferred.make<void>()
          const proceed = yield* Deferred.make<void>()
          // The grant holds in verify until the change has committed
          const gated = {
            ...hasher,
            verify: (p: string, h: string) =>
              Deferred.succeed(checking, undefined).pipe(
                Effect.zipRight(Deferred.await(proceed)),
                Effect.zipRight(hasher.verify(p, h))
              )
          }
          const grant = yield* Effect.fork(
            token({ grant_type: "password", username: user.username, password }, basic).pipe(
              Effect.provideService(PasswordHasher, gated)
            )
          )
          yield* Deferred.await(checking)
          yield* change === "disabled" ? Admin.disableUser(user.userId) : Admin.deleteUser(user.userId)
          yield* Deferred.succeed(proceed, undefined)
          const r = yield* Fiber.join(grant)
          assert.deepStrictEqual(
            [r.status, r.json?.error, r.json?.error_description],
            [400, "invalid_grant", badCredentials]
          )
          const unrevoked = yield* Effect.flatMap(TokenStore, (tokens) =>
            tokens.revokeSubject({ appKey: app.appKey, userId: user.userId }, 0)
          )
          assert.strictEqual(unrevoked, 0, "no token of the user is active")
        }).pipe(Effect.provide(TestLayer()))
    )
  }
})
