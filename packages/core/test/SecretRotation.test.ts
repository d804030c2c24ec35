/**
 * Secret rotation with a grace period (`Admin.rotateSecret`, `ClientAuth.authenticate`):
 * time is the test clock, so expiry is checked to the second without waiting.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, TestClock } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as Application from "../src/model/Application.js"
import * as ClientAuth from "../src/oauth/ClientAuth.js"
import * as BasicAuth from "../src/oauth/requests/BasicAuth.js"
import * as Audit from "../src/security/Audit.js"
import { ApplicationStore } from "../src/storage/ApplicationStore.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import * as Memory from "../src/storage/Memory.js"
import { newApp, TestLayer, token } from "./fixtures.js"

const Audited = Layer.provideMerge(Audit.layer, Memory.auditLayer)
const layer = () => Layer.merge(TestLayer(), Audited)

const cc = { grant_type: "client_credentials" }
const hour = 3600

const basicOf = (appKey: string, appSecret: string) => BasicAuth.encode({ appKey, appSecret })
/** The status of a client_credentials request with these credentials. */
const status = (authorization: string) => Effect.map(token(cc, authorization), (r) => r.status)
const events = (type: Audit.EventType) =>
  Effect.map(
    Effect.flatMap(AuditStore, (s) => s.tail({ limit: 1000 })),
    (all) => all.filter((e) => e.type === type)
  )
const stored = (appKey: string) =>
  Effect.map(
    Effect.flatMap(ApplicationStore, (s) => s.find(appKey)),
    (o) => Option.getOrThrow(o)
  )

describe("secret rotation with a grace period", () => {
  it.effect("the old secret works during the grace and stops at its end; the new one works throughout", () =>
    Effect.gen(function* () {
      const { app, basic: old } = yield* newApp()
      yield* TestClock.adjust("10 seconds")
      const rotated = yield* Admin.rotateSecret(app.appKey, hour)
      assert.strictEqual(rotated.previousSecretExpiresAt, 10 + hour)
      const fresh = basicOf(app.appKey, rotated.appSecret)
      assert.strictEqual(yield* status(old), 200)
      assert.strictEqual(yield* status(fresh), 200)
      yield* TestClock.adjust(`${hour - 1} seconds`)
      assert.strictEqual(yield* status(old), 200, "one second before the end")
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* status(old), 401, "from the instant previousSecretExpiresAt")
      assert.strictEqual(yield* status(fresh), 200)
      const record = yield* stored(app.appKey)
      assert.strictEqual(record.previousSecretExpiresAt, 10 + hour)
      assert.isNull(Application.livePreviousSecret(record, 10 + hour))
      assert.isNotNull(Application.livePreviousSecret(record, 9 + hour))
    }).pipe(Effect.provide(layer()))
  )

  it.effect(
    "without a grace the old secret stops at once, and so does a previous one still in its grace",
    () =>
      Effect.gen(function* () {
        const { app, basic: s0 } = yield* newApp()
        const plain = yield* Admin.rotateSecret(app.appKey)
        assert.isNull(plain.previousSecretExpiresAt)
        assert.strictEqual(yield* status(s0), 401)
        const s1 = basicOf(app.appKey, plain.appSecret)
        assert.strictEqual(yield* status(s1), 200)
        const graced = yield* Admin.rotateSecret(app.appKey, hour)
        assert.strictEqual(yield* status(s1), 200)
        const again = yield* Admin.rotateSecret(app.appKey, 0)
        assert.strictEqual(yield* status(s1), 401, "grace 0 ends the earlier grace too")
        assert.strictEqual(yield* status(basicOf(app.appKey, graced.appSecret)), 401)
        assert.strictEqual(yield* status(basicOf(app.appKey, again.appSecret)), 200)
        const record = yield* stored(app.appKey)
        assert.isNull(record.previousSecretDigest)
        assert.isNull(record.previousSecretExpiresAt)
      }).pipe(Effect.provide(layer()))
  )

  it.effect("a second rotation during a grace drops the oldest secret: only one previous secret works", () =>
    Effect.gen(function* () {
      const { app, basic: s0 } = yield* newApp()
      const r1 = yield* Admin.rotateSecret(app.appKey, hour)
      yield* TestClock.adjust("60 seconds")
      const r2 = yield* Admin.rotateSecret(app.appKey, 2 * hour)
      assert.strictEqual(r2.previousSecretExpiresAt, 60 + 2 * hour)
      assert.strictEqual(yield* status(s0), 401, "the oldest secret stops at the second rotation")
      const s1 = basicOf(app.appKey, r1.appSecret)
      assert.strictEqual(yield* status(s1), 200, "the one rotated out is the previous secret now")
      assert.strictEqual(yield* status(basicOf(app.appKey, r2.appSecret)), 200)
      // the second rotation's grace counts, not the first one's
      yield* TestClock.adjust(`${hour} seconds`)
      assert.strictEqual(yield* status(s1), 200)
      yield* TestClock.adjust(`${hour} seconds`)
      assert.strictEqual(yield* status(s1), 401)
    }).pipe(Effect.provide(layer()))
  )

  it.effect("a wrong secret, an unknown App Key and a previous secret under another App Key still fail", () =>
    Effect.gen(function* () {
      const { app } = yield* newApp()
      const other = yield* newApp()
      const { appSecret } = yield* Admin.rotateSecret(app.appKey, hour)
      assert.strictEqual(yield* status(basicOf(app.appKey, `${appSecret.slice(0, -1)}!`)), 401)
      assert.strictEqual(yield* status(basicOf(app.appKey, other.appSecret)), 401)
      assert.strictEqual(yield* status(basicOf("no-such-app", appSecret)), 401)
      assert.strictEqual(yield* status(basicOf(other.app.appKey, appSecret)), 401)
      assert.strictEqual((yield* events("client_auth_failed")).length, 4)
    }).pipe(Effect.provide(layer()))
  )

  it.effect(
    "a rotation is recorded as secret_rotated with its grace; the first use of the previous secret once per rotation",
    () =>
      Effect.gen(function* () {
        const { app, appSecret: s0, basic: old } = yield* newApp()
        const r1 = yield* Admin.rotateSecret(app.appKey, hour)
        const rotated = yield* events("secret_rotated")
        assert.strictEqual(rotated.length, 1)
        assert.strictEqual(rotated[0]?.appKey, app.appKey)
        assert.strictEqual(rotated[0]?.detail, "grace 3600s")
        // the current secret leaves no trace, the previous one is recorded at its first use only
        assert.strictEqual(yield* status(basicOf(app.appKey, r1.appSecret)), 200)
        assert.strictEqual((yield* events("client_auth_previous_secret")).length, 0)
        yield* TestClock.adjust("5 seconds")
        for (let i = 0; i < 3; i++) assert.strictEqual(yield* status(old), 200)
        const used = yield* events("client_auth_previous_secret")
        assert.strictEqual(used.length, 1)
        assert.strictEqual(used[0]?.appKey, app.appKey)
        assert.strictEqual(used[0]?.at, 5)
        assert.strictEqual(used[0]?.detail, "previous secret works until 1970-01-01T01:00:00.000Z")
        assert.strictEqual((yield* stored(app.appKey)).previousSecretUsedAt, 5)
        // a new rotation: one more event at the next use of its previous secret
        yield* Admin.rotateSecret(app.appKey, 60)
        const second = (yield* events("secret_rotated"))[1]
        assert.strictEqual(second?.detail, "grace 60s; the earlier previous secret stops now")
        assert.isNull((yield* stored(app.appKey)).previousSecretUsedAt)
        for (let i = 0; i < 2; i++) assert.strictEqual(yield* status(basicOf(app.appKey, r1.appSecret)), 200)
        assert.strictEqual((yield* events("client_auth_previous_secret")).length, 2)
        yield* Admin.rotateSecret(app.appKey)
        assert.strictEqual(
          (yield* events("secret_rotated"))[2]?.detail,
          "grace 0s; the earlier previous secret stops now"
        )
        const text = JSON.stringify(yield* Effect.flatMap(AuditStore, (s) => s.tail({ limit: 1000 })))
        for (const secret of [s0, r1.appSecret]) assert.notInclude(text, secret)
      }).pipe(Effect.provide(layer()))
  )

  it.effect("concurrent first uses of the previous secret record one event", () =>
    Effect.gen(function* () {
      const { app, basic: old } = yield* newApp()
      yield* Admin.rotateSecret(app.appKey, hour)
      const statuses = yield* Effect.all(
        Array.from({ length: 8 }, () => status(old)),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(
        statuses,
        Array.from({ length: 8 }, () => 200)
      )
      assert.strictEqual((yield* events("client_auth_previous_secret")).length, 1)
    }).pipe(Effect.provide(layer()))
  )

  it.effect(
    "the grace is 0 to 30 days in whole seconds; an unknown App Key is refused and nothing is recorded",
    () =>
      Effect.gen(function* () {
        const { app, basic: old } = yield* newApp()
        for (const grace of [-1, 1.5, Application.maxSecretGrace + 1, Number.NaN]) {
          const r = yield* Effect.either(Admin.rotateSecret(app.appKey, grace))
          assert.isTrue(Either.isLeft(r) && r.left._tag === "InvalidField", String(grace))
        }
        assert.strictEqual(yield* status(old), 200, "a refused rotation changes nothing")
        const unknown = yield* Effect.either(Admin.rotateSecret("no-such-app", hour))
        assert.isTrue(Either.isLeft(unknown) && unknown.left._tag === "NotFound")
        assert.strictEqual((yield* events("secret_rotated")).length, 0)
        const longest = yield* Admin.rotateSecret(app.appKey, Application.maxSecretGrace)
        assert.strictEqual(longest.previousSecretExpiresAt, Application.maxSecretGrace)
      }).pipe(Effect.provide(layer()))
  )

  it.effect(
    "a record without the previous-secret fields (built before rotation had a grace) authenticates as before",
    () =>
      Effect.gen(function* () {
        const { app } = yield* newApp()
        const appSecret = "legacy-secret-0123456789abcdef0123456789"
        const legacy: Application.Application = {
          appKey: "legacy-rotation",
          name: app.name,
          secretDigest: yield* ClientAuth.secretDigest("legacy-rotation", appSecret),
          redirectUris: app.redirectUris,
          scopes: app.scopes,
          grantTypes: app.grantTypes,
          requirePkce: false,
          accessTokenTtl: null,
          refreshTokenTtl: null,
          createdAt: 0
        }
        yield* Effect.flatMap(ApplicationStore, (s) => s.insert(legacy))
        const found = yield* stored("legacy-rotation")
        assert.isNull(found.previousSecretDigest)
        assert.isNull(found.previousSecretExpiresAt)
        assert.isNull(found.previousSecretUsedAt)
        assert.strictEqual(yield* status(basicOf("legacy-rotation", appSecret)), 200)
        const { appSecret: next } = yield* Admin.rotateSecret("legacy-rotation", hour)
        assert.strictEqual(yield* status(basicOf("legacy-rotation", appSecret)), 200)
        assert.strictEqual(yield* status(basicOf("legacy-rotation", next)), 200)
      }).pipe(Effect.provide(layer()))
  )
})
