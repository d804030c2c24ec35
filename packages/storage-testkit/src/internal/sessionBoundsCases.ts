/**
 * The bounds part of the storage contract for sessions: past `maxSessions`, `maxPending` and
 * `maxPendingBytes` a store drops anonymous sessions and the oldest requests first, never a
 * signed-in session for an anonymous one, and its `stats` stay exact. Each case runs against a new,
 * empty store built with small limits.
 */
import { assert, type Vitest } from "@effect/vitest"
import { SessionStore, type Stores } from "@latchkey/core"
import { Array as Arr, Effect, type Layer, Option } from "effect"
import * as F from "../Fixtures.js"
import { isPending, Sessions, stored } from "./sessions.js"

const T = F.baseTime

/** Builds a layer of a new, empty store whose session store keeps `limits`. */
export type MakeLayer = (limits: SessionStore.SessionLimits) => Layer.Layer<Stores.Stores, unknown>

/** Runs an effect against a new, empty store that keeps `limits`. */
type Bounded = <A, E>(
  limits: SessionStore.SessionLimits,
  effect: Effect.Effect<A, E, Stores.Stores>
) => Effect.Effect<A, unknown>

const storedCount = (sessions: ReadonlyArray<SessionStore.SessionRecord>) =>
  Effect.map(stored(sessions), (found) => found.filter((b) => b).length)

const stats = Effect.flatMap(Sessions, (s) => s.stats())

/** An authorize query of exactly `chars` characters (ASCII, so every store counts it alike). */
const query = (chars: number): string => `state=${"x".repeat(chars - 6)}`

/** Which of `ps` are pending (looked up at a time before any expiry the tests use). */
const pendingOf = (ps: ReadonlyArray<SessionStore.PendingRecord>) => Effect.forEach(ps, (p) => isPending(p))

/** Past maxPending and past maxSessions with anonymous sessions. */
const pendingAndSessionBounds = (it: Vitest.MethodsNonLive<Stores.Stores>, bounded: Bounded): void => {
  it.effect("pending: past maxPending a session keeps its newest requests (by creation, then arrival)", () =>
    bounded(
      { ...SessionStore.defaultLimits, maxSessions: 100, maxPending: 3 },
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const s = F.session()
        const other = F.session()
        yield* Effect.forEach([s, other], sessions.save)
        const otherPending = Arr.makeBy(3, () => F.pending({ sessionHash: other.idHash }))
        yield* Effect.forEach(otherPending, sessions.addPending)
        // Five in the same second: the last three to arrive stay.
        const sameSecond = Arr.makeBy(5, () => F.pending({ sessionHash: s.idHash, createdAt: T }))
        yield* Effect.forEach(sameSecond, sessions.addPending)
        assert.deepStrictEqual(yield* Effect.forEach(sameSecond, (p) => isPending(p)), [
          false,
          false,
          true,
          true,
          true
        ])
        const later = F.pending({ sessionHash: s.idHash, createdAt: T + 1 })
        yield* sessions.addPending(later)
        assert.deepStrictEqual(yield* Effect.forEach([...sameSecond, later], (p) => isPending(p)), [
          false,
          false,
          false,
          true,
          true,
          true
        ])
        // Another session's requests are not touched.
        for (const p of otherPending) assert.isTrue(yield* isPending(p))
      })
    )
  )

  it.effect(
    "sessions: a flood of anonymous sessions past maxSessions never evicts a signed-in one and keeps the count at maxSessions",
    () =>
      bounded(
        { ...SessionStore.defaultLimits, maxSessions: 5, maxPending: 3 },
        Effect.gen(function* () {
          const sessions = yield* Sessions
          const signedIn = [
            F.signedInSession({ expiresAt: T + 1000 }),
            F.signedInSession({ expiresAt: T + 1001 })
          ]
          yield* Effect.forEach(signedIn, sessions.save)
          const first = F.session({ expiresAt: T + 1500 })
          const firstPending = F.pending({ sessionHash: first.idHash })
          yield* sessions.addPending(firstPending)
          yield* sessions.save(first)
          // One after another, each later than the last: the oldest anonymous sessions go.
          const flood = Arr.makeBy(40, (i) => F.session({ expiresAt: T + 2000 + i }))
          yield* Effect.forEach(flood, sessions.save)
          assert.deepStrictEqual(yield* stored(signedIn), [true, true])
          assert.deepStrictEqual(
            yield* stored(flood),
            flood.map((_, i) => i >= flood.length - 3)
          )
          assert.isTrue(Option.isNone(yield* sessions.find(first.idHash, T)))
          assert.isFalse(yield* isPending(firstPending), "an evicted session's requests go with it")
          // All at once.
          const burst = Arr.makeBy(40, (i) => F.session({ expiresAt: T + 3000 + i }))
          yield* Effect.all(burst.map(sessions.save), { concurrency: "unbounded" })
          assert.deepStrictEqual(yield* stored(signedIn), [true, true])
          assert.strictEqual(yield* storedCount([first, ...flood, ...burst]), 3)
        })
      )
  )
}

/** Past maxSessions with every session signed in. */
const signedInBound = (it: Vitest.MethodsNonLive<Stores.Stores>, bounded: Bounded): void => {
  it.effect(
    "sessions: with every session signed in, a new one evicts the one saved longest ago; a new anonymous one is not kept",
    () =>
      bounded(
        { ...SessionStore.defaultLimits, maxSessions: 3, maxPending: 3 },
        Effect.gen(function* () {
          const sessions = yield* Sessions
          const [u1, u2, u3, u4] = [1, 2, 3, 5].map((i) =>
            F.signedInSession({ expiresAt: T + 1000 + i })
          ) as [
            SessionStore.SessionRecord,
            SessionStore.SessionRecord,
            SessionStore.SessionRecord,
            SessionStore.SessionRecord
          ]
          yield* Effect.forEach([u1, u2, u3], sessions.save)
          const u2Pending = F.pending({ sessionHash: u2.idHash })
          yield* sessions.addPending(u2Pending)
          // Saving u1 again slides its lifetime: u2 is now the one saved longest ago.
          yield* sessions.save({ ...u1, expiresAt: T + 1004 })
          yield* sessions.save(u4)
          assert.deepStrictEqual(yield* stored([u1, u2, u3, u4]), [true, false, true, true])
          assert.isFalse(yield* isPending(u2Pending))
          const anonymous = F.session({ expiresAt: T + 1006 })
          yield* sessions.save(anonymous)
          assert.deepStrictEqual(yield* stored([u1, u3, u4, anonymous]), [true, true, true, false])
        })
      )
  )
}

/** The exact stats through every change. */
const statsCase = (it: Vitest.MethodsNonLive<Stores.Stores>, bounded: Bounded): void => {
  it.effect(
    "sessions: stats counts the stored sessions and the characters of every pending query, exact through add, re-add, trim, take, remove and purge",
    () =>
      bounded(
        { ...SessionStore.defaultLimits, maxSessions: 100, maxPending: 3 },
        Effect.gen(function* () {
          const sessions = yield* Sessions
          assert.deepStrictEqual(yield* stats, { sessions: 0, pendingBytes: 0 })
          const anonymous = F.session()
          const signedIn = F.signedInSession()
          const expiring = F.session({ expiresAt: T + 10 })
          yield* Effect.forEach([anonymous, signedIn, expiring], sessions.save)
          // Saving a stored session again replaces it: still three.
          yield* sessions.save({ ...anonymous, expiresAt: T + 7200 })
          assert.deepStrictEqual(yield* stats, { sessions: 3, pendingBytes: 0 })
          // Creation times follow arrival, so every store drops the same request past maxPending.
          const a = F.pending({ sessionHash: anonymous.idHash, rawQuery: query(100), createdAt: T })
          const b = F.pending({ sessionHash: signedIn.idHash, rawQuery: query(250), createdAt: T + 1 })
          // Pending in a session that was never saved: counted, not a session.
          const c = F.pending({ rawQuery: query(40), createdAt: T + 2, expiresAt: T + 20 })
          yield* Effect.forEach([a, b, c], sessions.addPending)
          assert.deepStrictEqual(yield* stats, { sessions: 3, pendingBytes: 390 })
          // The same txn added again replaces its query.
          const a2 = { ...a, rawQuery: query(160), createdAt: T + 3 }
          yield* sessions.addPending(a2)
          assert.deepStrictEqual(yield* stats, { sessions: 3, pendingBytes: 450 })
          // Past maxPending (3) the session's oldest request goes, and its characters with it.
          const more = [70, 80, 90].map((chars, i) =>
            F.pending({ sessionHash: anonymous.idHash, rawQuery: query(chars), createdAt: T + 4 + i })
          )
          yield* Effect.forEach(more, sessions.addPending)
          assert.deepStrictEqual(yield* pendingOf([a2, ...more]), [false, true, true, true])
          assert.deepStrictEqual(yield* stats, { sessions: 3, pendingBytes: 250 + 40 + 240 })
          // takePending counts once, however often it is called.
          assert.isTrue(yield* sessions.takePending(b.sessionHash, b.txn))
          assert.isFalse(yield* sessions.takePending(b.sessionHash, b.txn))
          assert.deepStrictEqual(yield* stats, { sessions: 3, pendingBytes: 40 + 240 })
          // remove takes the session and its requests; removing an unknown one changes nothing.
          yield* sessions.remove(anonymous.idHash)
          yield* sessions.remove(F.hash())
          assert.deepStrictEqual(yield* stats, { sessions: 2, pendingBytes: 40 })
          // The sweep: the expired session, and the expired request of the unsaved one.
          const inExpiring = F.pending({
            sessionHash: expiring.idHash,
            rawQuery: query(30),
            createdAt: T + 8
          })
          yield* sessions.addPending(inExpiring)
          assert.deepStrictEqual(yield* stats, { sessions: 2, pendingBytes: 70 })
          assert.strictEqual(yield* sessions.purgeExpired(T + 100, 10), 2)
          assert.deepStrictEqual(yield* stats, { sessions: 1, pendingBytes: 0 })
          yield* sessions.remove(signedIn.idHash)
          assert.deepStrictEqual(yield* stats, { sessions: 0, pendingBytes: 0 })
        })
      )
  )
}

/** Past maxPendingBytes. */
const pendingBytesBound = (it: Vitest.MethodsNonLive<Stores.Stores>, bounded: Bounded): void => {
  it.effect(
    "pending: past maxPendingBytes the oldest requests of anonymous sessions go first, a signed-in session's survive, and the total never exceeds the limit",
    () =>
      bounded(
        { maxSessions: 100, maxPending: 8, maxPendingBytes: 1000 },
        Effect.gen(function* () {
          const sessions = yield* Sessions
          const limit = 1000
          const user = F.signedInSession()
          const anonymous = F.session()
          yield* Effect.forEach([user, anonymous], sessions.save)
          // The oldest request of all is the signed-in session's.
          const mine = F.pending({ sessionHash: user.idHash, rawQuery: query(300), createdAt: T })
          // Anonymous: in a session saved without a user, and in one never saved.
          const inAnonymous = F.pending({
            sessionHash: anonymous.idHash,
            rawQuery: query(100),
            createdAt: T + 1
          })
          const unsaved = F.pending({ rawQuery: query(100), createdAt: T + 2 })
          yield* Effect.forEach([mine, inAnonymous, unsaved], sessions.addPending)
          assert.strictEqual((yield* stats).pendingBytes, 500)
          // A flood of anonymous requests, one after another, each newer than the last.
          const flood = Arr.makeBy(20, (i) => F.pending({ rawQuery: query(100), createdAt: T + 10 + i }))
          for (const [i, p] of flood.entries()) {
            if (i % 2 === 0) yield* sessions.save(F.session({ idHash: p.sessionHash }))
            yield* sessions.addPending(p)
            assert.isAtMost((yield* stats).pendingBytes, limit, `after request ${i}`)
          }
          assert.isTrue(yield* isPending(mine), "the signed-in session's request survives")
          assert.deepStrictEqual(yield* pendingOf([inAnonymous, unsaved]), [false, false])
          // The newest anonymous requests that fit beside it stay: (1000 - 300) / 100.
          assert.deepStrictEqual(
            yield* pendingOf(flood),
            flood.map((_, i) => i >= flood.length - 7)
          )
          assert.strictEqual((yield* stats).pendingBytes, limit)
          // A query longer than the limit is not kept, and costs the signed-in request nothing.
          const huge = F.pending({ rawQuery: query(limit + 1), createdAt: T + 100 })
          yield* sessions.addPending(huge)
          assert.isFalse(yield* isPending(huge))
          assert.isTrue(yield* isPending(mine))
          assert.deepStrictEqual(yield* stats, { sessions: 12, pendingBytes: 300 })
          // With no anonymous request left, the oldest of any session goes.
          const other = F.signedInSession()
          yield* sessions.save(other)
          const theirs = F.pending({ sessionHash: other.idHash, rawQuery: query(800), createdAt: T + 200 })
          yield* sessions.addPending(theirs)
          assert.deepStrictEqual(yield* pendingOf([mine, theirs]), [false, true])
          assert.strictEqual((yield* stats).pendingBytes, 800)
          // All at once: still within the limit, and still the signed-in request kept.
          const burst = Arr.makeBy(30, (i) => F.pending({ rawQuery: query(90), createdAt: T + 300 + i }))
          yield* Effect.all(burst.map(sessions.addPending), { concurrency: "unbounded" })
          assert.isTrue(yield* isPending(theirs))
          assert.strictEqual((yield* stats).pendingBytes, 800 + 2 * 90)
          assert.strictEqual((yield* pendingOf(burst)).filter((b) => b).length, 2)
        })
      )
  )
}

/** Register the bounds cases on `it`; each builds `makeLayer(limits)`. */
export const sessionBoundsCases = (it: Vitest.MethodsNonLive<Stores.Stores>, makeLayer: MakeLayer): void => {
  const bounded: Bounded = (limits, effect) => Effect.provide(effect, makeLayer(limits))
  pendingAndSessionBounds(it, bounded)
  signedInBound(it, bounded)
  statsCase(it, bounded)
  pendingBytesBound(it, bounded)
}
