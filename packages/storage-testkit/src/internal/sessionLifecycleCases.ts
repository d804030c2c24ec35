/**
 * The account-lifecycle part of the storage contract for sign-in sessions: disabling, deleting
 * and a new password end the user's sessions and the requests pending in them, in the write that
 * changes the account; a session keeps its sign-in time, and the core's absolute lifetime holds
 * over the store. Time is passed in as `now`, or set on the TestClock.
 */
import { assert, type Vitest } from "@effect/vitest"
import { Config, Entropy, Session, type SessionStore, type Stores, UserStore } from "@latchkey/core"
import { Effect, Layer, Option, TestClock } from "effect"
import * as F from "../Fixtures.js"
import { Sessions } from "./sessions.js"

const T = F.baseTime

/** A user's sessions, each with a request pending in it, saved. */
const sessionsOf = (userId: string | null, n: number) =>
  Effect.gen(function* () {
    const sessions = yield* Sessions
    const made: Array<{ session: SessionStore.SessionRecord; pending: SessionStore.PendingRecord }> = []
    for (let i = 0; i < n; i++) {
      const session = userId === null ? F.session() : F.signedInSession({ userId, username: F.id("name") })
      const pending = F.pending({ sessionHash: session.idHash, step: "consent" })
      yield* sessions.addPending(pending)
      yield* sessions.save(session)
      made.push({ session, pending })
    }
    return made
  })

type Made = ReadonlyArray<{ session: SessionStore.SessionRecord; pending: SessionStore.PendingRecord }>

/** For each session, whether it and its pending request are still found (at `T`). */
const alive = (made: Made) =>
  Effect.flatMap(Sessions, (s) =>
    Effect.forEach(made, ({ session, pending }) =>
      Effect.all([
        Effect.map(s.find(session.idHash, T), Option.isSome),
        Effect.map(s.findPending(pending.sessionHash, pending.txn, T), Option.isSome)
      ])
    )
  )

const all = (made: Made, found: boolean) => made.map(() => [found, found])

const pendingBytes = Effect.flatMap(Sessions, (s) => Effect.map(s.stats(), (x) => x.pendingBytes))

/** A user with two signed-in sessions, another user with one, and an anonymous session. */
const scene = Effect.gen(function* () {
  const users = yield* UserStore.UserStore
  const u = F.user()
  const other = F.user()
  yield* users.insert(u)
  yield* users.insert(other)
  return {
    users,
    u,
    mine: yield* sessionsOf(u.userId, 2),
    others: [...(yield* sessionsOf(other.userId, 1)), ...(yield* sessionsOf(null, 1))]
  }
})

const settings = Config.layer({
  issuer: "https://auth.example",
  serverKey: "contract-server-key-0123456789abcdef",
  sessionTtl: 1800,
  sessionMaxAge: 3600
})

/** Disabling, re-enabling, a new password and removal end the user's sessions. */
const accountChanges = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "sessions: setDisabled deletes the user's sessions and their pending requests in the same write; others' stay",
    () =>
      Effect.gen(function* () {
        const { users, u, mine, others } = yield* scene
        const before = yield* pendingBytes
        assert.isTrue(yield* users.setDisabled(u.userId, true, T + 5))
        assert.deepStrictEqual(yield* alive(mine), all(mine, false))
        assert.deepStrictEqual(yield* alive(others), all(others, true))
        const dropped = mine.reduce((n, m) => n + m.pending.rawQuery.length, 0)
        assert.strictEqual(yield* pendingBytes, before - dropped, "their characters no longer counted")
      })
  )

  it.effect("sessions: re-enabling a disabled user brings no session of theirs back", () =>
    Effect.gen(function* () {
      const { users, u, mine, others } = yield* scene
      assert.isTrue(yield* users.setDisabled(u.userId, true, T + 5))
      assert.isTrue(yield* users.setDisabled(u.userId, false, T + 6))
      assert.deepStrictEqual(yield* alive(mine), all(mine, false))
      // Disabling again ends the sessions signed in since
      const since = yield* sessionsOf(u.userId, 1)
      assert.isTrue(yield* users.setDisabled(u.userId, true, T + 7))
      assert.isTrue(yield* users.setDisabled(u.userId, true, T + 8))
      assert.deepStrictEqual(yield* alive(since), all(since, false))
      assert.deepStrictEqual(yield* alive(others), all(others, true))
    })
  )

  it.effect("sessions: setPasswordHash ends the user's sessions and their pending requests unless kept", () =>
    Effect.gen(function* () {
      const { users, u, mine, others } = yield* scene
      assert.isTrue(yield* users.setPasswordHash(u.userId, `scrypt$${F.hash()}`, { keepSessions: true }))
      assert.deepStrictEqual(yield* alive(mine), all(mine, true))
      assert.isTrue(yield* users.setPasswordHash(u.userId, `scrypt$${F.hash()}`, { keepSessions: false }))
      assert.deepStrictEqual(yield* alive(mine), all(mine, false))
      const since = yield* sessionsOf(u.userId, 1)
      assert.isTrue(yield* users.setPasswordHash(u.userId, `scrypt$${F.hash()}`))
      assert.deepStrictEqual(yield* alive(since), all(since, false), "ended by default")
      assert.deepStrictEqual(yield* alive(others), all(others, true))
    })
  )

  it.effect("sessions: remove ends the user's sessions and their pending requests; others' stay", () =>
    Effect.gen(function* () {
      const { users, u, mine, others } = yield* scene
      assert.isTrue(yield* users.remove(u.userId, T + 5))
      assert.deepStrictEqual(yield* alive(mine), all(mine, false))
      assert.deepStrictEqual(yield* alive(others), all(others, true))
    })
  )
}

/** Renewing a session, and changes refused for an unknown user. */
const renewalAndRefusals = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "sessions: renew replaces a stored session and keeps its requests; a session ended since it was read is not stored again",
    () =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const { users, u, mine } = yield* scene
        const [first, second] = mine.map((m) => m.session)
        if (first === undefined || second === undefined) return assert.fail("two sessions")
        const renewed = { ...first, expiresAt: T + 7200 }
        assert.isTrue(yield* sessions.renew(renewed))
        assert.deepStrictEqual(yield* sessions.find(first.idHash, T + 5000), Option.some(renewed))
        assert.deepStrictEqual(yield* alive(mine.slice(0, 1)), [[true, true]])
        // Read before the disable, renewed after it: stays ended, also once the user is enabled again
        assert.isTrue(yield* users.setDisabled(u.userId, true, T + 5))
        assert.isFalse(yield* sessions.renew({ ...second, expiresAt: T + 7200 }))
        assert.isTrue(yield* users.setDisabled(u.userId, false, T + 6))
        assert.isTrue(Option.isNone(yield* sessions.find(second.idHash, T)))
        assert.isFalse(yield* sessions.renew(F.signedInSession()), "never stored: nothing to renew")
      })
  )

  it.effect("sessions: a change refused for an unknown user ends no session", () =>
    Effect.gen(function* () {
      const users = yield* UserStore.UserStore
      const ghost = F.id("user")
      const theirs = yield* sessionsOf(ghost, 1)
      assert.isFalse(yield* users.setDisabled(ghost, true, T + 5))
      assert.isFalse(yield* users.setPasswordHash(ghost, `scrypt$${F.hash()}`))
      assert.isFalse(yield* users.remove(ghost, T + 5))
      assert.deepStrictEqual(yield* alive(theirs), all(theirs, true))
    })
  )
}

/** A session's sign-in time, and the core's absolute lifetime over the store. */
const signInTimeAndLifetime = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "sessions: authenticatedAt is kept as saved: null while anonymous, the sign-in time once signed in",
    () =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const anonymous = F.session()
        const signedIn = F.signedInSession({ authenticatedAt: T - 1234 })
        yield* sessions.save(anonymous)
        yield* sessions.save(signedIn)
        assert.isNull(Option.getOrThrow(yield* sessions.find(anonymous.idHash, T)).authenticatedAt)
        assert.strictEqual(
          Option.getOrThrow(yield* sessions.find(signedIn.idHash, T)).authenticatedAt,
          T - 1234
        )
        const renewed = { ...signedIn, expiresAt: T + 7200 }
        yield* sessions.save(renewed)
        assert.deepStrictEqual(yield* sessions.find(signedIn.idHash, T), Option.some(renewed))
      })
  )

  it.effect(
    "sessions: a session past its absolute lifetime is not found, and renewing it never moves its expiry past that",
    () =>
      Effect.gen(function* () {
        const cookie = { path: "/", secure: true }
        yield* TestClock.setTime(T * 1000)
        const fresh = yield* Session.fresh
        const signedIn = { ...fresh, userId: F.id("user"), username: F.id("name"), authenticatedAt: T }
        const header = (yield* Session.save(signedIn, cookie)).split(";")[0] as string
        // Used every 29 minutes: each load renews the idle lifetime, never past T + sessionMaxAge
        for (const at of [T + 1740, T + 3480]) {
          yield* TestClock.setTime(at * 1000)
          assert.isTrue(Option.isSome(yield* Session.load(header)), `found at ${at - T} s`)
          yield* Session.save(signedIn, cookie)
        }
        const stored = Option.getOrThrow(
          yield* Effect.flatMap(Sessions, (s) => s.find(fresh.idHash, T + 3480))
        )
        assert.isAtMost(stored.expiresAt, T + 3600, "the stored expiry stops at the absolute end")
        yield* TestClock.setTime((T + 3600) * 1000)
        assert.isTrue(Option.isNone(yield* Session.load(header)), "signed out at the absolute end")
        assert.isTrue(Option.isNone(yield* Effect.flatMap(Sessions, (s) => s.find(fresh.idHash, T + 3600))))
      }).pipe(Effect.provide(Layer.merge(settings, Entropy.layer)))
  )
}

/** Register the lifecycle cases on `it` (the shared layer). */
export const sessionLifecycleCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  accountChanges(it)
  renewalAndRefusals(it)
  signInTimeAndLifetime(it)
}
