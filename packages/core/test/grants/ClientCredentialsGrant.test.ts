import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { newApp, TestLayer, token } from "../fixtures.js"

describe("client_credentials grant", () => {
  it.effect("issues the application's own token with its default scopes and no refresh token", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp({ scope: "write read" })
      const res = yield* token({ grant_type: "client_credentials" }, basic)
      assert.strictEqual(res.status, 200)
      assert.deepStrictEqual(Object.keys(res.json ?? {}).sort(), [
        "access_token",
        "expires_in",
        "scope",
        "token_type"
      ])
      assert.strictEqual(res.json?.scope, "read,write")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("with open_id issues a per-user token with a refresh token and echoes the open_id", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const res = yield* token({ grant_type: "client_credentials", open_id: "device-42" }, basic)
      assert.strictEqual(res.json?.open_id, "device-42")
      assert.isString(res.json?.refresh_token)
      const refreshed = yield* token(
        { grant_type: "refresh_token", refresh_token: res.json?.refresh_token as string },
        basic
      )
      assert.strictEqual(refreshed.json?.open_id, "device-42")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an open_id over 128 characters or with control characters is invalid_request", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      for (const bad of ["x".repeat(129), "a\u0000b", "a b", "a\nb"]) {
        assert.strictEqual(
          (yield* token({ grant_type: "client_credentials", open_id: bad }, basic)).json?.error,
          "invalid_request"
        )
      }
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an expires_in override per application is honoured", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp({ accessTokenTtl: 120 })
      assert.strictEqual((yield* token({ grant_type: "client_credentials" }, basic)).json?.expires_in, 120)
    }).pipe(Effect.provide(TestLayer()))
  )
})
