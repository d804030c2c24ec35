import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as Session from "../src/security/Session.js"
import * as Memory from "../src/storage/Memory.js"
import { settings, TestLayer } from "./fixtures.js"

const cookie = { path: "/oauth2/oauth2", secure: true }
const cookieHeader = (setCookie: string) => setCookie.split(";")[0] as string

describe("Session", () => {
  it("reads one cookie from a Cookie header", () => {
    assert.strictEqual(Session.readCookie("a=1; latchkey_session=x.y; b=2", "latchkey_session"), "x.y")
    assert.isUndefined(Session.readCookie("a=1", "latchkey_session"))
    assert.isUndefined(Session.readCookie(undefined, "a"))
  })

  it.effect(
    "a saved session loads from its cookie; a tampered, unsigned or re-keyed cookie loads nothing",
    () =>
      Effect.gen(function* () {
        const s = yield* Session.fresh
        const header = cookieHeader(yield* Session.save(s, cookie))
        assert.deepStrictEqual(
          Option.map(yield* Session.load(header), (l) => l.idHash),
          Option.some(s.idHash)
        )
        const value = header.slice("latchkey_session=".length)
        for (const bad of [
          `latchkey_session=${value.slice(0, 43)}`,
          `latchkey_session=${value.slice(0, 43)}.short`,
          `latchkey_session=${value.slice(0, 42)}${value[42] === "A" ? "B" : "A"}${value.slice(43)}`,
          "latchkey_session=.sig"
        ]) {
          assert.isTrue(Option.isNone(yield* Session.load(bad)), bad)
        }
        const rekeyed = yield* Session.load(header).pipe(
          Effect.provide(settings({ serverKey: "another-server-key-0123456789abcdef" }))
        )
        assert.isTrue(Option.isNone(rekeyed))
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("the store never sees the session id or the CSRF token, only their digests", () =>
    Effect.gen(function* () {
      const s = yield* Session.fresh
      yield* Session.save(s, cookie)
      const ticket = yield* Session.addPending(s, "client_id=a", "login")
      assert.notStrictEqual(s.idHash, s.id)
      const taken = yield* Session.takePending(s, ticket.txn, ticket.csrf, "login")
      assert.isTrue(Option.isSome(taken))
      assert.notStrictEqual(Option.getOrThrow(taken).csrfHash, ticket.csrf)
      assert.strictEqual(Option.getOrThrow(taken).sessionHash, s.idHash)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("each pending request has its own single-use CSRF token, bound to its step", () =>
    Effect.gen(function* () {
      const s = yield* Session.fresh
      yield* Session.save(s, cookie)
      const a = yield* Session.addPending(s, "a", "login")
      const b = yield* Session.addPending(s, "b", "login")
      const take = (txn: string, csrf: string | undefined, step: "login" | "consent") =>
        Effect.map(
          Session.takePending(s, txn, csrf, step),
          Option.map((p) => p.rawQuery)
        )
      assert.isTrue(Option.isNone(yield* take(a.txn, b.csrf, "login")))
      assert.isTrue(Option.isNone(yield* take(a.txn, undefined, "login")))
      assert.isTrue(Option.isNone(yield* take(a.txn, a.csrf, "consent")))
      assert.deepStrictEqual(yield* take(a.txn, a.csrf, "login"), Option.some("a"))
      assert.isTrue(Option.isNone(yield* take(a.txn, a.csrf, "login")))
      assert.deepStrictEqual(yield* take(b.txn, b.csrf, "login"), Option.some("b"))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a session keeps its newest maxPending requests", () =>
    Effect.gen(function* () {
      const s = yield* Session.fresh
      yield* Session.save(s, cookie)
      const tickets = []
      for (let i = 0; i < 5; i++) tickets.push(yield* Session.addPending(s, String(i), "login"))
      const kept = []
      for (const [i, t] of tickets.entries()) {
        if (Option.isSome(yield* Session.takePending(s, t.txn, t.csrf, "login"))) kept.push(i)
      }
      assert.deepStrictEqual(kept, [2, 3, 4])
    }).pipe(
      Effect.provide(
        Layer.merge(
          TestLayer(),
          Memory.layerWith({ maxSessions: 10, maxPending: 3, maxPendingBytes: 1_000_000 })
        )
      )
    )
  )

  it.effect("regenerate drops the old session and keeps nobody's user unless given", () =>
    Effect.gen(function* () {
      const s = { ...(yield* Session.fresh), userId: "u1", username: "alice" }
      const header = cookieHeader(yield* Session.save(s, cookie))
      const next = yield* Session.regenerate(Option.some(s), null)
      assert.isNull(next.userId)
      assert.notStrictEqual(next.id, s.id)
      assert.isTrue(Option.isNone(yield* Session.load(header)))
      const signedIn = yield* Session.regenerate(Option.some(next), { userId: "u2", username: "bob" })
      assert.deepStrictEqual([signedIn.userId, signedIn.username], ["u2", "bob"])
    }).pipe(Effect.provide(TestLayer()))
  )
})
