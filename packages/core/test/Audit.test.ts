import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Audit from "../src/Audit.js"
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
