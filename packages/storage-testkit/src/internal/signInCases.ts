/**
 * D16, the sign-in part of the storage contract for sessions: a new signed-in session is stored
 * only while its user, read in the same write, is the account the sign-in checked (enabled, with
 * the password hash that was verified).
 */
import { assert, type Vitest } from "@effect/vitest"
import { SessionStore, type Stores, UserStore } from "@latchkey/core"
import { Effect, Option } from "effect"
import * as F from "../Fixtures.js"

const T = F.baseTime

/** A stored user, and a signed-in session of theirs not stored yet. */
const signingIn = Effect.gen(function* () {
  const users = yield* UserStore.UserStore
  const user = F.user()
  yield* users.insert(user)
  const session = F.signedInSession({ userId: user.userId, username: user.username })
  return { users, user, session, sessions: yield* SessionStore.SessionStore }
})

/** Register the sign-in cases on `it` (the shared layer). */
export const signInCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("D16: signIn stores the session of an enabled user with the password hash that was checked", () =>
    Effect.gen(function* () {
      const { user, session, sessions } = yield* signingIn
      assert.isTrue(yield* sessions.signIn(session, user))
      assert.deepStrictEqual(yield* sessions.find(session.idHash, T), Option.some(session))
    })
  )

  const refusals = {
    "a disabled user": (u: UserStore.UserStore["Type"], user: { userId: string }) =>
      u.setDisabled(user.userId, true, T),
    "a deleted user": (u: UserStore.UserStore["Type"], user: { userId: string }) => u.remove(user.userId, T),
    "a password hash changed since the check": (u: UserStore.UserStore["Type"], user: { userId: string }) =>
      u.setPasswordHash(user.userId, `scrypt$${F.hash()}`, { keepSessions: true })
  }
  for (const [name, change] of Object.entries(refusals)) {
    it.effect(`D16: signIn for ${name} is refused and stores nothing`, () =>
      Effect.gen(function* () {
        const { users, user, session, sessions } = yield* signingIn
        const before = (yield* sessions.stats()).sessions
        assert.isTrue(yield* change(users, user))
        assert.isFalse(yield* sessions.signIn(session, user))
        assert.isTrue(Option.isNone(yield* sessions.find(session.idHash, T)))
        assert.strictEqual((yield* sessions.stats()).sessions, before, "no session stored")
      })
    )
  }

  it.effect(
    "D16: signIn for another account under the same username (deleted and re-created) is refused",
    () =>
      Effect.gen(function* () {
        const { users, user, session, sessions } = yield* signingIn
        assert.isTrue(yield* users.remove(user.userId, T))
        yield* users.insert({ ...user, userId: F.id("user") })
        assert.isFalse(yield* sessions.signIn(session, user))
        assert.isTrue(Option.isNone(yield* sessions.find(session.idHash, T)))
      })
  )

  it.effect("D16: signIn for a user who never existed is refused", () =>
    Effect.gen(function* () {
      const sessions = yield* SessionStore.SessionStore
      const session = F.signedInSession()
      const checked = { userId: session.userId ?? "", passwordHash: `scrypt$${F.hash()}` }
      assert.isFalse(yield* sessions.signIn(session, checked))
      assert.isTrue(Option.isNone(yield* sessions.find(session.idHash, T)))
    })
  )
}
