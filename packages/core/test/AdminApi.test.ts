import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, TestClock } from "effect"
import * as AdminApi from "../src/admin/AdminApi.js"
import * as Http from "../src/http/Http.js"
import * as OpenApi from "../src/http/OpenApi.js"
import * as SecondFactor from "../src/security/SecondFactor.js"
import * as Totp from "../src/security/Totp.js"
import { ApplicationStore } from "../src/storage/ApplicationStore.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import { StorageError } from "../src/storage/StorageError.js"
import { UserStore } from "../src/storage/UserStore.js"
import {
  Audited,
  adminToken,
  adminApi as api,
  type Json,
  adminRequest as request,
  adminSend as send
} from "./adminApi.js"
import { Browser, setup, signIn, view } from "./browser.js"
import { cb, issueCode, newApp, newUser, post, token } from "./fixtures.js"

const createApp = (body: Json = {}) =>
  Effect.map(
    api("POST", "/applications", { name: "Admin App", redirect_uris: [cb], scopes: "read write", ...body }),
    (r) => {
      assert.strictEqual(r.status, 201, r.body)
      return r.json as Json & { app_key: string; app_secret: string }
    }
  )

const basicOf = (appKey: string, appSecret: string) => `Basic ${btoa(`${appKey}:${appSecret}`)}`

const expectError = (
  r: { status: number; json?: Json | undefined },
  status: number,
  error: string,
  field?: string
) => {
  assert.strictEqual(r.status, status, JSON.stringify(r.json))
  assert.strictEqual(r.json?.error, error)
  assert.isString(r.json?.error_description)
  if (field !== undefined) assert.strictEqual(r.json?.field, field, JSON.stringify(r.json))
}

describe("AdminApi: authentication", () => {
  it.effect("401 with a Bearer challenge without a token, with a wrong one, or with another scheme", () =>
    Effect.gen(function* () {
      for (const call of [
        { token: null },
        { token: "wrong" },
        { token: `${adminToken}x` },
        { token: "" },
        { token: null, headers: { authorization: `Basic ${btoa(`admin:${adminToken}`)}` } },
        { token: null, headers: { authorization: adminToken } }
      ]) {
        for (const path of ["/applications", "/no-such-endpoint"]) {
          const r = yield* api("GET", path, undefined, call)
          assert.strictEqual(r.status, 401, JSON.stringify(call))
          assert.strictEqual(r.headers["www-authenticate"], 'Bearer realm="latchkey-admin"')
          assert.notInclude(r.body, adminToken)
        }
      }
      // an unknown path is 404 only once authenticated
      assert.strictEqual((yield* api("GET", "/no-such-endpoint")).status, 404)
      const lower = yield* send({
        ...request("GET", "/applications"),
        headers: { authorization: `bearer ${adminToken}` }
      })
      assert.strictEqual(lower.status, 200)
    }).pipe(Effect.provide(Audited()))
  )

  it("authorized compares the whole token, and never accepts an empty one", () => {
    const req = (authorization?: string | ReadonlyArray<string>): Http.HttpRequest => ({
      method: "GET",
      path: AdminApi.basePath,
      query: "",
      headers: authorization === undefined ? {} : { authorization },
      body: ""
    })
    assert.isTrue(AdminApi.authorized(req(`Bearer ${adminToken}`), adminToken))
    assert.isFalse(AdminApi.authorized(req(`Bearer ${adminToken.slice(0, -1)}`), adminToken))
    assert.isFalse(AdminApi.authorized(req(`Bearer ${adminToken}`), `${adminToken}!`))
    assert.isFalse(AdminApi.authorized(req(), adminToken))
    assert.isFalse(AdminApi.authorized(req("Bearer "), ""))
    assert.isFalse(AdminApi.authorized(req([`Bearer ${adminToken}`, `Bearer ${adminToken}`]), adminToken))
  })
})

describe("AdminApi: applications", () => {
  it.effect(
    "create answers 201 with the CLI's JSON and require_pkce; the secret works at the token endpoint",
    () =>
      Effect.gen(function* () {
        const r = yield* api("POST", "/applications", {
          name: "Admin App",
          redirect_uris: [cb],
          scopes: ["write", "read"],
          grant_types: ["client_credentials"],
          require_pkce: true,
          access_token_ttl: 600,
          refresh_token_ttl: null
        })
        assert.strictEqual(r.status, 201, r.body)
        assert.deepStrictEqual(Object.keys(r.json ?? {}), [
          "app_key",
          "app_secret",
          "name",
          "redirect_uris",
          "scopes",
          "grant_types",
          "require_pkce",
          "public",
          "access_token_format",
          "access_token_audience",
          "web_origins",
          "post_logout_redirect_uris",
          "token_endpoint_auth_method",
          "scope_delimiter"
        ])
        const created = r.json as Json & { app_key: string; app_secret: string }
        assert.strictEqual(r.headers.location, `/admin/v1/applications/${created.app_key}`)
        assert.deepStrictEqual(created.scopes, ["read", "write"])
        assert.isTrue(created.require_pkce)
        const issued = yield* token(
          { grant_type: "client_credentials" },
          basicOf(created.app_key, created.app_secret)
        )
        assert.strictEqual(issued.status, 200)
        assert.strictEqual(issued.json?.expires_in, 600)
        const shown = yield* api("GET", `/applications/${created.app_key}`)
        assert.strictEqual(shown.status, 200)
        assert.deepInclude(shown.json, {
          app_key: created.app_key,
          access_token_ttl: 600,
          refresh_token_ttl: null
        })
        assert.notInclude(shown.body, created.app_secret)
        const defaults = yield* createApp({ scopes: undefined })
        assert.deepStrictEqual(defaults.grant_types, [
          "authorization_code",
          "refresh_token",
          "client_credentials"
        ])
        assert.isFalse(defaults.require_pkce)
      }).pipe(Effect.provide(Audited()))
  )

  it.effect("list, get, patch and delete", () =>
    Effect.gen(function* () {
      const a = yield* createApp()
      const b = yield* createApp({ name: "Second" })
      const listed = yield* api("GET", "/applications")
      assert.strictEqual(listed.status, 200)
      assert.deepStrictEqual(
        listed.list?.map((x) => x.app_key),
        [a.app_key, b.app_key]
      )
      assert.deepStrictEqual(Object.keys(listed.list?.[0] ?? {}), [
        "app_key",
        "name",
        "redirect_uris",
        "scopes",
        "grant_types",
        "require_pkce",
        "access_token_ttl",
        "refresh_token_ttl",
        "created_at",
        "previous_secret_expires_at",
        "previous_secret_first_used_at",
        "public",
        "access_token_format",
        "access_token_audience",
        "web_origins",
        "post_logout_redirect_uris",
        "token_endpoint_auth_method",
        "scope_delimiter",
        "status",
        "status_reason"
      ])
      assert.notInclude(listed.body, a.app_secret)
      const patched = yield* api("PATCH", `/applications/${a.app_key}`, {
        name: "Renamed",
        redirect_uris: ["https://renamed.example/cb"],
        scopes: "profile",
        grant_types: ["authorization_code", "refresh_token"],
        require_pkce: true,
        access_token_ttl: 900,
        refresh_token_ttl: 3600
      })
      assert.strictEqual(patched.status, 200, patched.body)
      assert.deepInclude(patched.json, {
        name: "Renamed",
        redirect_uris: ["https://renamed.example/cb"],
        scopes: ["profile"],
        grant_types: ["authorization_code", "refresh_token"],
        require_pkce: true,
        access_token_ttl: 900,
        refresh_token_ttl: 3600
      })
      const reset = yield* api("PATCH", `/applications/${a.app_key}`, { access_token_ttl: null })
      assert.isNull(reset.json?.access_token_ttl)
      assert.strictEqual(reset.json?.refresh_token_ttl, 3600)
      const unchanged = yield* api("PATCH", `/applications/${a.app_key}`, {})
      assert.deepStrictEqual(unchanged.json, reset.json)
      const deleted = yield* api("DELETE", `/applications/${a.app_key}`)
      assert.deepStrictEqual([deleted.status, deleted.json], [200, { app_key: a.app_key, deleted: true }])
      for (const [method, path, body] of [
        ["GET", `/applications/${a.app_key}`],
        ["PATCH", `/applications/${a.app_key}`, { name: "x" }],
        ["DELETE", `/applications/${a.app_key}`],
        ["POST", `/applications/${a.app_key}/secret`, {}],
        ["DELETE", `/applications/${a.app_key}/subjects/dev-1/tokens`]
      ] as const) {
        expectError(yield* api(method, path, body), 404, "not_found")
      }
    }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "T18: a name or username with a bidi override or an invisible character is 400 naming the field, the value never echoed, nothing stored",
    () =>
      Effect.gen(function* () {
        const created = yield* createApp()
        for (const c of ["\u202e", "\u2067", "\u200f", "\u200b", "\ufeff", "\u00ad"]) {
          const hostile = `Pay${c}Pal`
          const answers = [
            [yield* api("POST", "/applications", { name: hostile, redirect_uris: [cb] }), "name"],
            [yield* api("PATCH", `/applications/${created.app_key}`, { name: hostile }), "name"],
            [yield* api("POST", "/users", { username: hostile, password: "long enough pw" }), "username"]
          ] as const
          for (const [r, field] of answers) {
            expectError(r, 400, "invalid_request", field)
            assert.notInclude(r.body, hostile)
            assert.notInclude(r.body, JSON.stringify(hostile).slice(1, -1))
          }
        }
        const apps = yield* Effect.flatMap(ApplicationStore, (s) => s.list())
        assert.deepStrictEqual(
          apps.map((a) => a.name),
          ["Admin App"]
        )
        assert.lengthOf(yield* Effect.flatMap(UserStore, (s) => s.list()), 0)
      }).pipe(Effect.provide(Audited()))
  )

  it.effect("400 names the field: invalid values, wrong types, missing and unknown fields", () =>
    Effect.gen(function* () {
      const base = { name: "App", redirect_uris: [cb] }
      const cases: Array<[Json, string]> = [
        [{ ...base, name: "" }, "name"],
        [{ ...base, name: 5 }, "name"],
        [{ redirect_uris: [cb] }, "name"],
        [{ name: "App" }, "redirect_uris"],
        [{ ...base, redirect_uris: [] }, "redirect_uris"],
        [{ ...base, redirect_uris: ["http://evil.example/cb"] }, "redirect_uris"],
        [{ ...base, redirect_uris: "https://app.example/cb" }, "redirect_uris"],
        [{ ...base, scopes: "bad\u0001scope" }, "scopes"],
        [{ ...base, scopes: ["a b"] }, "scopes"],
        [{ ...base, scopes: 7 }, "scopes"],
        [{ ...base, grant_types: ["magic"] }, "grant_types"],
        [{ ...base, grant_types: [] }, "grant_types"],
        [{ ...base, require_pkce: "yes" }, "require_pkce"],
        [{ ...base, access_token_ttl: 0 }, "access_token_ttl"],
        [{ ...base, access_token_ttl: 1.5 }, "access_token_ttl"],
        [{ ...base, refresh_token_ttl: 400 * 86400 }, "refresh_token_ttl"],
        [{ ...base, app_secret: "s".repeat(40) }, "app_secret"]
      ]
      for (const [body, field] of cases) {
        const r = yield* api("POST", "/applications", undefined, { raw: JSON.stringify(body) })
        expectError(r, 400, "invalid_request", field)
      }
      const unknown = yield* api("POST", "/applications", { ...base, colour: "blue" })
      expectError(unknown, 400, "invalid_request", "colour")
      assert.include(unknown.json?.error_description as string, "unknown field")
      const proto = yield* api("POST", "/applications", undefined, {
        raw: `{"name":"App","redirect_uris":["${cb}"],"__proto__":{"admin":true}}`
      })
      expectError(proto, 400, "invalid_request", "__proto__")
      for (const raw of ["{", "[]", "null", '"text"', "12"]) {
        expectError(yield* api("POST", "/applications", undefined, { raw }), 400, "invalid_request", "body")
      }
      const a = yield* createApp()
      expectError(
        yield* api("PATCH", `/applications/${a.app_key}`, { grace_seconds: 1 }),
        400,
        "invalid_request",
        "grace_seconds"
      )
      expectError(
        yield* api("PATCH", `/applications/${a.app_key}`, { redirect_uris: ["https://a.example/#x"] }),
        400,
        "invalid_request",
        "redirect_uris"
      )
      expectError(
        yield* api("GET", "/applications", undefined, { query: "page=2" }),
        400,
        "invalid_request",
        "page"
      )
      assert.strictEqual((yield* api("GET", "/applications")).list?.length, 1, "nothing refused was stored")
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("a password in a wrongly typed field is never echoed", () =>
    Effect.gen(function* () {
      const r = yield* api("POST", "/users", { username: "u", password: ["hunter2-secret-pw"] })
      expectError(r, 400, "invalid_request", "password")
      assert.notInclude(r.body, "hunter2")
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("rotate the secret, with or without grace; the grace is checked", () =>
    Effect.gen(function* () {
      const a = yield* createApp()
      const r = yield* api("POST", `/applications/${a.app_key}/secret`, { grace_seconds: 3600 })
      assert.strictEqual(r.status, 200, r.body)
      assert.deepStrictEqual(Object.keys(r.json ?? {}), [
        "app_key",
        "app_secret",
        "previous_secret_expires_at"
      ])
      assert.isString(r.json?.previous_secret_expires_at)
      const cc = { grant_type: "client_credentials" }
      assert.strictEqual(
        (yield* token(cc, basicOf(a.app_key, a.app_secret))).status,
        200,
        "old secret in grace"
      )
      const next = r.json?.app_secret as string
      assert.strictEqual((yield* token(cc, basicOf(a.app_key, next))).status, 200)
      const empty = yield* api("POST", `/applications/${a.app_key}/secret`)
      assert.strictEqual(empty.status, 200, empty.body)
      assert.isNull(empty.json?.previous_secret_expires_at)
      assert.strictEqual((yield* token(cc, basicOf(a.app_key, next))).status, 401)
      for (const grace of [-1, 1.5, 31 * 86400, "1h"]) {
        expectError(
          yield* api("POST", `/applications/${a.app_key}/secret`, { grace_seconds: grace }),
          400,
          "invalid_request",
          "grace_seconds"
        )
      }
    }).pipe(Effect.provide(Audited()))
  )
})

describe("AdminApi: users", () => {
  it.effect("create, list, get, disable, enable, set the password, delete", () =>
    Effect.gen(function* () {
      const a = yield* createApp({ grant_types: ["password", "refresh_token"] })
      const basic = basicOf(a.app_key, a.app_secret)
      const r = yield* api("POST", "/users", { username: "api-user", password: "first password" })
      assert.strictEqual(r.status, 201, r.body)
      const userId = r.json?.user_id as string
      assert.deepStrictEqual(r.json, { user_id: userId, username: "api-user" })
      assert.strictEqual(r.headers.location, `/admin/v1/users/${userId}`)
      expectError(
        yield* api("POST", "/users", { username: "api-user", password: "other password" }),
        409,
        "conflict"
      )
      expectError(
        yield* api("POST", "/users", { username: "x", password: "short" }),
        400,
        "invalid_request",
        "password"
      )
      expectError(
        yield* api("POST", "/users", { username: " x", password: "long enough" }),
        400,
        "invalid_request",
        "username"
      )
      expectError(yield* api("POST", "/users", { username: "x" }), 400, "invalid_request", "password")
      const listed = yield* api("GET", "/users")
      assert.deepStrictEqual(
        listed.list?.map((u) => u.username),
        ["api-user"]
      )
      assert.deepStrictEqual(Object.keys(listed.list?.[0] ?? {}), [
        "user_id",
        "username",
        "created_at",
        "disabled_at"
      ])
      assert.notInclude(listed.body, "test$")
      const signIn = (password: string) =>
        token({ grant_type: "password", username: "api-user", password }, basic)
      const issued = yield* signIn("first password")
      assert.strictEqual(issued.status, 200)
      const disabled = yield* api("PATCH", `/users/${userId}`, { disabled: true })
      assert.strictEqual(disabled.status, 200, disabled.body)
      assert.isString(disabled.json?.disabled_at)
      assert.strictEqual((yield* signIn("first password")).json?.error, "invalid_grant")
      const introspected = yield* post(
        "/oauth2/oauth2/introspect",
        { token: issued.json?.access_token as string },
        basic
      )
      assert.isFalse(introspected.json?.active, "disabling revoked the user's tokens")
      const refreshed = yield* token(
        { grant_type: "refresh_token", refresh_token: issued.json?.refresh_token as string },
        basic
      )
      assert.strictEqual(refreshed.json?.error, "invalid_grant")
      const shown = yield* api("GET", `/users/${userId}`)
      assert.strictEqual(shown.json?.disabled_at, disabled.json?.disabled_at)
      const enabled = yield* api("PATCH", `/users/${userId}`, {
        disabled: false,
        password: "second password"
      })
      assert.strictEqual(enabled.status, 200, enabled.body)
      assert.isNull(enabled.json?.disabled_at)
      assert.strictEqual((yield* signIn("first password")).json?.error, "invalid_grant")
      assert.strictEqual((yield* signIn("second password")).status, 200)
      const refused = yield* api("PATCH", `/users/${userId}`, { disabled: true, password: "short" })
      expectError(refused, 400, "invalid_request", "password")
      assert.isNull(
        (yield* api("GET", `/users/${userId}`)).json?.disabled_at,
        "a refused patch changes nothing"
      )
      expectError(
        yield* api("PATCH", `/users/${userId}`, { disabled: "yes" }),
        400,
        "invalid_request",
        "disabled"
      )
      expectError(
        yield* api("PATCH", `/users/${userId}`, { username: "rename" }),
        400,
        "invalid_request",
        "username"
      )
      const deleted = yield* api("DELETE", `/users/${userId}`)
      assert.deepStrictEqual(deleted.json, { user_id: userId, username: "api-user", deleted: true })
      for (const [method, path, body] of [
        ["GET", `/users/${userId}`],
        ["PATCH", `/users/${userId}`, { disabled: true }],
        ["DELETE", `/users/${userId}`],
        ["GET", `/users/${userId}/consents`],
        // nor by username, once deleted
        ["GET", "/users/api-user"]
      ] as const) {
        expectError(yield* api(method, path, body), 404, "not_found")
      }
    }).pipe(Effect.provide(Audited()))
  )
})

describe("AdminApi: tokens and consents", () => {
  it.effect("revoke a subject's tokens: 200 with the count; an unknown app is 404", () =>
    Effect.gen(function* () {
      const a = yield* createApp({ grant_types: ["client_credentials"] })
      const basic = basicOf(a.app_key, a.app_secret)
      const t = (yield* token({ grant_type: "client_credentials", open_id: "dev/42" }, basic)).json
        ?.access_token as string
      const r = yield* api(
        "DELETE",
        `/applications/${a.app_key}/subjects/${encodeURIComponent("dev/42")}/tokens`
      )
      assert.deepStrictEqual(
        [r.status, r.json],
        [200, { app_key: a.app_key, app_name: "Admin App", open_id: "dev/42", revoked: 1 }]
      )
      assert.isFalse((yield* post("/oauth2/oauth2/introspect", { token: t }, basic)).json?.active)
      const again = yield* api("DELETE", `/applications/${a.app_key}/subjects/dev%2F42/tokens`)
      assert.strictEqual(again.json?.revoked, 0)
      expectError(yield* api("DELETE", "/applications/nope/subjects/dev-1/tokens"), 404, "not_found")
      expectError(
        yield* api("DELETE", `/applications/${a.app_key}/subjects/${"x".repeat(129)}/tokens`),
        400,
        "invalid_request",
        "open_id"
      )
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("list and withdraw a consent; a second withdrawal, an unknown user or app is 404", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp()
      const { user } = yield* newUser()
      const code = yield* issueCode(app.appKey, user.userId)
      const access = (yield* token({ grant_type: "authorization_code", code, redirect_uri: cb }, basic)).json
        ?.access_token as string
      const consents = yield* api("GET", `/users/${user.userId}/consents`)
      assert.strictEqual(consents.status, 200)
      assert.deepStrictEqual(
        consents.list?.map((c) => [c.app_key, c.scopes]),
        [[app.appKey, ["read", "write"]]]
      )
      const path = `/applications/${app.appKey}/consents/${user.userId}`
      const r = yield* api("DELETE", path)
      assert.deepStrictEqual(
        [r.status, r.json],
        [200, { user_id: user.userId, username: user.username, app_key: app.appKey, withdrawn: true }]
      )
      assert.isFalse((yield* post("/oauth2/oauth2/introspect", { token: access }, basic)).json?.active)
      expectError(yield* api("DELETE", path), 404, "not_found")
      expectError(yield* api("DELETE", `/applications/nope/consents/${user.userId}`), 404, "not_found")
      expectError(yield* api("DELETE", `/applications/${app.appKey}/consents/nobody`), 404, "not_found")
      assert.deepStrictEqual((yield* api("GET", `/users/${user.userId}/consents`)).list, [])
    }).pipe(Effect.provide(Audited()))
  )
})

describe("AdminApi: the audit trail", () => {
  it.effect(
    "every change is recorded with the actor admin-api, the request id and address, and no secret",
    () =>
      Effect.gen(function* () {
        const a = yield* createApp()
        yield* api("PATCH", `/applications/${a.app_key}`, { name: "Changed" })
        const rotated = yield* api("POST", `/applications/${a.app_key}/secret`, {})
        const u = yield* api("POST", "/users", { username: "audited", password: "a secret password" })
        const userId = u.json?.user_id as string
        yield* api("PATCH", `/users/${userId}`, { password: "another secret password", disabled: true })
        yield* api("DELETE", `/applications/${a.app_key}/subjects/dev-1/tokens`)
        yield* api("DELETE", `/users/${userId}`)
        yield* api("DELETE", `/applications/${a.app_key}`)
        const events = yield* Effect.flatMap(AuditStore, (s) => s.query({ limit: 100 }))
        assert.deepStrictEqual(
          [...events].reverse().map((e) => e.type),
          [
            "application_created",
            "application_updated",
            "secret_rotated",
            "user_created",
            "user_updated",
            "user_updated",
            "subject_tokens_revoked",
            "user_deleted",
            "application_deleted"
          ]
        )
        for (const e of events) {
          assert.deepInclude(e, { actor: "admin-api", requestId: "req-admin-1", address: "192.0.2.44" })
        }
        const text = JSON.stringify(events)
        for (const secret of [
          a.app_secret,
          rotated.json?.app_secret as string,
          "a secret password",
          "another secret"
        ])
          assert.notInclude(text, secret)
      }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "GET /audit filters by app_key, type, since and limit, the newest oldest first; bad filters are 400 naming them",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-01-01T00:00:00Z"))
        const a = yield* createApp()
        const b = yield* createApp()
        yield* api("POST", `/applications/${a.app_key}/secret`)
        const all = yield* api("GET", "/audit")
        assert.strictEqual(all.status, 200)
        assert.deepStrictEqual(
          all.list?.map((e) => e.type),
          ["application_created", "application_created", "secret_rotated"]
        )
        assert.deepStrictEqual(Object.keys(all.list?.[0] ?? {}), [
          "at",
          "type",
          "app_key",
          "app_name",
          "user_id",
          "username",
          "open_id",
          "address",
          "request_id",
          "detail",
          "actor"
        ])
        const byApp = yield* api("GET", "/audit", undefined, { query: `app_key=${b.app_key}` })
        assert.deepStrictEqual(
          byApp.list?.map((e) => e.app_key),
          [b.app_key]
        )
        const byType = yield* api("GET", "/audit", undefined, { query: "type=secret_rotated&limit=1" })
        assert.deepStrictEqual(
          byType.list?.map((e) => e.type),
          ["secret_rotated"]
        )
        assert.strictEqual((yield* api("GET", "/audit", undefined, { query: "limit=2" })).list?.length, 2)
        for (const since of ["0", "1767225600", "2026-01-01", "2026-01-01T01:00:00%2B01:00"]) {
          assert.strictEqual(
            (yield* api("GET", "/audit", undefined, { query: `since=${since}` })).list?.length,
            3
          )
        }
        assert.deepStrictEqual(
          (yield* api("GET", "/audit", undefined, { query: "since=2026-01-02" })).list,
          []
        )
        for (const [query, field] of [
          ["limit=0", "limit"],
          ["limit=1001", "limit"],
          ["limit=ten", "limit"],
          ["limit=-1", "limit"],
          ["type=nope", "type"],
          ["since=yesterday", "since"],
          ["since=2026-01-01T00:00:00", "since"],
          ["appkey=x", "appkey"],
          ["limit=1&limit=2", "query"],
          ["type=%ZZ", "query"]
        ] as const) {
          expectError(yield* api("GET", "/audit", undefined, { query }), 400, "invalid_request", field)
        }
      }).pipe(Effect.provide(Audited()))
  )
})

describe("AdminApi: requests refused before the operation", () => {
  it.effect("405 with Allow for a method the path does not take; 404 for unknown or malformed paths", () =>
    Effect.gen(function* () {
      for (const [method, path, allow] of [
        ["PUT", "/applications", "GET, POST"],
        ["DELETE", "/applications", "GET, POST"],
        ["POST", "/applications/k", "GET, PATCH, DELETE"],
        ["GET", "/applications/k/secret", "POST"],
        ["GET", "/applications/k/subjects/o/tokens", "DELETE"],
        ["HEAD", "/users", "GET, POST"],
        ["POST", "/audit", "GET"]
      ] as const) {
        const r = yield* api(method, path)
        assert.strictEqual(r.status, 405, `${method} ${path}`)
        assert.strictEqual(r.headers.allow, allow)
      }
      for (const path of [
        "",
        "/",
        "/applications/",
        "/applications//secret",
        "/applications/k/extra",
        "/users/%E0%A4%A",
        "/Applications"
      ]) {
        expectError(yield* api("GET", path), 404, "not_found")
      }
      expectError(
        yield* send({ ...request("GET", "/applications"), path: "/admin/v2/applications" }),
        404,
        "not_found"
      )
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("415 for another content type or a compressed body, 413 for a body over the cap", () =>
    Effect.gen(function* () {
      const body = JSON.stringify({ name: "App", redirect_uris: [cb] })
      for (const type of [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/json; charset=latin1"
      ]) {
        const r = yield* api("POST", "/applications", undefined, {
          raw: body,
          headers: { "content-type": type }
        })
        expectError(r, 415, "invalid_request")
      }
      const noType = yield* send({
        ...request("POST", "/applications", undefined, { raw: body }),
        headers: { authorization: `Bearer ${adminToken}` }
      })
      expectError(noType, 415, "invalid_request")
      const gzip = yield* api("POST", "/applications", undefined, {
        raw: body,
        headers: { "content-encoding": "gzip" }
      })
      expectError(gzip, 415, "invalid_request")
      const charset = yield* api("POST", "/applications", undefined, {
        raw: body,
        headers: { "content-type": "Application/JSON; charset=UTF-8" }
      })
      assert.strictEqual(charset.status, 201)
      const big = yield* api("POST", "/applications", {
        name: "x".repeat(Http.maxBodyBytes),
        redirect_uris: [cb]
      })
      expectError(big, 413, "invalid_request")
      const wide = yield* api("POST", "/applications", {
        name: "€".repeat(Http.maxBodyBytes / 3 + 1),
        redirect_uris: [cb]
      })
      expectError(wide, 413, "invalid_request")
    }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "T14: a body nesting deeper than 32 levels is 400 naming the depth, checked before it is parsed",
    () =>
      Effect.gen(function* () {
        const deep = `the body nests deeper than ${Http.maxJsonDepth} levels`
        const within = (n: number, open: string, close: string) => `${open.repeat(n)}1${close.repeat(n)}`
        for (const raw of [
          "[".repeat(10_000),
          "{".repeat(10_000),
          `{"name":${"[".repeat(10_000)}`,
          // Closed and valid, within the size cap: the decoder's error formatter overflowed the stack
          `{"name":${within(8_000, "[", "]")}}`,
          `{"name":"App","redirect_uris":${within(8_000, "[", "]")}}`,
          `{"name":${within(3_000, '{"":', "}")}}`,
          `{"name":${within(Http.maxJsonDepth, "[", "]")}}`
        ]) {
          for (const [method, path] of [
            ["POST", "/applications"],
            ["PATCH", "/users/u"],
            ["POST", "/applications/k/secret"]
          ] as const) {
            const r = yield* api(method, path, undefined, { raw })
            expectError(r, 400, "invalid_request", "body")
            assert.strictEqual(r.json?.error_description, deep, raw.slice(0, 40))
          }
        }
        // Brackets inside strings do not count, and 32 levels are accepted by the scan
        const inString = yield* api("POST", "/applications", { name: "[".repeat(150), redirect_uris: [cb] })
        assert.strictEqual(inString.status, 201, inString.body)
        const escaped = yield* api("POST", "/applications", { name: '\\"[{'.repeat(40), redirect_uris: [cb] })
        assert.strictEqual(escaped.status, 201, escaped.body)
        const at32 = yield* api("POST", "/applications", undefined, {
          raw: `{"name":${within(Http.maxJsonDepth - 1, "[", "]")}}`
        })
        expectError(at32, 400, "invalid_request", "name")
        assert.strictEqual(at32.json?.error_description, "name must be a string")
      }).pipe(Effect.provide(Audited()))
  )

  it.effect("T14: a decode error names the field and never the value received", () =>
    Effect.gen(function* () {
      const secret = "s3cret-value-never-echoed"
      for (const body of [
        { name: { secret }, redirect_uris: [cb] },
        { name: "App", redirect_uris: [{ secret }] },
        { name: "App", redirect_uris: [cb], require_pkce: secret },
        { name: "App", redirect_uris: [cb], access_token_ttl: [secret] },
        { name: "App", redirect_uris: [cb], grant_types: [secret] }
      ]) {
        const r = yield* api("POST", "/applications", body)
        expectError(r, 400, "invalid_request")
        assert.notInclude(r.body, secret)
      }
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("T14: never answers 5xx to random deep or wide bodies", () =>
    Effect.gen(function* () {
      const field = fc.constantFrom("name", "redirect_uris", "scopes", "grant_types", "require_pkce", "other")
      const level = fc.constantFrom<readonly [string, string]>(["[", "]"], ['{"a":', "}"], ['{"":[', "]}"])
      const bodies = fc
        .record({
          field,
          levels: fc.array(level, { minLength: 1, maxLength: 4 }),
          depth: fc.integer({ min: 0, max: 9_000 }),
          width: fc.integer({ min: 0, max: 3_000 }),
          closed: fc.boolean(),
          leaf: fc.constantFrom("1", '"x"', "null", "[]", "{}", "true")
        })
        .map(({ field, levels, depth, width, closed, leaf }) => {
          const opens = Array.from(
            { length: depth },
            (_, i) => levels[i % levels.length] as readonly [string, string]
          )
          const inner = width === 0 ? leaf : `[${Array.from({ length: width }, () => leaf).join(",")}]`
          const close = closed
            ? opens
                .map(([, c]) => c)
                .reverse()
                .join("")
            : ""
          return `{"${field}":${opens.map(([o]) => o).join("")}${inner}${close}}`
        })
      for (const raw of fc.sample(bodies, { numRuns: 200, seed: 7 })) {
        for (const [method, path] of [
          ["POST", "/applications"],
          ["PATCH", "/applications/k"],
          ["POST", "/users"]
        ] as const) {
          const r = yield* api(method, path, undefined, { raw })
          assert.isBelow(r.status, 500, raw.slice(0, 80))
          assert.doesNotThrow(() => JSON.parse(r.body))
        }
      }
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("503 with Retry-After when the store fails; 500 for a defect, with nothing of its cause", () =>
    Effect.gen(function* () {
      const apps = yield* ApplicationStore
      const users = yield* UserStore
      const down = yield* api("GET", "/applications").pipe(
        Effect.provideService(ApplicationStore, {
          ...apps,
          list: () => Effect.fail(new StorageError({ message: "database is locked" }))
        })
      )
      expectError(down, 503, "temporarily_unavailable")
      assert.strictEqual(down.headers["retry-after"], "1")
      assert.notInclude(down.body, "locked")
      const insertDown = yield* api("POST", "/users", { username: "u1", password: "long enough" }).pipe(
        Effect.provideService(UserStore, {
          ...users,
          insert: () => Effect.fail(new StorageError({ message: "disk full" }))
        })
      )
      expectError(insertDown, 503, "temporarily_unavailable")
      const defect = yield* api("GET", "/users").pipe(
        Effect.provideService(UserStore, { ...users, list: () => Effect.die(new Error("boom at line 42")) })
      )
      expectError(defect, 500, "server_error")
      assert.notInclude(defect.body, "boom")
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("serves its OpenAPI document", () =>
    Effect.gen(function* () {
      const r = yield* api("GET", "/openapi.json")
      assert.strictEqual(r.status, 200)
      assert.deepStrictEqual(r.json, OpenApi.adminDocument())
      assert.strictEqual((yield* api("GET", "/openapi.json", undefined, { token: null })).status, 401)
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("never answers 5xx, whatever the method, path, query, headers and body", () =>
    Effect.gen(function* () {
      const a = yield* createApp()
      const { user } = yield* newUser()
      const segment = fc.oneof(
        fc.constantFrom(
          "applications",
          "users",
          "audit",
          "secret",
          "subjects",
          "tokens",
          "consents",
          "openapi.json"
        ),
        fc.constantFrom(a.app_key, user.userId, "%", "%2F", "..", "-", "%00"),
        fc.string({ maxLength: 8 })
      )
      const value = fc.jsonValue({ maxDepth: 3 })
      const bodies = fc.oneof(
        fc.string({ maxLength: 64 }),
        value.map((v) => JSON.stringify(v)),
        fc
          .dictionary(
            fc.constantFrom(
              "name",
              "redirect_uris",
              "scopes",
              "grant_types",
              "require_pkce",
              "access_token_ttl",
              "refresh_token_ttl",
              "grace_seconds",
              "username",
              "password",
              "disabled"
            ),
            value
          )
          .map((o) => JSON.stringify(o))
      )
      const requests = fc.record({
        method: fc.constantFrom("GET", "POST", "PATCH", "DELETE", "PUT", "HEAD", "OPTIONS"),
        segments: fc.array(segment, { maxLength: 5 }),
        query: fc.oneof(
          fc.constant(""),
          fc.string({ maxLength: 20 }),
          fc.constantFrom("limit=5", "since=0", "type=user_created")
        ),
        type: fc.constantFrom(
          undefined,
          "application/json",
          "text/plain",
          "application/json; charset=utf-16"
        ),
        body: bodies
      })
      const samples = fc.sample(requests, { numRuns: 300, seed: 42 })
      for (const r of samples) {
        const path = `/${r.segments.join("/")}`
        const res = yield* api(r.method, path, undefined, {
          query: r.query,
          raw: r.body,
          headers: r.type === undefined ? {} : { "content-type": r.type }
        })
        assert.isBelow(res.status, 500, `${r.method} ${path} ${r.body}`)
        assert.doesNotThrow(() => JSON.parse(res.body))
      }
    }).pipe(Effect.provide(Audited()))
  )
})

describe("AdminApi: a new password and the user's sign-in sessions", () => {
  it.effect(
    "PATCH password ends the user's sessions unless keep_sessions; keep_sessions without password is refused",
    () =>
      Effect.gen(function* () {
        const { user, password, query } = yield* setup()
        const b = new Browser()
        yield* signIn(b, query, user.username, password)
        view(yield* b.get(query), "Consent")
        expectError(
          yield* api("PATCH", `/users/${user.userId}`, { keep_sessions: true }),
          400,
          "invalid_request",
          "keep_sessions"
        )
        const kept = yield* api("PATCH", `/users/${user.userId}`, {
          password: "second password",
          keep_sessions: true
        })
        assert.strictEqual(kept.status, 200, kept.body)
        view(yield* b.get(query), "Consent")
        const ended = yield* api("PATCH", `/users/${user.userId}`, { password: "third password" })
        assert.strictEqual(ended.status, 200, ended.body)
        view(yield* b.get(query), "SignIn")
        const events = yield* Effect.flatMap(AuditStore, (s) => s.query({ limit: 10, type: "user_updated" }))
        assert.deepStrictEqual(
          events.map((e) => e.detail),
          ["password set; sessions ended", "password set; sessions kept"]
        )
      }).pipe(Effect.provide(Audited()))
  )
})

describe("AdminApi: public clients and access token fields", () => {
  it.effect("create public: 201 without app_secret; client_id alone works at the token endpoint", () =>
    Effect.gen(function* () {
      const created = yield* createApp({ public: true, access_token_format: "jwt" })
      assert.notProperty(created, "app_secret")
      assert.isTrue(created.public)
      assert.strictEqual(created.access_token_format, "jwt")
      assert.isNull(created.access_token_audience)
      assert.deepStrictEqual(created.grant_types, ["authorization_code", "refresh_token"])
      assert.isTrue(created.require_pkce)
      const r = yield* token({ grant_type: "refresh_token", refresh_token: "x", client_id: created.app_key })
      assert.strictEqual(r.json?.error, "invalid_grant", "authenticated as the public application")
      const refused = yield* api("POST", "/applications", {
        name: "Bad",
        redirect_uris: [cb],
        public: true,
        grant_types: ["client_credentials"]
      })
      expectError(refused, 400, "invalid_request", "grant_types")
      const badFormat = yield* api("POST", "/applications", {
        name: "Bad",
        redirect_uris: [cb],
        access_token_format: "x"
      })
      assert.strictEqual(badFormat.status, 400)
      const shown = yield* api("GET", `/applications/${created.app_key}`)
      assert.deepInclude(shown.json, {
        public: true,
        access_token_format: "jwt",
        access_token_audience: null
      })
    }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "PATCH public: false answers a new app_secret once; public: true answers none and ends the secret",
    () =>
      Effect.gen(function* () {
        const app = yield* createApp({ grant_types: ["authorization_code", "refresh_token"] })
        const toPublic = yield* api("PATCH", `/applications/${app.app_key}`, {
          public: true,
          access_token_audience: "https://api.example/"
        })
        assert.strictEqual(toPublic.status, 200, toPublic.body)
        assert.notProperty(toPublic.json, "app_secret")
        assert.deepInclude(toPublic.json, { public: true, access_token_audience: "https://api.example/" })
        const old = yield* token({ grant_type: "client_credentials" }, basicOf(app.app_key, app.app_secret))
        assert.strictEqual(old.status, 401)
        const toConfidential = yield* api("PATCH", `/applications/${app.app_key}`, { public: false })
        assert.strictEqual(toConfidential.status, 200, toConfidential.body)
        const secret = toConfidential.json?.app_secret as string
        assert.match(secret, /^[A-Za-z0-9_-]{43}$/)
        assert.isFalse(toConfidential.json?.public)
        const shown = yield* api("GET", `/applications/${app.app_key}`)
        assert.notInclude(shown.body, secret)
        const works = yield* token(
          { grant_type: "refresh_token", refresh_token: "x" },
          basicOf(app.app_key, secret)
        )
        assert.strictEqual(works.json?.error, "invalid_grant", "the new secret authenticates")
        const plain = yield* api("PATCH", `/applications/${app.app_key}`, { name: "Renamed" })
        assert.notProperty(plain.json, "app_secret")
      }).pipe(Effect.provide(Audited()))
  )
})

describe("AdminApi: signing keys", () => {
  it.effect("list creates the first key; rotate makes a new signing key, audited; never a private part", () =>
    Effect.gen(function* () {
      const first = yield* api("GET", "/keys")
      assert.strictEqual(first.status, 200, first.body)
      assert.lengthOf(first.list ?? [], 1)
      assert.deepStrictEqual(Object.keys(first.list?.[0] ?? {}), [
        "kid",
        "alg",
        "status",
        "created_at",
        "retired_at",
        "publish_until"
      ])
      assert.deepInclude(first.list?.[0], { alg: "ES256", status: "signing", retired_at: null })
      const rotated = yield* api("POST", "/keys/rotate", { algorithm: "RS256" })
      assert.strictEqual(rotated.status, 200, rotated.body)
      assert.deepInclude(rotated.json, { alg: "RS256", status: "signing" })
      const empty = yield* api("POST", "/keys/rotate")
      assert.strictEqual(empty.status, 200, empty.body)
      assert.strictEqual(empty.json?.alg, "ES256", "no body: the configured algorithm")
      const listed = yield* api("GET", "/keys")
      assert.deepStrictEqual(
        listed.list?.map((k) => k.status),
        ["signing", "published", "published"]
      )
      assert.strictEqual(listed.list?.[0]?.kid, empty.json?.kid)
      assert.notMatch(listed.body, /"d"|private|sealed/i)
      const bad = yield* api("POST", "/keys/rotate", { algorithm: "HS256" })
      expectError(bad, 400, "invalid_request", "algorithm")
      const events = yield* Effect.flatMap(AuditStore, (s) =>
        s.query({ limit: 10, type: "signing_key_rotated" })
      )
      assert.lengthOf(events, 2)
      assert.deepInclude(events[0], { actor: "admin-api", detail: `kid ${empty.json?.kid}, ES256` })
    }).pipe(Effect.provide(Audited()))
  )
})

describe("AdminApi: the first rotation", () => {
  it.effect("rotating on a store without keys makes the first key too, and leaves it published", () =>
    Effect.gen(function* () {
      const rotated = yield* api("POST", "/keys/rotate", {})
      assert.strictEqual(rotated.status, 200, rotated.body)
      const listed = yield* api("GET", "/keys")
      assert.deepStrictEqual(
        listed.list?.map((k) => [k.kid === rotated.json?.kid, k.status]),
        [
          [true, "signing"],
          [false, "published"]
        ]
      )
    }).pipe(Effect.provide(Audited()))
  )
})

describe("AdminApi: web origins, token endpoint auth method and scope delimiter", () => {
  it.effect("create and show them; a default application shows [], client_secret_basic and comma", () =>
    Effect.gen(function* () {
      const created = yield* createApp({
        web_origins: ["https://spa.example", "http://localhost:5173", "https://spa.example"],
        token_endpoint_auth_method: "client_secret_post",
        scope_delimiter: "space"
      })
      assert.deepInclude(created, {
        web_origins: ["https://spa.example", "http://localhost:5173"],
        token_endpoint_auth_method: "client_secret_post",
        scope_delimiter: "space"
      })
      const shown = yield* api("GET", `/applications/${created.app_key}`)
      assert.deepInclude(shown.json, {
        web_origins: ["https://spa.example", "http://localhost:5173"],
        token_endpoint_auth_method: "client_secret_post",
        scope_delimiter: "space"
      })
      const plain = yield* createApp()
      assert.deepInclude(plain, {
        web_origins: [],
        token_endpoint_auth_method: "client_secret_basic",
        scope_delimiter: "comma"
      })
      const pub = yield* createApp({ public: true })
      assert.strictEqual(pub.token_endpoint_auth_method, "none", "a public application sends no secret")
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("PATCH replaces the web origins (an empty array removes them) and records the fields", () =>
    Effect.gen(function* () {
      const app = yield* createApp({ web_origins: ["https://a.example"] })
      const replaced = yield* api("PATCH", `/applications/${app.app_key}`, {
        web_origins: ["https://b.example"],
        token_endpoint_auth_method: "client_secret_post",
        scope_delimiter: "space"
      })
      assert.strictEqual(replaced.status, 200, replaced.body)
      assert.deepInclude(replaced.json, {
        web_origins: ["https://b.example"],
        token_endpoint_auth_method: "client_secret_post",
        scope_delimiter: "space"
      })
      const cleared = yield* api("PATCH", `/applications/${app.app_key}`, { web_origins: [] })
      assert.deepStrictEqual(cleared.json?.web_origins, [])
      const audit = yield* api("GET", "/audit", undefined, { query: `app_key=${app.app_key}` })
      const details = (audit.list ?? []).map((e) => e.detail)
      assert.include(details, "changed web_origins, token_endpoint_auth_method, scope_delimiter")
      assert.include(details, "changed web_origins")
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("400 invalid_request naming the field for a bad value, and nothing changes", () =>
    Effect.gen(function* () {
      const app = yield* createApp({ web_origins: ["https://a.example"] })
      const before = (yield* api("GET", `/applications/${app.app_key}`)).body
      for (const [body, field] of [
        [{ web_origins: ["https://a.example/path"] }, "web_origins"],
        [{ web_origins: ["http://a.example"] }, "web_origins"],
        [{ web_origins: ["https://*.example"] }, "web_origins"],
        [{ web_origins: "https://a.example" }, "web_origins"],
        [{ token_endpoint_auth_method: "private_key_jwt" }, "token_endpoint_auth_method"],
        [{ token_endpoint_auth_method: "none" }, "token_endpoint_auth_method"],
        [{ scope_delimiter: "tab" }, "scope_delimiter"],
        [{ name: "Renamed", scope_delimiter: "SPACE" }, "scope_delimiter"]
      ] as const) {
        expectError(yield* api("PATCH", `/applications/${app.app_key}`, body), 400, "invalid_request", field)
        expectError(
          yield* api("POST", "/applications", { name: "Bad", redirect_uris: [cb], ...body }),
          400,
          "invalid_request",
          field
        )
      }
      assert.strictEqual((yield* api("GET", `/applications/${app.app_key}`)).body, before)
      assert.strictEqual((yield* api("GET", "/applications")).list?.length, 1)
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("a public application may not register client_secret_post: it has no App Secret", () =>
    Effect.gen(function* () {
      expectError(
        yield* api("POST", "/applications", {
          name: "Native",
          redirect_uris: [cb],
          public: true,
          token_endpoint_auth_method: "client_secret_post"
        }),
        400,
        "invalid_request",
        "token_endpoint_auth_method"
      )
      const pub = yield* createApp({ public: true })
      expectError(
        yield* api("PATCH", `/applications/${pub.app_key}`, {
          token_endpoint_auth_method: "client_secret_post"
        }),
        400,
        "invalid_request",
        "token_endpoint_auth_method"
      )
      const post = yield* createApp({
        grant_types: ["authorization_code", "refresh_token"],
        token_endpoint_auth_method: "client_secret_post"
      })
      expectError(
        yield* api("PATCH", `/applications/${post.app_key}`, {
          public: true,
          token_endpoint_auth_method: "client_secret_post"
        }),
        400,
        "invalid_request",
        "token_endpoint_auth_method"
      )
      const madePublic = yield* api("PATCH", `/applications/${post.app_key}`, { public: true })
      assert.strictEqual(madePublic.json?.token_endpoint_auth_method, "none")
    }).pipe(Effect.provide(Audited()))
  )
})

describe("AdminApi: a user's second factor", () => {
  it.effect(
    "DELETE /users/{user}/mfa removes the authenticator app and recovery codes, audited as mfa_reset by admin-api; an unknown user is 404",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(1_800_000_000_000)
        const { user } = yield* newUser("mfa-user")
        const { secret } = yield* SecondFactor.enrol(user.userId, user.username)
        const code = yield* Totp.codeAt(
          Totp.fromBase32(secret) ?? new Uint8Array(),
          Totp.stepAt(1_800_000_000)
        )
        yield* SecondFactor.confirm(user.userId, code)
        assert.isTrue(yield* SecondFactor.required(user.userId))
        const reset = yield* api("DELETE", "/users/mfa-user/mfa")
        assert.deepStrictEqual(
          [reset.status, reset.json],
          [200, { user_id: user.userId, username: "mfa-user", removed: true }]
        )
        assert.deepStrictEqual(yield* SecondFactor.status(user.userId), {
          state: "none",
          recoveryCodesLeft: 0
        })
        const again = yield* api("DELETE", `/users/${user.userId}/mfa`)
        assert.deepStrictEqual(again.json, { user_id: user.userId, username: "mfa-user", removed: false })
        const events = yield* Effect.flatMap(AuditStore, (a) => a.query({ limit: 10, type: "mfa_reset" }))
        assert.deepStrictEqual(
          events.map((e) => [e.userId, e.actor, e.requestId, e.detail]),
          [
            [user.userId, "admin-api", "req-admin-1", "nothing to remove"],
            [user.userId, "admin-api", "req-admin-1", "authenticator and recovery codes removed"]
          ]
        )
        expectError(yield* api("DELETE", "/users/nobody/mfa"), 404, "not_found")
        const wrongMethod = yield* api("GET", `/users/${user.userId}/mfa`)
        assert.strictEqual(wrongMethod.status, 405)
        assert.strictEqual(wrongMethod.headers.allow, "DELETE")
      }).pipe(Effect.provide(Audited()))
  )
})

describe("AdminApi: post-logout redirect URIs", () => {
  it.effect(
    "create, show, replace and clear them; a bad one is 400 naming the field, and nothing changes",
    () =>
      Effect.gen(function* () {
        const app = yield* createApp({
          post_logout_redirect_uris: ["https://app.example/bye", "https://app.example/bye"]
        })
        assert.deepStrictEqual(app.post_logout_redirect_uris, ["https://app.example/bye"])
        assert.deepStrictEqual((yield* createApp()).post_logout_redirect_uris, [])
        const replaced = yield* api("PATCH", `/applications/${app.app_key}`, {
          post_logout_redirect_uris: ["http://127.0.0.1:8080/bye"]
        })
        assert.deepStrictEqual(replaced.json?.post_logout_redirect_uris, ["http://127.0.0.1:8080/bye"])
        const before = (yield* api("GET", `/applications/${app.app_key}`)).body
        for (const body of [
          { post_logout_redirect_uris: ["http://app.example/bye"] },
          { post_logout_redirect_uris: ["https://app.example/bye#x"] },
          { post_logout_redirect_uris: ["com.example.app:/bye"] },
          { post_logout_redirect_uris: "https://app.example/bye" }
        ]) {
          expectError(
            yield* api("PATCH", `/applications/${app.app_key}`, body),
            400,
            "invalid_request",
            "post_logout_redirect_uris"
          )
        }
        assert.strictEqual((yield* api("GET", `/applications/${app.app_key}`)).body, before)
        const cleared = yield* api("PATCH", `/applications/${app.app_key}`, { post_logout_redirect_uris: [] })
        assert.deepStrictEqual(cleared.json?.post_logout_redirect_uris, [])
        const audit = yield* api("GET", "/audit", undefined, { query: `app_key=${app.app_key}` })
        assert.include(
          (audit.list ?? []).map((e) => e.detail),
          "changed post_logout_redirect_uris"
        )
        const doc = JSON.stringify(yield* api("GET", "/openapi.json"))
        assert.include(doc, "post_logout_redirect_uris")
      }).pipe(Effect.provide(Audited()))
  )
})
