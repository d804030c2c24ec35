import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as Accounts from "../src/security/Accounts.js"
import { Audited, adminApi as api } from "./adminApi.js"
import { cb, issueCode, post, token } from "./fixtures.js"

const createUser = (username: string) =>
  Effect.map(api("POST", "/users", { username, password: "a long password" }), (r) => {
    assert.strictEqual(r.status, 201, JSON.stringify(r.json))
    return r.json.user_id as string
  })

/** An application, and a consent of `userId` to it with a live access token. */
const consented = (userId: string, name = "Photo Printer") =>
  Effect.gen(function* () {
    const r = yield* api("POST", "/applications", { name, redirect_uris: [cb], scopes: "read" })
    const appKey = r.json.app_key as string
    const basic = `Basic ${btoa(`${appKey}:${r.json.app_secret as string}`)}`
    const code = yield* issueCode(appKey, userId)
    const issued = yield* token({ grant_type: "authorization_code", code, redirect_uri: cb }, basic)
    return { appKey, basic, access: issued.json?.access_token as string }
  })

describe("AdminApi and Admin: a user is named by id or by username", () => {
  it.effect(
    "every /users/{user} endpoint and the consent withdrawal take the username as well as the id",
    () =>
      Effect.gen(function* () {
        const userId = yield* createUser("grace")
        const { appKey, basic, access } = yield* consented(userId)
        const byId = yield* api("GET", `/users/${userId}`)
        const byName = yield* api("GET", "/users/grace")
        assert.strictEqual(byName.status, 200)
        assert.deepStrictEqual(byName.json, byId.json)
        const consents = yield* api("GET", "/users/grace/consents")
        assert.deepStrictEqual(
          consents.list.map((c) => [c.app_key, c.app_name]),
          [[appKey, "Photo Printer"]]
        )
        const withdrawn = yield* api("DELETE", `/applications/${appKey}/consents/grace`)
        assert.deepStrictEqual(withdrawn.json, {
          user_id: userId,
          username: "grace",
          app_key: appKey,
          withdrawn: true
        })
        assert.isFalse((yield* post("/oauth2/oauth2/introspect", { token: access }, basic)).json?.active)
        const disabled = yield* api("PATCH", "/users/grace", { disabled: true })
        assert.deepStrictEqual([disabled.json.user_id, typeof disabled.json.disabled_at], [userId, "string"])
        const deleted = yield* api("DELETE", "/users/grace")
        assert.deepStrictEqual(deleted.json, { user_id: userId, username: "grace", deleted: true })
        const gone = yield* api("GET", "/users/grace")
        assert.deepStrictEqual(
          [gone.status, gone.json.error_description],
          [404, 'no user with id or username "grace"']
        )
      }).pipe(Effect.provide(Audited()))
  )

  it.effect("a username that is another user's id is refused, and an id names its own user first", () =>
    Effect.gen(function* () {
      const first = yield* createUser("first")
      const refused = yield* api("POST", "/users", { username: first, password: "a long password" })
      assert.deepStrictEqual(
        [refused.status, refused.json.field, refused.json.error_description],
        [400, "username", "username must not be the user id of another user"]
      )
      const viaAdmin = yield* Effect.flip(Admin.createUser(first, "a long password"))
      assert.deepInclude(viaAdmin, { _tag: "InvalidField", field: "username" })
      // a clash made below the admin layer still resolves one way: the id wins
      const clash = yield* Accounts.createUser(first, "a long password")
      assert.strictEqual((yield* Admin.findUser(first)).username, "first")
      assert.strictEqual((yield* api("GET", `/users/${first}`)).json.username, "first")
      assert.strictEqual((yield* api("GET", `/users/${clash.userId}`)).json.username, first)
    }).pipe(Effect.provide(Audited()))
  )
})

describe("AdminApi: names beside ids", () => {
  it.effect("audit events carry the application's name and the username; null once either is deleted", () =>
    Effect.gen(function* () {
      const userId = yield* createUser("heidi")
      const { appKey } = yield* consented(userId, "Mail Reader")
      yield* api("DELETE", `/applications/${appKey}/consents/${userId}`)
      const withdrawn = (yield* api("GET", "/audit")).list.find((e) => e.type === "consent_withdrawn")
      assert.deepInclude(withdrawn, {
        app_key: appKey,
        app_name: "Mail Reader",
        user_id: userId,
        username: "heidi"
      })
      const created = (yield* api("GET", "/audit")).list.find((e) => e.type === "user_created")
      assert.deepInclude(created, { app_key: null, app_name: null, user_id: userId, username: "heidi" })
      yield* api("DELETE", `/users/${userId}`)
      yield* api("DELETE", `/applications/${appKey}`)
      const after = (yield* api("GET", "/audit")).list.find((e) => e.type === "consent_withdrawn")
      assert.deepInclude(after, { app_key: appKey, app_name: null, user_id: userId, username: null })
      const revoked = yield* api("DELETE", `/applications/${appKey}/subjects/someone/tokens`)
      assert.strictEqual(revoked.status, 404)
    }).pipe(Effect.provide(Audited()))
  )
})
