import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, TestClock } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as Application from "../src/model/Application.js"
import * as Audit from "../src/security/Audit.js"
import * as Digest from "../src/services/Digest.js"
import { ApplicationStore } from "../src/storage/ApplicationStore.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import * as Memory from "../src/storage/Memory.js"
import { TokenStore } from "../src/storage/TokenStore.js"
import { cb, issueCode, newApp, newUser, TestLayer, token } from "./fixtures.js"

describe("application registration", () => {
  it("refuses redirect URIs that docs/security.md forbids (fragments, userinfo, http off loopback, dangerous schemes)", () => {
    for (const uri of [
      "http://app.example/cb",
      "https://app.example/cb#x",
      "javascript:alert(1)",
      "data:text/html,hi",
      "file:///etc/passwd",
      "vbscript:x",
      "/relative/cb",
      "https://user:pw@app.example/cb",
      "https://app.example/c b",
      "https:\\\\app.example\\cb",
      "com.example.app:/cb",
      ""
    ]) {
      assert.isTrue(Either.isLeft(Application.validateRedirectUri(uri)), uri)
    }
  })

  it("accepts https and loopback http redirect URIs", () => {
    for (const uri of [
      "https://app.example/cb",
      "https://app.example/cb?x=1",
      "http://127.0.0.1:8000/cb",
      "http://[::1]/cb",
      "http://localhost:3000/cb"
    ]) {
      assert.isTrue(Either.isRight(Application.validateRedirectUri(uri)), uri)
    }
  })

  it.effect("creates an application with the default grant types and a 256-bit base64url secret", () =>
    Effect.gen(function* () {
      const { app, appSecret } = yield* Admin.createApplication({
        name: "Shop",
        redirectUris: ["https://shop.example/cb"],
        scope: "b,a"
      })
      assert.deepStrictEqual(
        [...app.grantTypes],
        ["authorization_code", "refresh_token", "client_credentials"]
      )
      assert.deepStrictEqual([...app.scopes], ["a", "b"])
      assert.match(appSecret, /^[A-Za-z0-9_-]{43}$/)
      assert.notInclude(app.secretDigest, appSecret)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an imported secret must be at least 32 characters; key and secret come together", () =>
    Effect.gen(function* () {
      const short = yield* Effect.either(
        Admin.createApplication({
          name: "x",
          redirectUris: ["https://a.example/cb"],
          appKey: "k1",
          appSecret: "s".repeat(31)
        })
      )
      assert.isTrue(Either.isLeft(short))
      const alone = yield* Effect.either(
        Admin.createApplication({ name: "x", redirectUris: ["https://a.example/cb"], appKey: "k1" })
      )
      assert.isTrue(Either.isLeft(alone))
      const ok = yield* Admin.createApplication({
        name: "x",
        redirectUris: ["https://a.example/cb"],
        appKey: "k1",
        appSecret: "s".repeat(32)
      })
      assert.strictEqual(ok.app.appKey, "k1")
      const dup = yield* Effect.either(
        Admin.createApplication({
          name: "y",
          redirectUris: ["https://a.example/cb"],
          appKey: "k1",
          appSecret: "s".repeat(32)
        })
      )
      assert.isTrue(Either.isLeft(dup))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("generated App Keys never start with - or _ (command lines would read them as options)", () =>
    Effect.gen(function* () {
      for (let i = 0; i < 200; i++) {
        const { app } = yield* Admin.createApplication({
          name: `a${i}`,
          redirectUris: ["https://a.example/cb"]
        })
        assert.match(app.appKey, /^[A-Za-z0-9][A-Za-z0-9_-]{21}$/)
      }
    }).pipe(Effect.provide(TestLayer()))
  )

  it("refuses redirect URIs that are not printable ASCII (no Location header could carry them); accepts them percent-encoded", () => {
    const refused = [
      "http://127.0.0.1:9000/cb/\u20ac",
      "https://app.example/caf\u00e9",
      "https://\u0430pp.example/cb",
      "https://app.example/cb\u0085",
      "https://app.example/cb\u2028",
      "https://app.example/cb\u202e",
      "https://app.example/cb\u00a0",
      "https://app.example/cb/\ud83d\ude00",
      "https://app.example/c b",
      "https://app.example/cb\t",
      "https://app.example/cb\u001b[2J",
      "https://app.example/cb\u007f"
    ]
    for (const uri of refused) {
      const r = Application.validateRedirectUri(uri)
      assert.isTrue(Either.isLeft(r), JSON.stringify(uri))
      if (Either.isLeft(r))
        assert.match(r.left.description, /^redirect URI (must be printable ASCII|contains whitespace)/)
    }
    const nonAscii = Application.validateRedirectUri("http://127.0.0.1:9000/cb/\u20ac")
    assert.isTrue(Either.isLeft(nonAscii))
    if (Either.isLeft(nonAscii)) {
      assert.strictEqual(nonAscii.left._tag, "InvalidRequest")
      assert.include(nonAscii.left.description, "percent-encode")
    }
    for (const uri of ["http://127.0.0.1:9000/cb/%E2%82%AC", "https://app.example/caf%C3%A9?q=%20"]) {
      assert.isTrue(Either.isRight(Application.validateRedirectUri(uri)), uri)
    }
  })

  it.effect(
    "createApplication refuses a non-ASCII, space or control character redirect URI with invalid_request and stores nothing",
    () =>
      Effect.gen(function* () {
        for (const uri of [
          "http://127.0.0.1:9000/cb/\u20ac",
          "https://app.example/c b",
          "https://app.example/cb\u0000"
        ]) {
          const r = yield* Effect.either(
            Admin.createApplication({ name: "Euro", redirectUris: ["https://app.example/ok", uri] })
          )
          assert.isTrue(Either.isLeft(r), JSON.stringify(uri))
          assert.strictEqual(Either.isLeft(r) ? r.left._tag : "accepted", "InvalidField")
          if (Either.isLeft(r) && r.left._tag === "InvalidField") {
            assert.strictEqual(r.left.field, "redirect_uris")
            assert.match(r.left.description, /^redirect URI (must be printable ASCII|contains whitespace)/)
          }
        }
        assert.strictEqual((yield* Effect.flatMap(ApplicationStore, (s) => s.list())).length, 0)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("refuses unknown grant types", () =>
    Effect.gen(function* () {
      const r = yield* Effect.either(
        Admin.createApplication({
          name: "x",
          redirectUris: ["https://a.example/cb"],
          grantTypes: ["device_code"]
        })
      )
      assert.isTrue(Either.isLeft(r))
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("deleting applications and users", () => {
  it.effect("deleting an application revokes its tokens; an unknown App Key is NotFound", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp()
      const t = (yield* token({ grant_type: "client_credentials" }, basic)).json?.access_token as string
      yield* Admin.deleteApplication(app.appKey)
      const hash = yield* Digest.sha256(t)
      const stored = yield* Effect.flatMap(TokenStore, (s) => s.find("access", hash))
      assert.isTrue(Option.isSome(stored) && stored.value.revokedAt !== null)
      const again = yield* Effect.either(Admin.deleteApplication(app.appKey))
      assert.isTrue(Either.isLeft(again) && again.left._tag === "NotFound")
      const find = yield* Effect.either(Admin.findApplication(app.appKey))
      assert.isTrue(Either.isLeft(find))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a user is deleted by username or by id, with their tokens revoked; an unknown one is NotFound",
    () =>
      Effect.gen(function* () {
        const { basic } = yield* newApp()
        const alice = yield* newUser("alice-del")
        const bob = yield* newUser("bob-del")
        const t = (yield* token(
          { grant_type: "password", username: "alice-del", password: alice.password },
          basic
        )).json?.access_token as string
        assert.strictEqual((yield* Admin.deleteUser("alice-del")).userId, alice.user.userId)
        assert.strictEqual((yield* Admin.deleteUser(bob.user.userId)).username, "bob-del")
        const hash = yield* Digest.sha256(t)
        const stored = yield* Effect.flatMap(TokenStore, (s) => s.find("access", hash))
        assert.isTrue(Option.isSome(stored) && stored.value.revokedAt !== null)
        const gone = yield* Effect.either(Admin.deleteUser("alice-del"))
        assert.isTrue(Either.isLeft(gone) && gone.left._tag === "NotFound")
      }).pipe(Effect.provide(TestLayer()))
  )
})

const Audited = () => Layer.mergeAll(TestLayer(), Layer.provideMerge(Audit.layer, Memory.auditLayer))
const asCli = Effect.provideService(Audit.RequestInfo, { requestId: null, address: null, actor: "cli" })
const failure = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flip(effect)
const auditOf = (type: Audit.EventType) => Effect.flatMap(AuditStore, (s) => s.query({ limit: 100, type }))

describe("Admin.updateApplication", () => {
  it.effect("validates like create, naming the field; a null lifetime returns to the default", () =>
    Effect.gen(function* () {
      const { app } = yield* newApp({ accessTokenTtl: 600 })
      assert.strictEqual(app.accessTokenTtl, 600)
      const { app: updated } = yield* Admin.updateApplication(app.appKey, {
        name: "  Renamed  ",
        redirectUris: ["https://new.example/cb", "https://new.example/cb"],
        scope: ["profile", "email"],
        grantTypes: ["authorization_code"],
        requirePkce: true,
        accessTokenTtl: null,
        refreshTokenTtl: 7200
      })
      assert.strictEqual(updated.name, "Renamed")
      assert.deepStrictEqual([...updated.redirectUris], ["https://new.example/cb"])
      assert.deepStrictEqual([...updated.scopes], ["email", "profile"])
      assert.deepStrictEqual([...updated.grantTypes], ["authorization_code"])
      assert.isTrue(updated.requirePkce)
      assert.isNull(updated.accessTokenTtl)
      assert.strictEqual(updated.refreshTokenTtl, 7200)
      assert.deepStrictEqual(yield* Admin.findApplication(app.appKey), updated)
      const cases: Array<[Admin.ApplicationPatch, string]> = [
        [{ name: " " }, "name"],
        [{ redirectUris: [] }, "redirect_uris"],
        [{ redirectUris: ["http://evil.example/cb"] }, "redirect_uris"],
        [{ scope: "ok bad\u0001" }, "scopes"],
        [{ scope: ["a,b"] }, "scopes"],
        [{ grantTypes: ["device_code"] }, "grant_types"],
        [{ grantTypes: [] }, "grant_types"],
        [{ accessTokenTtl: 0 }, "access_token_ttl"],
        [{ refreshTokenTtl: 1.5 }, "refresh_token_ttl"],
        [{ refreshTokenTtl: Admin.maxTtl + 1 }, "refresh_token_ttl"]
      ]
      for (const [patch, field] of cases) {
        const e = yield* failure(Admin.updateApplication(app.appKey, patch))
        assert.strictEqual(e._tag, "InvalidField", JSON.stringify(patch))
        if (e._tag === "InvalidField") assert.strictEqual(e.field, field, JSON.stringify(patch))
      }
      assert.deepStrictEqual(
        yield* Admin.findApplication(app.appKey),
        updated,
        "a refused patch changes nothing"
      )
      const unknown = yield* failure(Admin.updateApplication("no-such-app", { name: "x" }))
      assert.strictEqual(unknown._tag, "NotFound")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "records application_updated with the fields changed, and nothing for an empty patch or an unknown app",
    () =>
      Effect.gen(function* () {
        const { app } = yield* newApp()
        yield* Admin.updateApplication(app.appKey, {}).pipe(asCli)
        yield* Effect.either(Admin.updateApplication("no-such-app", { name: "x" }))
        yield* Admin.updateApplication(app.appKey, { name: "New", requirePkce: true }).pipe(asCli)
        const events = yield* auditOf("application_updated")
        assert.strictEqual(events.length, 1)
        assert.deepInclude(events[0], {
          appKey: app.appKey,
          detail: "changed name, require_pkce",
          actor: "cli"
        })
      }).pipe(Effect.provide(Audited()))
  )
})

describe("Admin: the audit trail of every change", () => {
  it.effect("create, rotate, delete; users created, updated, deleted; never a secret or a password", () =>
    Effect.gen(function* () {
      const { app, appSecret } = yield* newApp().pipe(asCli)
      const rotated = yield* Admin.rotateSecret(app.appKey, 60).pipe(asCli)
      const user = yield* Admin.createUser("audited-user", "first password").pipe(asCli)
      yield* Admin.setPassword(user.userId, "second password").pipe(asCli)
      yield* Admin.disableUser("audited-user").pipe(asCli)
      yield* Admin.enableUser(user).pipe(asCli)
      yield* Admin.deleteUser(user.userId).pipe(asCli)
      yield* Admin.deleteApplication(app.appKey).pipe(asCli)
      const events = [...(yield* Effect.flatMap(AuditStore, (s) => s.query({ limit: 100 })))].reverse()
      assert.deepStrictEqual(
        events.map((e) => [e.type, e.detail]),
        [
          ["application_created", 'name "Test App"'],
          ["secret_rotated", "grace 60s"],
          ["user_created", null],
          ["user_updated", "password set; sessions ended"],
          ["user_updated", "disabled; tokens revoked, sessions ended"],
          ["user_updated", "enabled"],
          ["user_deleted", null],
          ["application_deleted", null]
        ]
      )
      assert.isTrue(events.every((e) => e.actor === "cli"))
      const text = JSON.stringify(events)
      for (const secret of [
        appSecret,
        rotated.appSecret,
        "first password",
        "second password",
        "audited-user"
      ])
        assert.notInclude(text, secret)
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("refused changes record nothing", () =>
    Effect.gen(function* () {
      yield* Effect.either(Admin.createApplication({ name: "x", redirectUris: ["http://evil.example/cb"] }))
      yield* Effect.either(Admin.deleteApplication("no-such-app"))
      yield* Effect.either(Admin.rotateSecret("no-such-app"))
      yield* Effect.either(Admin.createUser("u", "short"))
      yield* Effect.either(Admin.setPassword("nobody", "long enough password"))
      yield* Effect.either(Admin.disableUser("nobody"))
      yield* Effect.either(Admin.deleteUser("nobody"))
      yield* Effect.either(Admin.withdrawConsent("nobody", "no-such-app"))
      assert.deepStrictEqual(yield* Effect.flatMap(AuditStore, (s) => s.query({ limit: 100 })), [])
    }).pipe(Effect.provide(Audited()))
  )
})

describe("Admin: users", () => {
  it.effect("createUser names the field at fault; a taken username is UsernameTaken", () =>
    Effect.gen(function* () {
      for (const [username, password, field] of [
        ["", "long enough", "username"],
        [" padded", "long enough", "username"],
        ["x".repeat(129), "long enough", "username"],
        ["ok", "short", "password"],
        ["ok", "p".repeat(1025), "password"]
      ] as const) {
        const e = yield* failure(Admin.createUser(username, password))
        assert.deepInclude(e, { _tag: "InvalidField", field })
      }
      yield* Admin.createUser("taken", "long enough")
      assert.strictEqual((yield* failure(Admin.createUser("taken", "long enough")))._tag, "UsernameTaken")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("setPassword: the new password signs in, the old one no longer does", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const { user, password } = yield* newUser("pw-user")
      const short = yield* failure(Admin.setPassword(user, "short"))
      assert.deepInclude(short, { _tag: "InvalidField", field: "password" })
      yield* Admin.setPassword("pw-user", "a brand new password")
      const pw = (p: string) => token({ grant_type: "password", username: "pw-user", password: p }, basic)
      assert.strictEqual((yield* pw(password)).status, 400)
      assert.strictEqual((yield* pw("a brand new password")).status, 200)
      assert.strictEqual(
        (yield* failure(Admin.setPassword("nobody", "a brand new password")))._tag,
        "NotFound"
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("disableUser revokes the user's tokens and refuses sign-in; enableUser lets them in again", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const { user, password } = yield* newUser("dis-user")
      const pw = () => token({ grant_type: "password", username: "dis-user", password }, basic)
      const before = (yield* pw()).json?.access_token as string
      const disabled = yield* Admin.disableUser(user.userId)
      assert.isNumber(disabled.disabledAt)
      const hash = yield* Digest.sha256(before)
      const stored = yield* Effect.flatMap(TokenStore, (s) => s.find("access", hash))
      assert.isTrue(Option.isSome(stored) && stored.value.revokedAt !== null)
      const refused = yield* pw()
      assert.deepStrictEqual([refused.status, refused.json?.error], [400, "invalid_grant"])
      const enabled = yield* Admin.enableUser("dis-user")
      assert.isNull(enabled.disabledAt)
      assert.strictEqual((yield* pw()).status, 200)
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("Admin: subjects, consents and the audit query", () => {
  it.effect(
    "revokeSubjectTokens revokes one open_id's tokens and says how many; an unknown app is NotFound",
    () =>
      Effect.gen(function* () {
        const { app, basic } = yield* newApp()
        const issue = (openId: string) => token({ grant_type: "client_credentials", open_id: openId }, basic)
        yield* issue("device-1")
        yield* issue("device-1")
        const other = (yield* issue("device-2")).json?.access_token as string
        // an access and a refresh token each time
        assert.strictEqual(yield* Admin.revokeSubjectTokens(app.appKey, "device-1"), 4)
        assert.strictEqual(yield* Admin.revokeSubjectTokens(app.appKey, "device-1"), 0)
        const hash = yield* Digest.sha256(other)
        const stored = yield* Effect.flatMap(TokenStore, (s) => s.find("access", hash))
        assert.isTrue(Option.isSome(stored) && stored.value.revokedAt === null)
        assert.strictEqual(
          (yield* failure(Admin.revokeSubjectTokens("no-such-app", "device-1")))._tag,
          "NotFound"
        )
        assert.deepInclude(yield* failure(Admin.revokeSubjectTokens(app.appKey, "")), {
          _tag: "InvalidField",
          field: "open_id"
        })
        const events = yield* auditOf("subject_tokens_revoked")
        assert.deepStrictEqual(
          events.map((e) => [e.openId, e.detail]),
          [
            ["device-1", "0 tokens"],
            ["device-1", "4 tokens"]
          ]
        )
      }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "withdrawConsent forgets the consent and revokes that app's tokens of the user; none is NotFound",
    () =>
      Effect.gen(function* () {
        const { app, basic } = yield* newApp()
        const { user } = yield* newUser()
        const code = yield* issueCode(app.appKey, user.userId)
        const access = (yield* token({ grant_type: "authorization_code", code, redirect_uri: cb }, basic))
          .json?.access_token as string
        const { consents } = yield* Admin.listConsents(user.username)
        assert.deepStrictEqual(
          consents.map((c) => c.appKey),
          [app.appKey]
        )
        yield* Admin.withdrawConsent(user.userId, app.appKey)
        assert.deepStrictEqual((yield* Admin.listConsents(user)).consents, [])
        const hash = yield* Digest.sha256(access)
        const stored = yield* Effect.flatMap(TokenStore, (s) => s.find("access", hash))
        assert.isTrue(Option.isSome(stored) && stored.value.revokedAt !== null)
        const again = yield* failure(Admin.withdrawConsent(user, app.appKey))
        assert.deepInclude(again, { _tag: "NotFound", what: "consent" })
        assert.deepInclude(yield* failure(Admin.withdrawConsent("nobody", app.appKey)), { what: "user" })
        assert.strictEqual((yield* auditOf("consent_withdrawn")).length, 1)
      }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "queryAudit filters by app, type and time, the newest oldest first, and names the field it refuses",
    () =>
      Effect.gen(function* () {
        const a = yield* newApp()
        const b = yield* newApp()
        yield* TestClock.adjust("100 seconds")
        yield* Admin.rotateSecret(a.app.appKey)
        yield* Admin.rotateSecret(b.app.appKey)
        const all = yield* Admin.queryAudit({})
        assert.deepStrictEqual(
          all.map((e) => e.type),
          ["application_created", "application_created", "secret_rotated", "secret_rotated"]
        )
        assert.deepStrictEqual(
          all.map((e) => e.appKey),
          [a.app.appKey, b.app.appKey, a.app.appKey, b.app.appKey]
        )
        assert.deepStrictEqual(
          (yield* Admin.queryAudit({ appKey: a.app.appKey })).map((e) => e.type),
          ["application_created", "secret_rotated"]
        )
        assert.deepStrictEqual(
          (yield* Admin.queryAudit({ limit: 3 })).map((e) => e.type),
          ["application_created", "secret_rotated", "secret_rotated"],
          "the newest three, oldest first"
        )
        assert.strictEqual(
          (yield* Admin.queryAudit({ type: "secret_rotated", limit: 1 }))[0]?.appKey,
          b.app.appKey
        )
        assert.strictEqual((yield* Admin.queryAudit({ since: 100 })).length, 2)
        for (const [filter, field] of [
          [{ limit: 0 }, "limit"],
          [{ limit: Admin.maxAuditLimit + 1 }, "limit"],
          [{ limit: 1.5 }, "limit"],
          [{ type: "made_up" }, "type"],
          [{ since: Number.NaN }, "since"]
        ] as const) {
          assert.deepInclude(yield* failure(Admin.queryAudit(filter)), { _tag: "InvalidField", field })
        }
      }).pipe(Effect.provide(Audited()))
  )

  it("parseSince takes epoch seconds and ISO 8601 with a zone, and nothing else", () => {
    assert.strictEqual(Admin.parseSince("0"), 0)
    assert.strictEqual(Admin.parseSince("1767225600"), 1767225600)
    assert.strictEqual(Admin.parseSince("2026-01-01"), 1767225600)
    assert.strictEqual(Admin.parseSince("2026-01-01T00:00:00Z"), 1767225600)
    assert.strictEqual(Admin.parseSince("2026-01-01T01:00+01:00"), 1767225600)
    assert.strictEqual(Admin.parseSince("2026-01-01T00:00:00.999Z"), 1767225600)
    for (const bad of [
      "",
      "-1",
      "1.5",
      "yesterday",
      "2026-01-01T00:00:00",
      "2026-02-30",
      "2026-13-01",
      "1e9"
    ])
      assert.isNull(Admin.parseSince(bad), bad)
  })
})
