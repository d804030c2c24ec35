import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Scope from "../src/model/Scope.js"
import * as Bearer from "../src/oauth/Bearer.js"
import { cb, issueCode, newApp, newUser, post, TestLayer, token } from "./fixtures.js"

const introspect = (value: string, basic: string) =>
  post("/oauth2/oauth2/introspect", { token: value }, basic)

describe("subjects that cannot be confused", () => {
  it.effect("an application cannot assert the open_id the server derived for one of its users", () =>
    Effect.gen(function* () {
      const a = yield* newApp()
      const b = yield* newApp()
      const { user } = yield* newUser()
      const code = yield* issueCode(a.app.appKey, user.userId)
      const exchanged = yield* token({ grant_type: "authorization_code", code, redirect_uri: cb }, a.basic)
      const userOpenId = exchanged.json?.open_id as string
      assert.isString(userOpenId)
      const asserted = yield* token({ grant_type: "client_credentials", open_id: userOpenId }, a.basic)
      assert.deepStrictEqual([asserted.status, asserted.json?.error], [400, "invalid_request"])
      // Another application has no user behind that value: it may use it as its own subject
      const other = yield* token({ grant_type: "client_credentials", open_id: userOpenId }, b.basic)
      assert.strictEqual(other.status, 200)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "introspection and Bearer principals say whether a user or the application established the subject",
    () =>
      Effect.gen(function* () {
        const { app, basic } = yield* newApp()
        const { user } = yield* newUser()
        const code = yield* issueCode(app.appKey, user.userId)
        const userToken = (yield* token({ grant_type: "authorization_code", code, redirect_uri: cb }, basic))
          .json?.access_token as string
        const appToken = (yield* token({ grant_type: "client_credentials", open_id: "device-7" }, basic)).json
          ?.access_token as string
        const ownToken = (yield* token({ grant_type: "client_credentials" }, basic)).json
          ?.access_token as string
        assert.strictEqual((yield* introspect(userToken, basic)).json?.subject_type, "user")
        assert.strictEqual((yield* introspect(appToken, basic)).json?.subject_type, "application")
        assert.notProperty((yield* introspect(ownToken, basic)).json, "subject_type")
        const principal = (t: string) =>
          Effect.map(Bearer.verify(`Bearer ${t}`, Scope.empty), (p) => p.subjectType)
        assert.strictEqual(yield* principal(userToken), "user")
        assert.strictEqual(yield* principal(appToken), "application")
        assert.isNull(yield* principal(ownToken))
      }).pipe(Effect.provide(TestLayer()))
  )
})
