import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as BasicAuth from "../src/oauth/requests/BasicAuth.js"
import * as Audit from "../src/security/Audit.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import * as Memory from "../src/storage/Memory.js"
import { cb, issueCode, newApp, newUser, post, TestLayer, token } from "./fixtures.js"

const Audited = Layer.provideMerge(Audit.layer, Memory.auditLayer)

describe("audit trail", () => {
  it.effect(
    "records issue, rotation, reuse, family revocation, code replay, revocation, sign-in and client failures without secrets",
    () =>
      Effect.gen(function* () {
        const { app, appSecret, basic } = yield* newApp()
        const { user, password } = yield* newUser()
        const sent: Array<string> = [appSecret, password]
        const code = yield* issueCode(app.appKey, user.userId)
        sent.push(code)
        const exchange = { grant_type: "authorization_code", code, redirect_uri: cb }
        const first = yield* post("/oauth2/oauth2/token", exchange, basic, {
          requestId: "req-1",
          remoteAddress: "192.0.2.7"
        })
        const rt = first.json?.refresh_token as string
        sent.push(first.json?.access_token as string, rt)
        const second = yield* token({ grant_type: "refresh_token", refresh_token: rt }, basic)
        sent.push(second.json?.access_token as string, second.json?.refresh_token as string)
        yield* token({ grant_type: "refresh_token", refresh_token: rt }, basic)
        yield* token(exchange, basic)
        const pw = yield* token({ grant_type: "password", username: user.username, password }, basic)
        sent.push(pw.json?.access_token as string, pw.json?.refresh_token as string)
        yield* token({ grant_type: "password", username: user.username, password: "not the password" }, basic)
        yield* post("/oauth2/oauth2/revoke", { token: pw.json?.access_token as string }, basic)
        yield* token({ grant_type: "client_credentials" }, basic.slice(0, -2))

        const events = yield* Effect.flatMap(AuditStore, (s) => s.tail({ limit: 100 }))
        const types = events.map((e) => e.type)
        for (const t of [
          "consent_granted",
          "token_issued",
          "refresh_rotated",
          "refresh_reuse_detected",
          "family_revoked",
          "code_replay",
          "signin_succeeded",
          "signin_failed",
          "token_revoked",
          "client_auth_failed"
        ] as const) {
          assert.include(types, t)
        }
        const issued = events.find((e) => e.requestId === "req-1")
        assert.strictEqual(issued?.type, "token_issued")
        assert.strictEqual(issued?.address, "192.0.2.7")
        assert.strictEqual(issued?.appKey, app.appKey)
        assert.strictEqual(issued?.detail, "authorization_code")
        const text = JSON.stringify(events)
        for (const secret of sent) assert.notInclude(text, secret)
      }).pipe(Effect.provide(Layer.merge(TestLayer(), Audited)))
  )

  it.effect("the tail can be limited to one application", () =>
    Effect.gen(function* () {
      const a = yield* newApp()
      const b = yield* newApp()
      yield* token({ grant_type: "client_credentials" }, a.basic)
      yield* token({ grant_type: "client_credentials" }, b.basic)
      const onlyA = yield* Effect.flatMap(AuditStore, (s) => s.tail({ limit: 10, appKey: a.app.appKey }))
      assert.isTrue(onlyA.length > 0 && onlyA.every((e) => e.appKey === a.app.appKey))
    }).pipe(Effect.provide(Layer.merge(TestLayer(), Audited)))
  )

  it.effect("a program without an AuditLog records nothing and still works", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      assert.strictEqual((yield* token({ grant_type: "client_credentials" }, basic)).status, 200)
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("audit values are bounded before they reach a store", () => {
  const at = 1_700_000_000
  const raw = (fields: Partial<Audit.AuditEvent>): Audit.AuditEvent => ({
    at,
    type: "client_auth_failed",
    appKey: null,
    userId: null,
    openId: null,
    address: null,
    requestId: null,
    detail: null,
    ...fields
  })

  it("bound cuts every free-text field to maxFieldLength, never inside a surrogate pair, and keeps short events as they are", () => {
    const max = Audit.maxFieldLength
    assert.strictEqual(max, 256)
    const long = "x".repeat(5000)
    const cut = Audit.bound(
      raw({ appKey: long, userId: long, openId: long, address: long, requestId: long, detail: long })
    )
    for (const v of [cut.appKey, cut.userId, cut.openId, cut.address, cut.requestId, cut.detail]) {
      assert.strictEqual(v, "x".repeat(max))
    }
    assert.strictEqual(cut.at, at)
    assert.strictEqual(cut.type, "client_auth_failed")
    // an emoji straddling the cut is dropped whole, not split into a lone surrogate
    const straddling = Audit.bound(raw({ detail: `${"a".repeat(max - 1)}\u{1f600}tail` }))
    assert.strictEqual(straddling.detail, "a".repeat(max - 1))
    const fits = raw({ appKey: "k".repeat(max), detail: `${"a".repeat(max - 2)}\u{1f600}` })
    assert.strictEqual(Audit.bound(fits), fits)
  })

  it.effect("Audit.layer bounds an event a caller built itself, for record and recordWith", () =>
    Effect.gen(function* () {
      const log = yield* Audit.AuditLog
      yield* log.record(raw({ detail: "d".repeat(10_000), requestId: "r".repeat(10_000) }))
      yield* log.recordWith([raw({ type: "token_issued", openId: "o".repeat(10_000) })], Effect.void)
      const events = yield* Effect.flatMap(AuditStore, (s) => s.tail({ limit: 10 }))
      assert.strictEqual(events.length, 2)
      assert.strictEqual(events[0]?.detail?.length, Audit.maxFieldLength)
      assert.strictEqual(events[0]?.requestId?.length, Audit.maxFieldLength)
      assert.strictEqual(events[1]?.openId?.length, Audit.maxFieldLength)
    }).pipe(Effect.provide(Audited))
  )

  it.effect(
    "Audit.layerWriting writes one line per kept event, bounded, and none for a write that fails",
    () => {
      const lines: Array<Audit.AuditEvent> = []
      const writing = Layer.provideMerge(
        Audit.layerWriting((event) => lines.push(event)),
        Memory.auditLayer
      )
      return Effect.gen(function* () {
        const log = yield* Audit.AuditLog
        yield* log.record(raw({ detail: "d".repeat(10_000) }))
        yield* log.recordWith(
          [raw({ type: "token_issued" }), raw({ type: "refresh_rotated", openId: "o".repeat(10_000) })],
          Effect.void
        )
        const refused = yield* Effect.flip(
          log.recordWith([raw({ type: "token_revoked" })], Effect.fail("no"))
        )
        assert.strictEqual(refused, "no")
        assert.deepStrictEqual(
          lines.map((e) => e.type),
          ["client_auth_failed", "token_issued", "refresh_rotated"]
        )
        assert.strictEqual(lines[0]?.detail?.length, Audit.maxFieldLength)
        assert.strictEqual(lines[2]?.openId?.length, Audit.maxFieldLength)
        const stored = yield* Effect.flatMap(AuditStore, (s) => s.tail({ limit: 10 }))
        assert.deepStrictEqual(
          stored.map((e) => e.type),
          lines.map((e) => e.type)
        )
      }).pipe(Effect.provide(writing))
    }
  )

  it.effect(
    "a failed client authentication with a forged line in the App Key is stored as sent, within bounds, whatever the request id; one with control characters is refused before any store (T13)",
    () =>
      Effect.gen(function* () {
        const hostile = "[2J TIME 2030-01-01T00:00:00.000Z  token_issued  forged\u2028\u202e"
        const huge = "k".repeat(1500)
        for (const appKey of [
          "\u001b[2J\nTIME 2030-01-01T00:00:00.000Z  token_issued  forged",
          hostile,
          huge
        ]) {
          const r = yield* post(
            "/oauth2/oauth2/token",
            { grant_type: "client_credentials" },
            BasicAuth.encode({ appKey, appSecret: "wrong" }),
            { requestId: "q".repeat(20_000), remoteAddress: "192.0.2.9" }
          )
          assert.strictEqual(r.status, 401)
        }
        const events = yield* Effect.flatMap(AuditStore, (s) => s.tail({ limit: 10 }))
        const failed = events.filter((e) => e.type === "client_auth_failed")
        assert.strictEqual(failed.length, 2)
        assert.strictEqual(failed[0]?.appKey, hostile)
        assert.isAtMost(failed[1]?.appKey?.length ?? Infinity, Audit.maxFieldLength)
        for (const e of failed) {
          assert.strictEqual(e.requestId, "q".repeat(Audit.maxFieldLength))
          assert.strictEqual(e.address, "192.0.2.9")
        }
      }).pipe(Effect.provide(Layer.merge(TestLayer(), Audited)))
  )
})
