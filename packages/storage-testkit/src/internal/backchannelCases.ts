/**
 * The storage contract for back-channel logout: an application's logout URI fields, a session's
 * clients recorded while it is stored (once per application, bounded), one delivery per client
 * written by every write that ends the session, and deliveries claimed under a lease (a claim
 * another instance holds is not claimed again until its lease ends; a crash after a claim is
 * retried), released for a retry, or finished once.
 */
import { assert, type Vitest } from "@effect/vitest"
import { ApplicationStore, LogoutStore, type Stores, Transaction, UserStore } from "@latchkey/core"
import { Effect } from "effect"
import * as F from "../Fixtures.js"
import { Sessions } from "./sessions.js"
import { some } from "./support.js"
import { insertUser } from "./users.js"

const T = F.baseTime

/** A client of a session: the App Key, its open_id as `sub`, and the session's `sid`. */
const client = (userId: string, sid: string, appKey = F.id("app")): LogoutStore.SessionClient => ({
  appKey,
  userId,
  sub: F.id("open"),
  sid
})

/** A stored session of a new user with `n` clients recorded. */
const sessionWith = (n: number, expiresAt = T + 3600) =>
  Effect.gen(function* () {
    const logout = yield* LogoutStore.LogoutStore
    const userId = yield* insertUser
    const session = F.signedInSession({ userId, expiresAt })
    yield* (yield* Sessions).save(session)
    const sid = F.hash()
    const clients = Array.from({ length: n }, () => client(userId, sid))
    for (const c of clients) yield* logout.record(session.idHash, c)
    return { session, userId, sid, clients }
  })

/** Claim at `now` as `claim` (lease of 60 seconds) and keep the deliveries of `sid`. */
const claimOf = (sid: string, now: number, claim: string) =>
  Effect.flatMap(LogoutStore.LogoutStore, (logout) =>
    Effect.map(logout.claim(now, 10_000, now + 60, claim), (ds) => ds.filter((d) => d.sid === sid))
  )

const byApp = (a: { readonly appKey: string }, b: { readonly appKey: string }) =>
  a.appKey.localeCompare(b.appKey)

/** The deliveries of `sid` claimed now, as the clients they were recorded from. */
const owed = (sid: string, now = T) =>
  Effect.map(claimOf(sid, now, F.id("claim")), (ds) =>
    ds.map(({ attempts: _a, nextAttemptAt: _n, ...c }) => c).sort(byApp)
  )

/** Register the back-channel logout cases on `it`. */
export const backchannelCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("applications: the back-channel logout URI and session flag round-trip, and clear to none", () =>
    Effect.gen(function* () {
      const apps = yield* ApplicationStore.ApplicationStore
      const app = F.application({
        backchannelLogoutUri: "https://app.example/backchannel",
        backchannelLogoutSessionRequired: true
      })
      yield* apps.insert(app)
      assert.deepStrictEqual(some(yield* apps.find(app.appKey), "application"), app)
      const renamed = some(yield* apps.update(app.appKey, { name: "Renamed" }, T), "updated")
      assert.deepStrictEqual(renamed, { ...app, name: "Renamed" })
      const cleared = some(
        yield* apps.update(
          app.appKey,
          { backchannelLogoutUri: null, backchannelLogoutSessionRequired: false },
          T
        ),
        "updated"
      )
      assert.deepStrictEqual(cleared, {
        ...app,
        name: "Renamed",
        backchannelLogoutUri: null,
        backchannelLogoutSessionRequired: false
      })
    })
  )

  it.effect("a session's end writes exactly one delivery per application, whatever was recorded twice", () =>
    Effect.gen(function* () {
      const logout = yield* LogoutStore.LogoutStore
      const { session, sid, clients } = yield* sessionWith(2)
      // The same application again: still one
      yield* logout.record(session.idHash, { ...(clients[0] as LogoutStore.SessionClient), sub: "other" })
      assert.deepStrictEqual(yield* owed(sid), [])
      yield* (yield* Sessions).remove(session.idHash)
      yield* (yield* Sessions).remove(session.idHash)
      assert.deepStrictEqual(yield* owed(sid), [...clients].sort(byApp))
    })
  )

  it.effect(
    "every write that ends a session writes its deliveries: sign-outs, disable, delete, new password, sweep",
    () =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const users = yield* UserStore.UserStore
        const ends: ReadonlyArray<
          (s: Effect.Effect.Success<ReturnType<typeof sessionWith>>) => Effect.Effect<unknown, unknown>
        > = [
          ({ session, userId }) => sessions.endOf(userId, session.idHash),
          ({ userId }) => sessions.endOthersOf(userId, F.hash()),
          ({ userId }) => users.setDisabled(userId, true, T),
          ({ userId }) => users.remove(userId, T),
          ({ userId }) => users.setPasswordHash(userId, F.hash()),
          () => sessions.purgeExpired(T + 1, 10_000)
        ]
        for (const end of ends) {
          const made = yield* sessionWith(1, T + 1)
          assert.deepStrictEqual(yield* owed(made.sid), [])
          yield* end(made)
          assert.deepStrictEqual(yield* owed(made.sid), made.clients)
        }
      })
  )

  claimCases(it)
}

/** The cases of a rollback, clients and claims: the bound, a lease held, a crash retried, a retry due at its time. */
const claimCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("a session's end rolled back writes no delivery", () =>
    Effect.gen(function* () {
      const tx = yield* Effect.serviceOption(Transaction.Transaction)
      // Only a store that runs a unit as one transaction can roll back (not the memory store)
      if (tx._tag === "None") return
      const { session, sid } = yield* sessionWith(1)
      const failing = Effect.zipRight((yield* Sessions).remove(session.idHash), Effect.fail("after the end"))
      yield* Effect.flip(Transaction.atomically(failing))
      assert.deepStrictEqual(yield* owed(sid), [])
    })
  )

  it.effect("clients: nothing is recorded for a session not stored, and at most maxClientsPerSession", () =>
    Effect.gen(function* () {
      const logout = yield* LogoutStore.LogoutStore
      const gone = yield* sessionWith(0)
      yield* (yield* Sessions).remove(gone.session.idHash)
      yield* logout.record(gone.session.idHash, client(gone.userId, gone.sid))
      const full = yield* sessionWith(LogoutStore.maxClientsPerSession + 1)
      yield* (yield* Sessions).remove(full.session.idHash)
      yield* (yield* Sessions).remove(gone.session.idHash)
      // One claim for both: a claim takes every delivery due, whoever's
      const claimed = yield* logout.claim(T, 10_000, T + 60, F.id("claim"))
      assert.strictEqual(claimed.filter((d) => d.sid === gone.sid).length, 0)
      assert.strictEqual(claimed.filter((d) => d.sid === full.sid).length, LogoutStore.maxClientsPerSession)
    })
  )

  it.effect(
    "a delivery claimed by one instance is not claimed by another until its lease ends; the crash is retried",
    () =>
      Effect.gen(function* () {
        const logout = yield* LogoutStore.LogoutStore
        const { session, sid } = yield* sessionWith(1)
        yield* (yield* Sessions).remove(session.idHash)
        const before = yield* logout.pending()
        // Instance a claims (lease to T + 60) and crashes; b finds nothing while the lease lasts
        const [first] = yield* claimOf(sid, T, "a")
        assert.strictEqual(first?.attempts, 1)
        assert.deepStrictEqual(yield* claimOf(sid, T + 59, "b"), [])
        assert.isFalse(yield* logout.finish(first as LogoutStore.Delivery, "b"))
        // The lease over, b claims it: a second attempt; a's late answer changes nothing
        const [again] = yield* claimOf(sid, T + 60, "b")
        assert.strictEqual(again?.attempts, 2)
        assert.isFalse(yield* logout.finish(first as LogoutStore.Delivery, "a"))
        assert.isFalse(yield* logout.retry(first as LogoutStore.Delivery, "a", T))
        assert.isTrue(yield* logout.finish(again as LogoutStore.Delivery, "b"))
        assert.isFalse(yield* logout.finish(again as LogoutStore.Delivery, "b"))
        assert.strictEqual(yield* logout.pending(), before - 1)
        assert.deepStrictEqual(yield* claimOf(sid, T + 10_000, "c"), [])
      })
  )

  it.effect("a delivery released for a retry is due again at its time, not before", () =>
    Effect.gen(function* () {
      const logout = yield* LogoutStore.LogoutStore
      const { session, sid } = yield* sessionWith(1)
      yield* (yield* Sessions).remove(session.idHash)
      const [first] = yield* claimOf(sid, T, "a")
      assert.isTrue(yield* logout.retry(first as LogoutStore.Delivery, "a", T + 30))
      assert.deepStrictEqual(yield* claimOf(sid, T + 29, "b"), [])
      const [again] = yield* claimOf(sid, T + 30, "b")
      assert.deepStrictEqual(again, {
        ...(first as LogoutStore.Delivery),
        attempts: 2,
        nextAttemptAt: T + 30
      })
    })
  )
}
