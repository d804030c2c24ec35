/**
 * The session part of the storage contract: sign-in sessions, the authorization
 * requests pending in them, their bounds and their sweep. Time is always passed in
 * as `now`; no test reads or waits for the wall clock.
 */
import { assert, type Vitest } from "@effect/vitest"
import { SessionStore, type Stores } from "@latchkey/core"
import { Array as Arr, Effect, type Layer, Option } from "effect"
import * as F from "../Fixtures.js"

const T = F.baseTime

/** Builds a layer of a new, empty store whose session store keeps `limits`. */
export type MakeLayer = (limits: SessionStore.SessionLimits) => Layer.Layer<Stores.Stores, unknown>

const some = <A>(o: Option.Option<A>, what: string): A => {
  assert.isTrue(Option.isSome(o), `${what} should be found`)
  return Option.getOrThrow(o)
}

const Sessions = SessionStore.SessionStore

/** Whether each session is stored (looked up at a time before any expiry the tests use). */
const stored = (sessions: ReadonlyArray<SessionStore.SessionRecord>, now = T) =>
  Effect.flatMap(Sessions, (s) =>
    Effect.forEach(sessions, (x) => Effect.map(s.find(x.idHash, now), Option.isSome))
  )

const storedCount = (sessions: ReadonlyArray<SessionStore.SessionRecord>) =>
  Effect.map(stored(sessions), (found) => found.filter((b) => b).length)

const isPending = (p: SessionStore.PendingRecord, now = T) =>
  Effect.flatMap(Sessions, (s) => Effect.map(s.findPending(p.sessionHash, p.txn, now), Option.isSome))

const stats = Effect.flatMap(Sessions, (s) => s.stats())

/** An authorize query of exactly `chars` characters (ASCII, so every store counts it alike). */
const query = (chars: number): string => `state=${"x".repeat(chars - 6)}`

/** Which of `ps` are pending (looked up at a time before any expiry the tests use). */
const pendingOf = (ps: ReadonlyArray<SessionStore.PendingRecord>) => Effect.forEach(ps, (p) => isPending(p))

/**
 * Register the session cases on `it` (the shared layer, built with
 * `SessionStore.defaultLimits`); the bounds cases build `makeLayer(limits)` each.
 */
export const sessionCases = (it: Vitest.MethodsNonLive<Stores.Stores>, makeLayer: MakeLayer): void => {
  /** Run `effect` against a new, empty store that keeps `limits`. */
  const bounded = <A, E>(
    limits: SessionStore.SessionLimits,
    effect: Effect.Effect<A, E, Stores.Stores>
  ): Effect.Effect<A, unknown> => Effect.provide(effect, makeLayer(limits))

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

  // The purge uses its own era, long before every other test's records (as the code and token purges do).
  const P = 1_000_000_000

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
