/**
 * Application review and ownership (docs/platform.md): the operator's transitions through the
 * admin API, what an application that is not active is refused at each endpoint, suspension
 * ending what was issued, owners, and the developer's create and update with review on and off.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as Developer from "../src/admin/Developer.js"
import * as Application from "../src/model/Application.js"
import * as Scope from "../src/model/Scope.js"
import * as Authorize from "../src/oauth/Authorize.js"
import * as Bearer from "../src/oauth/Bearer.js"
import type * as Audit from "../src/security/Audit.js"
import { ApplicationStore } from "../src/storage/ApplicationStore.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import { Audited, adminApi as api } from "./adminApi.js"
import { Browser, errorOf } from "./browser.js"
import { cb, form, issueCode, newApp, newUser, post, TestLayer, token } from "./fixtures.js"

const introspect = (t: string, basic: string) => post("/oauth2/oauth2/introspect", { token: t }, basic)

/** Move the application to `status` through the store, as another write would. */
const setStatus = (appKey: string, from: "active" | "pending", to: "pending" | "suspended") =>
  Effect.flatMap(ApplicationStore, (apps) => apps.setStatus(appKey, { from, to, reason: null }, 0))

const events = (type: Audit.EventType) =>
  Effect.map(
    Effect.flatMap(AuditStore, (s) => s.query({ limit: 100, type })),
    (found) => found.map((e) => [e.appKey, e.detail, e.actor ?? null])
  )

/** An active application with a user, a client_credentials token, an access and refresh token pair and an unused code. */
const issued = Effect.gen(function* () {
  const { app, basic } = yield* newApp()
  const { user, password } = yield* newUser()
  const cc = yield* token({ grant_type: "client_credentials" }, basic)
  const pw = yield* token({ grant_type: "password", username: user.username, password }, basic)
  assert.strictEqual(pw.status, 200, pw.body)
  const code = yield* issueCode(app.appKey, user.userId)
  return {
    app,
    basic,
    user,
    password,
    access: cc.json?.access_token as string,
    userAccess: pw.json?.access_token as string,
    refresh: pw.json?.refresh_token as string,
    code
  }
})

describe("review: the operator's transitions (admin API)", () => {
  it.effect(
    "approve, reject, suspend and reinstate move the status, keep the reason and are audited with the actor",
    () =>
      Effect.gen(function* () {
        const { app } = yield* newApp()
        const { user } = yield* newUser()
        const shown = yield* api("GET", `/applications/${app.appKey}`)
        assert.deepInclude(shown.json, { status: "active", status_reason: null })
        const suspended = yield* api("POST", `/applications/${app.appKey}/suspend`, {
          reason: "phishing reports"
        })
        assert.strictEqual(suspended.status, 200, suspended.body)
        assert.deepInclude(suspended.json, { status: "suspended", status_reason: "phishing reports" })
        const reinstated = yield* api("POST", `/applications/${app.appKey}/reinstate`)
        assert.deepInclude(reinstated.json, { status: "active", status_reason: null })
        // A developer's pending application: approved, or rejected with a reason
        const mine = yield* Developer.createApplication(user.userId, { name: "Mine", redirectUris: [cb] })
        assert.strictEqual(mine.app.status, "pending")
        const approved = yield* api("POST", `/applications/${mine.app.appKey}/approve`)
        assert.deepInclude(approved.json, { status: "active", status_reason: null })
        const other = yield* Developer.createApplication(user.userId, { name: "Other", redirectUris: [cb] })
        const rejected = yield* api("POST", `/applications/${other.app.appKey}/reject`, {
          reason: "  no privacy policy "
        })
        assert.deepInclude(rejected.json, { status: "rejected", status_reason: "no privacy policy" })
        assert.strictEqual(Application.status(yield* Admin.findApplication(app.appKey)), "active")
        assert.deepStrictEqual(yield* events("application_suspended"), [
          [app.appKey, 'active -> suspended: "phishing reports"', "admin-api"]
        ])
        assert.deepStrictEqual(yield* events("application_reinstated"), [
          [app.appKey, "suspended -> active", "admin-api"]
        ])
        assert.deepStrictEqual(yield* events("application_approved"), [
          [mine.app.appKey, "pending -> active", "admin-api"]
        ])
        assert.deepStrictEqual(yield* events("application_rejected"), [
          [other.app.appKey, 'pending -> rejected: "no privacy policy"', "admin-api"]
        ])
      }).pipe(Effect.provide(Audited({ appReview: true })))
  )

  it.effect(
    "an illegal transition is 409 conflict and changes nothing; a missing or extra reason is 400; an unknown app 404",
    () =>
      Effect.gen(function* () {
        const { app } = yield* newApp()
        for (const [action, body] of [
          ["approve", undefined],
          ["reject", { reason: "no" }],
          ["reinstate", undefined]
        ] as const) {
          const r = yield* api("POST", `/applications/${app.appKey}/${action}`, body)
          assert.strictEqual(r.status, 409, r.body)
          assert.strictEqual(r.json.error, "conflict")
          assert.include(String(r.json.error_description), "that is active")
        }
        const noReason = yield* api("POST", `/applications/${app.appKey}/suspend`, { reason: "   " })
        assert.deepInclude(noReason.json, { error: "invalid_request", field: "reason" })
        const missing = yield* api("POST", `/applications/${app.appKey}/suspend`, {})
        assert.strictEqual(missing.status, 400)
        const bidi = yield* api("POST", `/applications/${app.appKey}/suspend`, { reason: "a\u202eb" })
        assert.deepInclude(bidi.json, { error: "invalid_request", field: "reason" })
        const long = yield* api("POST", `/applications/${app.appKey}/suspend`, { reason: "x".repeat(501) })
        assert.deepInclude(long.json, { field: "reason" })
        assert.strictEqual((yield* Admin.findApplication(app.appKey)).status, "active")
        const extra = yield* Effect.flip(Admin.reviewApplication(app.appKey, "reinstate", "why"))
        assert.strictEqual(extra._tag, "InvalidField")
        const unknown = yield* api("POST", "/applications/no-such-app/approve")
        assert.strictEqual(unknown.status, 404)
        assert.deepStrictEqual(yield* events("application_suspended"), [])
      }).pipe(Effect.provide(Audited()))
  )

  it.effect("suspending answers 409 when another change came first (the store's conditional write)", () =>
    Effect.gen(function* () {
      const { app } = yield* newApp()
      yield* setStatus(app.appKey, "active", "pending")
      const refused = yield* Effect.flip(Admin.reviewApplication(app.appKey, "suspend", "late"))
      assert.strictEqual(refused._tag, "IllegalTransition")
    }).pipe(Effect.provide(Audited()))
  )
})

describe("review: an application that is not active", () => {
  it.effect("is invalid_client (401) at the token endpoint for every grant, and told why", () =>
    Effect.gen(function* () {
      const { app, basic, user, password, refresh, code } = yield* issued
      yield* setStatus(app.appKey, "active", "pending")
      for (const params of [
        { grant_type: "client_credentials" },
        { grant_type: "password", username: user.username, password },
        { grant_type: "refresh_token", refresh_token: refresh },
        { grant_type: "authorization_code", code, redirect_uri: cb }
      ]) {
        const r = yield* token(params, basic)
        assert.strictEqual(r.status, 401, `${params.grant_type}: ${r.body}`)
        assert.deepStrictEqual(r.json, {
          error: "invalid_client",
          error_description: "this application is pending and may not obtain tokens"
        })
      }
      // A wrong secret is refused as before: nothing about the status
      const wrong = yield* token({ grant_type: "client_credentials" }, `Basic ${btoa(`${app.appKey}:nope`)}`)
      assert.strictEqual(wrong.json?.error_description, "client authentication failed")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("starts no authorization: the error page application_unavailable, never a redirect", () =>
    Effect.gen(function* () {
      const { app } = yield* newApp()
      const query = { response_type: "code", client_id: app.appKey, redirect_uri: cb, state: "s" }
      yield* setStatus(app.appKey, "active", "pending")
      const page = errorOf(yield* new Browser().get(query))
      assert.deepStrictEqual(
        [page.status, page.error, page.problem],
        [400, "unauthorized_client", { reason: "application_unavailable" }]
      )
      const implicit = yield* Effect.flip(Authorize.validate(form({ ...query, response_type: "token" })))
      assert.strictEqual(implicit._tag, "ErrorPage")
      if (implicit._tag === "ErrorPage") assert.strictEqual(implicit.reason, "application_unavailable")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "its tokens introspect inactive and are refused as Bearer tokens while it is pending; approved, they work again",
    () =>
      Effect.gen(function* () {
        const { app, basic, access } = yield* issued
        const admit = Bearer.admit([`Bearer ${access}`], Scope.empty)
        assert.isTrue(Either.isRight(yield* admit))
        yield* setStatus(app.appKey, "active", "pending")
        assert.deepStrictEqual((yield* introspect(access, basic)).json, { active: false })
        assert.isTrue(Either.isLeft(yield* admit))
        yield* Admin.reviewApplication(app.appKey, "approve")
        assert.strictEqual((yield* introspect(access, basic)).json?.active, true)
        assert.isTrue(Either.isRight(yield* admit))
      }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "suspended: every token is revoked and every unused code deleted; reinstating brings none back",
    () =>
      Effect.gen(function* () {
        const { app, basic, access, userAccess, refresh, code } = yield* issued
        yield* Admin.reviewApplication(app.appKey, "suspend", "abuse")
        assert.deepStrictEqual((yield* introspect(access, basic)).json, { active: false })
        yield* Admin.reviewApplication(app.appKey, "reinstate")
        for (const t of [access, userAccess, refresh]) {
          assert.deepStrictEqual((yield* introspect(t, basic)).json, { active: false })
        }
        const refreshed = yield* token({ grant_type: "refresh_token", refresh_token: refresh }, basic)
        assert.strictEqual(refreshed.json?.error, "invalid_grant")
        const redeemed = yield* token({ grant_type: "authorization_code", code, redirect_uri: cb }, basic)
        assert.strictEqual(redeemed.json?.error, "invalid_grant")
        // Active again: new tokens are issued
        assert.strictEqual((yield* token({ grant_type: "client_credentials" }, basic)).status, 200)
      }).pipe(Effect.provide(Audited()))
  )
})

describe("review: owners", () => {
  it.effect(
    "operators add, list and remove co-owners (audited); a user's deletion removes them from owners",
    () =>
      Effect.gen(function* () {
        const { app } = yield* newApp()
        const { user } = yield* newUser()
        const { user: second } = yield* newUser()
        assert.deepStrictEqual((yield* api("GET", `/applications/${app.appKey}/owners`)).json.owners, [])
        const added = yield* api("POST", `/applications/${app.appKey}/owners`, { user: user.username })
        assert.deepStrictEqual(added.json, {
          app_key: app.appKey,
          user_id: user.userId,
          username: user.username,
          owner: true,
          changed: true
        })
        const again = yield* api("POST", `/applications/${app.appKey}/owners`, { user: user.userId })
        assert.strictEqual(again.json.changed, false)
        yield* api("POST", `/applications/${app.appKey}/owners`, { user: second.userId })
        assert.deepStrictEqual((yield* api("GET", `/applications/${app.appKey}/owners`)).json.owners, [
          user.userId,
          second.userId
        ])
        assert.deepStrictEqual(
          (yield* Developer.applications(user.userId)).map((a) => a.appKey),
          [app.appKey]
        )
        const removed = yield* api("DELETE", `/applications/${app.appKey}/owners/${user.userId}`)
        assert.strictEqual(removed.json.owner, false)
        const notOwner = yield* api("DELETE", `/applications/${app.appKey}/owners/${user.userId}`)
        assert.strictEqual(notOwner.status, 404)
        assert.strictEqual(
          (yield* api("POST", `/applications/${app.appKey}/owners`, { user: "nobody" })).status,
          404
        )
        yield* Admin.deleteUser(second)
        assert.deepStrictEqual(yield* Admin.listOwners(app.appKey), [])
        const recorded = (type: Audit.EventType) =>
          Effect.map(
            Effect.flatMap(AuditStore, (s) => s.query({ limit: 100, type })),
            (found) => found.map((e) => [e.appKey, e.userId, e.actor ?? null])
          )
        assert.deepStrictEqual(yield* recorded("application_owner_added"), [
          [app.appKey, second.userId, "admin-api"],
          [app.appKey, user.userId, "admin-api"]
        ])
        assert.deepStrictEqual(yield* recorded("application_owner_removed"), [
          [app.appKey, user.userId, "admin-api"]
        ])
      }).pipe(Effect.provide(Audited()))
  )
})

describe("review: a developer's applications", () => {
  const developer = (review: boolean) =>
    Effect.gen(function* () {
      const { user } = yield* newUser()
      const created = yield* Developer.createApplication(user.userId, {
        name: "Dev App",
        redirectUris: [cb],
        scope: "read"
      })
      assert.strictEqual(Application.status(created.app), review ? "pending" : "active")
      assert.deepStrictEqual(yield* Admin.listOwners(created.app.appKey), [user.userId])
      return { user, app: created.app }
    })

  it.effect(
    "with review on: created pending and owned; approved, a new redirect URI or scope sends it back to review",
    () =>
      Effect.gen(function* () {
        const { user, app } = yield* developer(true)
        yield* Admin.reviewApplication(app.appKey, "approve")
        const renamed = yield* Developer.updateApplication(user.userId, app.appKey, { name: "Renamed" })
        assert.strictEqual(renamed.app.status, "active")
        const sameUris = yield* Developer.updateApplication(user.userId, app.appKey, { redirectUris: [cb] })
        assert.strictEqual(sameUris.app.status, "active")
        const moved = yield* Developer.updateApplication(user.userId, app.appKey, {
          redirectUris: ["https://app.example/other"]
        })
        assert.strictEqual(moved.app.status, "pending")
        assert.strictEqual((yield* Admin.findApplication(app.appKey)).status, "pending")
        yield* Admin.reviewApplication(app.appKey, "approve")
        const scoped = yield* Developer.updateApplication(user.userId, app.appKey, { scope: "read,write" })
        assert.strictEqual(scoped.app.status, "pending")
        const created = yield* Effect.flatMap(AuditStore, (s) =>
          s.query({ limit: 10, type: "application_created" })
        )
        assert.deepStrictEqual(
          created.map((e) => [e.userId, e.detail]),
          [[user.userId, `name "Dev App", for user ${user.userId}, pending`]]
        )
        const updated = yield* Effect.flatMap(AuditStore, (s) =>
          s.query({ limit: 10, type: "application_updated" })
        )
        assert.include(updated[0]?.detail ?? "", "changed scopes; back to review")
      }).pipe(Effect.provide(Audited({ appReview: true })))
  )

  it.effect("with review off: created active, and changes keep it active", () =>
    Effect.gen(function* () {
      const { user, app } = yield* developer(false)
      const moved = yield* Developer.updateApplication(user.userId, app.appKey, {
        redirectUris: ["https://app.example/other"],
        scope: "read,write"
      })
      assert.strictEqual(moved.app.status, "active")
    }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "a developer changes only their own applications, not a suspended one, and imports no App Key",
    () =>
      Effect.gen(function* () {
        const { user, app } = yield* developer(true)
        const { user: stranger } = yield* newUser()
        const notTheirs = yield* Effect.flip(
          Developer.updateApplication(stranger.userId, app.appKey, { name: "X" })
        )
        assert.strictEqual(notTheirs._tag, "NotFound")
        yield* Admin.reviewApplication(app.appKey, "approve")
        yield* Admin.reviewApplication(app.appKey, "suspend", "abuse")
        const locked = yield* Effect.flip(Developer.updateApplication(user.userId, app.appKey, { name: "X" }))
        assert.strictEqual(locked._tag, "NotEditable")
        assert.strictEqual((yield* Admin.findApplication(app.appKey)).name, "Dev App")
        const imported = yield* Effect.flip(
          Developer.createApplication(user.userId, { name: "I", redirectUris: [cb], appKey: "chosen-key" })
        )
        assert.strictEqual(imported._tag, "InvalidField")
        const nobody = yield* Effect.flip(
          Developer.createApplication("no-such-user", { name: "I", redirectUris: [cb] })
        )
        assert.strictEqual(nobody._tag, "NotFound")
        assert.isTrue(Option.isNone(yield* Effect.flatMap(ApplicationStore, (s) => s.find("chosen-key"))))
      }).pipe(Effect.provide(Audited({ appReview: true })))
  )
})
