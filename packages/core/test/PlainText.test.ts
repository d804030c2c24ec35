/**
 * docs/security.md T13: one rule, `Params.isPlainText`, for every text a store is asked about,
 * applied before the store call: Basic credentials, the authorize client_id, the sign-in
 * username, form tickets, and everything an administrator gives (400 naming the field, never
 * the value). The memory store would hold these values; the refusals show the rule runs first.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as Authorize from "../src/oauth/Authorize.js"
import * as BasicAuth from "../src/oauth/requests/BasicAuth.js"
import { isPlainText } from "../src/oauth/requests/Params.js"
import * as Accounts from "../src/security/Accounts.js"
import * as Audit from "../src/security/Audit.js"
import * as Session from "../src/security/Session.js"
import * as Throttle from "../src/security/Throttle.js"
import { ApplicationStore } from "../src/storage/ApplicationStore.js"
import * as Memory from "../src/storage/Memory.js"
import { UserStore } from "../src/storage/UserStore.js"
import { cb, form, newApp, newUser, TestLayer } from "./fixtures.js"

// Every refused sign-in counts; these tests send more than a real budget allows
const generous = {
  ...Throttle.defaultPolicy,
  freeFailures: 1e6,
  addressFreeFailures: 1e6,
  slowFreeFailures: 1e6
}
const Audited = () => Layer.mergeAll(TestLayer(), Layer.provideMerge(Audit.layer, Memory.auditLayer))

/** NUL, other C0 controls, DEL, C1 and a lone surrogate, inside otherwise fine text. */
const hostile = [
  "a\u0000b",
  "a\tb",
  "a\nb",
  "a\u001bb",
  "a\u007fb",
  "a\u0085b",
  "a\u009bb",
  "a\ud800b",
  "a\udc00b"
]

/** Values a UTF-8 encoder keeps as they are (a lone surrogate becomes U+FFFD on the wire). */
const wellFormed = hostile.filter((s) => !/\p{Cs}/u.test(s))

/** The field of an InvalidField failure, checking the value is not in its description. */
const fieldOf = <A, E>(r: Either.Either<A, E>, value: string): string => {
  if (Either.isRight(r)) return "accepted"
  const e = r.left as { _tag?: string; field?: string; description?: string }
  assert.notInclude(e.description ?? "", value)
  assert.notInclude(e.description ?? "", JSON.stringify(value).slice(1, -1))
  return e._tag === "InvalidField" ? (e.field ?? "") : (e._tag ?? "")
}

describe("T13: the plain-text rule", () => {
  it("refuses every control character (C0, DEL, C1) and lone surrogates, and accepts any other Unicode text", () => {
    for (const s of hostile) assert.isFalse(isPlainText(s), JSON.stringify(s))
    for (const s of ["alice", "Zoë", "用户", "😀", "a b", "' OR 1=1--", "\ufffd", ""]) {
      assert.isTrue(isPlainText(s), s)
    }
  })

  it("Basic credentials with a hostile App Key or App Secret are invalid_client, raw or percent-encoded", () => {
    const basic = (text: string) => `Basic ${Buffer.from(text, "utf8").toString("base64")}`
    for (const h of wellFormed) {
      for (const text of [
        `${h}:secret`,
        `key:${h}`,
        `${encodeURIComponent(h)}:secret`,
        `key:${encodeURIComponent(h)}`
      ]) {
        const r = BasicAuth.decode(basic(text))
        assert.isTrue(Either.isLeft(r) && r.left._tag === "InvalidClient", JSON.stringify(text))
      }
    }
    assert.isTrue(Either.isRight(BasicAuth.decode(basic("key:se cret"))))
  })

  it.effect("authorize: a hostile client_id is the unknown-client error page, before any lookup", () =>
    Effect.gen(function* () {
      for (const h of wellFormed) {
        const r = yield* Effect.either(
          Authorize.validate(form({ response_type: "code", client_id: h, redirect_uri: cb }))
        )
        assert.isTrue(Either.isLeft(r) && r.left._tag === "ErrorPage" && r.left.reason === "unknown_client")
      }
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "sign-in: a hostile username or password is the one bad-credentials answer, the user untouched",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* newUser("alice")
        for (const h of hostile) {
          for (const [u, p] of [
            [h, password],
            [user.username, `${password}${h}`]
          ] as const) {
            const r = yield* Effect.either(Accounts.authenticate(u, p, "192.0.2.1"))
            assert.isTrue(Either.isLeft(r) && r.left._tag === "InvalidGrant", JSON.stringify(u + p))
          }
        }
        const again = yield* Effect.either(Accounts.authenticate(user.username, password, "192.0.2.1"))
        assert.isTrue(Either.isRight(again))
      }).pipe(Effect.provide(TestLayer({}, generous)))
  )

  it.effect("a form ticket (txn) that is not plain text names no pending request", () =>
    Effect.gen(function* () {
      const s = yield* Session.fresh
      const ticket = yield* Session.addPending(s, "client_id=a", "login")
      for (const h of hostile) {
        assert.isTrue(Option.isNone(yield* Session.takePending(s, `${ticket.txn}${h}`, ticket.csrf, "login")))
      }
      assert.isTrue(Option.isSome(yield* Session.takePending(s, ticket.txn, ticket.csrf, "login")))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "admin: hostile names, usernames, passwords, scopes, grant types, App Keys and user ids are 400 naming the field; nothing is stored",
    () =>
      Effect.gen(function* () {
        const { app } = yield* newApp()
        const { user } = yield* newUser("bob")
        const base = { name: "Hostile", redirectUris: [cb] }
        for (const h of hostile) {
          const field = <A, E, R>(e: Effect.Effect<A, E, R>) =>
            Effect.map(Effect.either(e), (r) => fieldOf(r, h))
          assert.strictEqual(yield* field(Admin.createApplication({ ...base, name: h })), "name")
          assert.strictEqual(yield* field(Admin.createApplication({ ...base, name: ` ${h} ` })), "name")
          assert.strictEqual(yield* field(Admin.createApplication({ ...base, scope: [h] })), "scopes")
          assert.strictEqual(yield* field(Admin.createApplication({ ...base, scope: h })), "scopes")
          assert.strictEqual(
            yield* field(Admin.createApplication({ ...base, grantTypes: [h] })),
            "grant_types"
          )
          assert.strictEqual(yield* field(Admin.updateApplication(app.appKey, { name: h })), "name")
          assert.strictEqual(yield* field(Admin.updateApplication(h, { name: "x" })), "app_key")
          assert.strictEqual(yield* field(Admin.findApplication(h)), "app_key")
          assert.strictEqual(yield* field(Admin.rotateSecret(h)), "app_key")
          assert.strictEqual(yield* field(Admin.deleteApplication(h)), "app_key")
          assert.strictEqual(yield* field(Admin.revokeSubjectTokens(h, "someone")), "app_key")
          assert.strictEqual(yield* field(Admin.withdrawConsent(user, h)), "app_key")
          assert.strictEqual(yield* field(Admin.queryAudit({ appKey: h })), "app_key")
          assert.strictEqual(yield* field(Admin.queryAudit({ type: h })), "type")
          assert.strictEqual(yield* field(Admin.createUser(h, "long enough")), "username")
          assert.strictEqual(yield* field(Admin.createUser("carol", `long enough${h}`)), "password")
          assert.strictEqual(yield* field(Admin.setPassword(user, `long enough${h}`)), "password")
          assert.strictEqual(yield* field(Admin.findUser(h)), "user")
          assert.strictEqual(yield* field(Admin.deleteUser(h)), "user")
          assert.strictEqual(yield* field(Admin.findUserById(h)), "user_id")
        }
        const apps = yield* Effect.flatMap(ApplicationStore, (s) => s.list())
        assert.deepStrictEqual(
          apps.map((a) => a.name),
          [app.name]
        )
        const users = yield* Effect.flatMap(UserStore, (s) => s.list())
        assert.deepStrictEqual(
          users.map((u) => u.username),
          ["bob"]
        )
      }).pipe(Effect.provide(Audited()))
  )
})
