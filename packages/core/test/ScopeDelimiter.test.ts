/**
 * An application registered with `scope_delimiter` `space` gets its scopes space-joined
 * (RFC 6749 §3.3) in every answer tied to it: token responses of every grant, the implicit
 * authorization response and introspection; a default application keeps commas.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { authorize, cb, issueCode, newApp, newUser, post, TestLayer, token } from "./fixtures.js"

const spaced = { scopeDelimiter: "space" }

describe("scope_delimiter space", () => {
  it.effect("every grant's token response joins the scope with a space, refresh included", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp(spaced)
      const { user, password } = yield* newUser()
      const cc = yield* token({ grant_type: "client_credentials", scope: "write,read" }, basic)
      assert.strictEqual(cc.json?.scope, "read write")
      const pw = yield* token({ grant_type: "password", username: user.username, password }, basic)
      assert.strictEqual(pw.json?.scope, "read write")
      const code = yield* issueCode(app.appKey, user.userId, { scope: "read write" })
      const ac = yield* token({ grant_type: "authorization_code", code, redirect_uri: cb }, basic)
      assert.strictEqual(ac.json?.scope, "read write")
      const refreshed = yield* token(
        { grant_type: "refresh_token", refresh_token: ac.json?.refresh_token as string },
        basic
      )
      assert.strictEqual(refreshed.json?.scope, "read write")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("the implicit response's fragment and introspection join with a space", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp(spaced)
      const { user } = yield* newUser()
      const location = yield* authorize(
        { response_type: "token", client_id: app.appKey, redirect_uri: cb, state: "s", scope: "read,write" },
        user.userId
      )
      const fragment = new URLSearchParams(new URL(location).hash.slice(1))
      assert.strictEqual(fragment.get("scope"), "read write")
      const introspected = yield* post(
        "/oauth2/oauth2/introspect",
        { token: fragment.get("access_token") as string },
        basic
      )
      assert.strictEqual(introspected.json?.scope, "read write")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a default application's answers keep commas", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const cc = yield* token({ grant_type: "client_credentials", scope: "write read" }, basic)
      assert.strictEqual(cc.json?.scope, "read,write")
      const introspected = yield* post(
        "/oauth2/oauth2/introspect",
        { token: cc.json?.access_token as string },
        basic
      )
      assert.strictEqual(introspected.json?.scope, "read,write")
    }).pipe(Effect.provide(TestLayer()))
  )
})
