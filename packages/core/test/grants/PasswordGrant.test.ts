import { assert, describe, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
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
})
