/**
 * The session part of the storage contract: sign-in sessions, the authorization
 * requests pending in them and their sweep, then their bounds (sessionBoundsCases).
 * Time is always passed in as `now`; no test reads or waits for the wall clock.
 */
import { assert, type Vitest } from "@effect/vitest"
import type { SessionStore, Stores } from "@latchkey/core"
import { Array as Arr, Effect, Option } from "effect"
import * as F from "../Fixtures.js"
import { type MakeLayer, sessionBoundsCases } from "./sessionBoundsCases.js"
import { isPending, Sessions, stored } from "./sessions.js"
import { purgeEra, some } from "./support.js"

const T = F.baseTime

// The purge uses its own era, long before every other test's records (as the code and token purges do).
const P = purgeEra

/** Saving, finding and replacing sessions. */
const sessionRecords = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "sessions: save then find returns the same record, anonymous or signed in; unknown ids are absent",
    () =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const anonymous = F.session()
        const signedIn = F.signedInSession()
        yield* sessions.save(anonymous)
        yield* sessions.save(signedIn)
        assert.deepStrictEqual(
          some(yield* sessions.find(anonymous.idHash, T), "anonymous session"),
          anonymous
        )
        assert.deepStrictEqual(some(yield* sessions.find(signedIn.idHash, T), "signed-in session"), signedIn)
        assert.isTrue(Option.isNone(yield* sessions.find(F.hash(), T)))
      })
  )

  it.effect("sessions: find hides a session from its expiry on; the time is the `now` passed in", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const s = F.signedInSession({ expiresAt: T + 100 })
      yield* sessions.save(s)
      assert.deepStrictEqual(some(yield* sessions.find(s.idHash, T + 99), "session before expiry"), s)
      assert.isTrue(Option.isNone(yield* sessions.find(s.idHash, T + 100)), "hidden at its expiry")
      assert.isTrue(Option.isNone(yield* sessions.find(s.idHash, T + 5000)), "hidden after its expiry")
      // Hidden, not deleted: an earlier `now` still sees it (nothing reads the wall clock).
      assert.isTrue(Option.isSome(yield* sessions.find(s.idHash, T)))
    })
  )

  it.effect("sessions: save replaces the user and the expiry, and keeps the session's pending requests", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const anonymous = F.session({ expiresAt: T + 100 })
      const p = F.pending({ sessionHash: anonymous.idHash })
      yield* sessions.save(anonymous)
      yield* sessions.addPending(p)
      const signedIn = { ...anonymous, userId: F.id("user"), username: F.id("name"), expiresAt: T + 50 }
      yield* sessions.save(signedIn)
      assert.deepStrictEqual(some(yield* sessions.find(anonymous.idHash, T), "session"), signedIn)
      // A shorter expiry replaces a longer one too.
      assert.isTrue(Option.isNone(yield* sessions.find(anonymous.idHash, T + 60)))
      const again = { ...anonymous, expiresAt: T + 200 }
      yield* sessions.save(again)
      assert.deepStrictEqual(some(yield* sessions.find(anonymous.idHash, T + 150), "session"), again)
      assert.deepStrictEqual(some(yield* sessions.findPending(p.sessionHash, p.txn, T), "pending request"), p)
    })
  )
}

/** Sessions with their pending requests: added before the first save, removed together, found. */
const sessionRequests = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("sessions: a request added before its session's first save survives that save", () =>
    Effect.gen(function* () {
      // The core adds a fresh session's first request, then saves the session.
      const sessions = yield* Sessions
      const fresh = F.session()
      const p = F.pending({ sessionHash: fresh.idHash })
      yield* sessions.addPending(p)
      yield* sessions.save(fresh)
      assert.deepStrictEqual(some(yield* sessions.findPending(p.sessionHash, p.txn, T), "pending request"), p)
      assert.deepStrictEqual(some(yield* sessions.find(fresh.idHash, T), "session"), fresh)
    })
  )

  it.effect("sessions: remove deletes the session and every request pending in it, nothing else", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const mine = F.signedInSession()
      const other = F.session()
      const minePending = [F.pending({ sessionHash: mine.idHash }), F.pending({ sessionHash: mine.idHash })]
      const otherPending = F.pending({ sessionHash: other.idHash })
      yield* Effect.forEach([mine, other], sessions.save)
      yield* Effect.forEach([...minePending, otherPending], sessions.addPending)
      yield* sessions.remove(mine.idHash)
      assert.isTrue(Option.isNone(yield* sessions.find(mine.idHash, T)))
      for (const p of minePending) assert.isFalse(yield* isPending(p))
      assert.isTrue(Option.isSome(yield* sessions.find(other.idHash, T)))
      assert.isTrue(yield* isPending(otherPending))
      // Removing it again, or an unknown session, succeeds and changes nothing.
      yield* sessions.remove(mine.idHash)
      yield* sessions.remove(F.hash())
      assert.isTrue(yield* isPending(otherPending))
      // The id can be used again, without the old requests.
      yield* sessions.save(mine)
      for (const p of minePending) assert.isFalse(yield* isPending(p))
    })
  )

  it.effect(
    "pending: addPending then findPending returns the same record, looked up by session and txn",
    () =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const s = F.session()
        yield* sessions.save(s)
        const login = F.pending({ sessionHash: s.idHash })
        const consent = F.pending({ sessionHash: s.idHash, step: "consent", createdAt: T + 1 })
        yield* sessions.addPending(login)
        yield* sessions.addPending(consent)
        assert.deepStrictEqual(
          some(yield* sessions.findPending(s.idHash, login.txn, T), "login request"),
          login
        )
        assert.deepStrictEqual(
          some(yield* sessions.findPending(s.idHash, consent.txn, T), "consent request"),
          consent
        )
        // A txn is good only in the session it was issued to.
        assert.isTrue(Option.isNone(yield* sessions.findPending(F.hash(), login.txn, T)))
        assert.isTrue(Option.isNone(yield* sessions.findPending(s.idHash, F.id("txn"), T)))
        assert.isFalse(yield* sessions.takePending(F.hash(), login.txn))
        assert.isTrue(yield* isPending(login))
      })
  )
}

/** A pending request's expiry, and taking it once. */
const pendingRequests = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("pending: findPending hides a request from its expiry on", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const p = F.pending({ createdAt: T, expiresAt: T + 60 })
      yield* sessions.addPending(p)
      assert.isTrue(yield* isPending(p, T + 59))
      assert.isFalse(yield* isPending(p, T + 60), "hidden at its expiry")
      assert.isFalse(yield* isPending(p, T + 6000), "hidden after its expiry")
      assert.isTrue(yield* isPending(p, T))
    })
  )

  it.effect("pending: takePending is true once, then false, and the request is gone", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const p = F.pending()
      const sibling = F.pending({ sessionHash: p.sessionHash })
      yield* sessions.addPending(p)
      yield* sessions.addPending(sibling)
      assert.isTrue(yield* sessions.takePending(p.sessionHash, p.txn))
      assert.isFalse(yield* isPending(p))
      assert.isFalse(yield* sessions.takePending(p.sessionHash, p.txn))
      assert.isFalse(yield* sessions.takePending(p.sessionHash, F.id("txn")))
      assert.isTrue(yield* isPending(sibling))
    })
  )

  it.effect("pending: of 25 concurrent takePending calls on one request exactly one is true", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const p = F.pending()
      yield* sessions.addPending(p)
      const taken = yield* Effect.all(
        Arr.makeBy(25, () => sessions.takePending(p.sessionHash, p.txn)),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(taken.filter((t) => t).length, 1)
      assert.isFalse(yield* isPending(p))
    })
  )
}

/** The sweep of expired sessions and requests. */
const sessionPurge = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "sessions: purgeExpired deletes at most `limit` expired sessions (with their requests) and `limit` expired requests, nothing live",
    () =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const expired = [
          F.session({ expiresAt: P - 1 }),
          F.signedInSession({ expiresAt: P - 2 }),
          F.session({ expiresAt: P })
        ]
        const live = F.signedInSession({ expiresAt: P + 1 })
        yield* Effect.forEach([...expired, live], sessions.save)
        const expiredPending = [P - 5, P, P - 1].map((expiresAt) =>
          F.pending({ sessionHash: live.idHash, createdAt: P - 100, expiresAt })
        )
        const livePending = F.pending({ sessionHash: live.idHash, createdAt: P - 100, expiresAt: P + 10 })
        // Live itself, but in an expired session: it goes with its session, uncounted.
        const inExpired = F.pending({
          sessionHash: (expired[0] as SessionStore.SessionRecord).idHash,
          createdAt: P - 100,
          expiresAt: P + 10
        })
        yield* Effect.forEach([...expiredPending, livePending, inExpired], sessions.addPending)
        const before = P - 100
        assert.strictEqual(yield* sessions.purgeExpired(P, 0), 0)
        assert.strictEqual(yield* sessions.purgeExpired(P, 2), 4, "2 sessions and 2 requests")
        assert.strictEqual(yield* sessions.purgeExpired(P, 2), 2, "the last session and the last request")
        assert.strictEqual(yield* sessions.purgeExpired(P, 2), 0)
        assert.deepStrictEqual(yield* stored(expired, before), [false, false, false])
        for (const p of [...expiredPending, inExpired]) assert.isFalse(yield* isPending(p, before))
        assert.deepStrictEqual(some(yield* sessions.find(live.idHash, P), "live session"), live)
        assert.deepStrictEqual(
          some(yield* sessions.findPending(live.idHash, livePending.txn, P), "live request"),
          livePending
        )
      })
  )
}

/**
 * Register the session cases on `it` (the shared layer, built with
 * `SessionStore.defaultLimits`); the bounds cases build `makeLayer(limits)` each.
 */
export const sessionCases = (it: Vitest.MethodsNonLive<Stores.Stores>, makeLayer: MakeLayer): void => {
  sessionRecords(it)
  sessionRequests(it)
  pendingRequests(it)
  sessionPurge(it)
  sessionBoundsCases(it, makeLayer)
}
