/**
 * The account page's part of the storage contract for sign-in sessions: a user's live sessions
 * listed, one of them ended only for its own user, all but one ended in one write, and a new
 * password that keeps the session that set it and ends the others in the same write.
 */
import { assert, type Vitest } from "@effect/vitest"
import { type SessionStore, type Stores, UserStore } from "@latchkey/core"
import { Effect, Option } from "effect"
import * as F from "../Fixtures.js"
import { isPending, Sessions } from "./sessions.js"
import { insertUser } from "./users.js"

const T = F.baseTime

/** A session signed in as `userId` at `T - ago`, with a request pending in it, saved. */
const signedIn = (userId: string, ago: number, expiresAt = T + 1800) =>
  Effect.gen(function* () {
    const sessions = yield* Sessions
    const session = F.signedInSession({ userId, username: F.id("name"), authenticatedAt: T - ago, expiresAt })
    const pending = F.pending({ sessionHash: session.idHash, step: "consent" })
    yield* sessions.save(session)
    yield* sessions.addPending(pending)
    return { session, pending }
  })

type Made = { readonly session: SessionStore.SessionRecord; readonly pending: SessionStore.PendingRecord }

/** For each session, whether it and its pending request are still found (at `T`). */
const alive = (made: ReadonlyArray<Made>) =>
  Effect.flatMap(Sessions, (s) =>
    Effect.forEach(made, ({ session, pending }) =>
      Effect.all([Effect.map(s.find(session.idHash, T), Option.isSome), isPending(pending)])
    )
  )

/** A user with three sessions (signed in 300, 100 and 200 seconds ago), another user's and an anonymous one. */
const scene = Effect.gen(function* () {
  const u = { userId: yield* insertUser }
  const other = { userId: yield* insertUser }
  const mine = [
    yield* signedIn(u.userId, 300),
    yield* signedIn(u.userId, 100),
    yield* signedIn(u.userId, 200)
  ]
  const theirs = yield* signedIn(other.userId, 50)
  const anonymous = F.session()
  yield* Effect.flatMap(Sessions, (s) => s.save(anonymous))
  return { users: yield* UserStore.UserStore, u, other, mine, theirs, anonymous }
})

/** Listing a user's sessions, and ending one of them. */
const listAndEndOne = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("sessions: listOf answers the user's live sessions only, the latest sign-in first", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const { u, mine } = yield* scene
      const expired = yield* signedIn(u.userId, 10, T - 1)
      const listed = yield* sessions.listOf(u.userId, T)
      assert.deepStrictEqual(
        listed.map((s) => s.idHash),
        [mine[1], mine[2], mine[0]].map((m) => m?.session.idHash),
        "neither another user's, an anonymous nor an expired session"
      )
      assert.deepStrictEqual(listed[0], mine[1]?.session, "each as saved")
      assert.isFalse(listed.some((s) => s.idHash === expired.session.idHash))
      assert.deepStrictEqual(yield* sessions.listOf(F.id("user"), T), [], "none for an unknown user")
    })
  )

  it.effect("sessions: endOf ends one of the user's sessions with its requests, never another user's", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const { u, other, mine, theirs, anonymous } = yield* scene
      const [first, second, third] = mine
      if (first === undefined || second === undefined || third === undefined) return assert.fail("three")
      assert.isFalse(yield* sessions.endOf(u.userId, theirs.session.idHash), "another user's session")
      assert.isFalse(yield* sessions.endOf(u.userId, anonymous.idHash), "an anonymous session")
      assert.isFalse(yield* sessions.endOf(other.userId, first.session.idHash), "not theirs to end")
      assert.deepStrictEqual(yield* alive([theirs, ...mine]), [
        [true, true],
        [true, true],
        [true, true],
        [true, true]
      ])
      assert.isTrue(yield* sessions.endOf(u.userId, first.session.idHash))
      assert.deepStrictEqual(yield* alive(mine), [
        [false, false],
        [true, true],
        [true, true]
      ])
      assert.isFalse(yield* sessions.endOf(u.userId, first.session.idHash), "once")
    })
  )
}

/** Ending all but one of a user's sessions, on its own and with a new password. */
const endAllButOne = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("sessions: endOthersOf ends every session of the user but one, in one write; others' stay", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const { u, mine, theirs, anonymous } = yield* scene
      const [first, second, third] = mine
      if (first === undefined || second === undefined || third === undefined) return assert.fail("three")
      assert.strictEqual(yield* sessions.endOthersOf(u.userId, second.session.idHash), 2)
      assert.deepStrictEqual(yield* alive([first, second, third, theirs]), [
        [false, false],
        [true, true],
        [false, false],
        [true, true]
      ])
      assert.isTrue(Option.isSome(yield* sessions.find(anonymous.idHash, T)))
      assert.strictEqual(yield* sessions.endOthersOf(u.userId, second.session.idHash), 0, "none left")
    })
  )

  it.effect("sessions: setPasswordHash with keepSession keeps that session and ends the user's others", () =>
    Effect.gen(function* () {
      const { users, u, mine, theirs } = yield* scene
      const [first, second, third] = mine
      if (first === undefined || second === undefined || third === undefined) return assert.fail("three")
      const hash = `scrypt$${F.hash()}`
      assert.isTrue(yield* users.setPasswordHash(u.userId, hash, { keepSession: third.session.idHash }))
      assert.deepStrictEqual(yield* alive([first, second, third, theirs]), [
        [false, false],
        [false, false],
        [true, true],
        [true, true]
      ])
      const found = yield* users.findById(u.userId)
      assert.strictEqual(Option.getOrThrow(found).passwordHash, hash, "in the same write as the new hash")
      assert.isFalse(
        yield* users.setPasswordHash(F.id("user"), hash, { keepSession: third.session.idHash }),
        "an unknown user: nothing ended"
      )
      assert.deepStrictEqual(yield* alive([third]), [[true, true]])
    })
  )
}

/** Register the account page's session cases on `it` (the shared layer). */
export const accountSessionCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  listAndEndOne(it)
  endAllButOne(it)
}
