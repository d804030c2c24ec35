/**
 * The passkey part of the storage contract: registering a passkey (a credential id once, across
 * every user), listing a user's, finding one by credential id, recording a sign-in with it as one
 * conditional write (one winner among sign-ins that read the same counter), renaming and removing one, and a
 * user's removal taking their passkeys with it.
 */
import { assert, type Vitest } from "@effect/vitest"
import { PasskeyStore, SessionStore, type Stores, UserStore } from "@latchkey/core"
import { Effect, Option } from "effect"
import * as F from "../Fixtures.js"
import { some } from "./support.js"
import { insertUser } from "./users.js"

const T = F.baseTime

/** Register, find, list and refuse a credential id taken. */
const registered = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "passkeys: insert then find by credential id returns the same record; unknown ids are absent",
    () =>
      Effect.gen(function* () {
        const passkeys = yield* PasskeyStore.PasskeyStore
        const singleDevice = F.passkey(F.id("user"), {
          deviceType: "singleDevice",
          backedUp: false,
          transports: [],
          counter: 7,
          lastUsedAt: T + 5
        })
        const synced = F.passkey(F.id("user"))
        yield* passkeys.insert(singleDevice)
        yield* passkeys.insert(synced)
        assert.deepStrictEqual(some(yield* passkeys.find(singleDevice.credentialId), "passkey"), singleDevice)
        assert.deepStrictEqual(some(yield* passkeys.find(synced.credentialId), "passkey"), synced)
        assert.isTrue(Option.isNone(yield* passkeys.find(F.hash())))
      })
  )

  it.effect("passkeys: a credential id registered already is refused (CredentialTaken), for any user", () =>
    Effect.gen(function* () {
      const passkeys = yield* PasskeyStore.PasskeyStore
      const first = F.passkey(F.id("user"))
      yield* passkeys.insert(first)
      for (const userId of [first.userId, F.id("user")]) {
        const again = F.passkey(userId, { credentialId: first.credentialId, name: "again" })
        const refused = yield* Effect.flip(passkeys.insert(again))
        assert.strictEqual(refused._tag, "CredentialTaken")
      }
      assert.deepStrictEqual(some(yield* passkeys.find(first.credentialId), "passkey"), first)
    })
  )

  it.effect("passkeys: listByUser answers the user's own, oldest first, then by credential id", () =>
    Effect.gen(function* () {
      const passkeys = yield* PasskeyStore.PasskeyStore
      const userId = F.id("user")
      const later = F.passkey(userId, { createdAt: T + 10 })
      const a = F.passkey(userId, { credentialId: `a${F.hash()}` })
      const b = F.passkey(userId, { credentialId: `b${F.hash()}` })
      for (const p of [later, b, a, F.passkey(F.id("user"))]) yield* passkeys.insert(p)
      assert.deepStrictEqual(yield* passkeys.listByUser(userId), [a, b, later])
      assert.deepStrictEqual(yield* passkeys.listByUser(F.id("user")), [])
    })
  )
}

/** Recording a sign-in, and removal. */
const used = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "passkeys: recordUse stores the counter, backup state and time only from the counter it read",
    () =>
      Effect.gen(function* () {
        const passkeys = yield* PasskeyStore.PasskeyStore
        const p = F.passkey(F.id("user"), { counter: 3, backedUp: false })
        yield* passkeys.insert(p)
        const use = { expected: 3, counter: 4, backedUp: true, at: T + 60 }
        assert.isTrue(yield* passkeys.recordUse(p.credentialId, use))
        const after = { ...p, counter: 4, backedUp: true, lastUsedAt: T + 60 }
        assert.deepStrictEqual(some(yield* passkeys.find(p.credentialId), "passkey"), after)
        // The same assertion again: the counter moved since, nothing changes
        assert.isFalse(yield* passkeys.recordUse(p.credentialId, { ...use, at: T + 61 }))
        assert.deepStrictEqual(some(yield* passkeys.find(p.credentialId), "passkey"), after)
        assert.isFalse(yield* passkeys.recordUse(F.hash(), use))
      })
  )

  it.effect("passkeys: of sign-ins racing from the same counter exactly one records its use", () =>
    Effect.gen(function* () {
      const passkeys = yield* PasskeyStore.PasskeyStore
      const p = F.passkey(F.id("user"), { counter: 10 })
      yield* passkeys.insert(p)
      const wins = yield* Effect.all(
        Array.from({ length: 8 }, (_, i) =>
          passkeys.recordUse(p.credentialId, { expected: 10, counter: 11 + i, backedUp: true, at: T + i })
        ),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(wins.filter((w) => w).length, 1)
      const stored = some(yield* passkeys.find(p.credentialId), "passkey")
      const winner = wins.indexOf(true)
      assert.deepStrictEqual([stored.counter, stored.lastUsedAt], [11 + winner, T + winner])
    })
  )

  it.effect("passkeys: remove deletes only the user's own passkey, once", () =>
    Effect.gen(function* () {
      const passkeys = yield* PasskeyStore.PasskeyStore
      const userId = F.id("user")
      const mine = F.passkey(userId)
      const kept = F.passkey(userId)
      yield* passkeys.insert(mine)
      yield* passkeys.insert(kept)
      assert.isFalse(yield* passkeys.remove(F.id("user"), mine.credentialId))
      assert.isTrue(yield* passkeys.remove(userId, mine.credentialId))
      assert.isFalse(yield* passkeys.remove(userId, mine.credentialId))
      assert.isTrue(Option.isNone(yield* passkeys.find(mine.credentialId)))
      assert.deepStrictEqual(yield* passkeys.listByUser(userId), [kept])
    })
  )

  it.effect("passkeys: removing a user removes their passkeys in the same write", () =>
    Effect.gen(function* () {
      const passkeys = yield* PasskeyStore.PasskeyStore
      const userId = yield* insertUser
      const other = F.passkey(yield* insertUser)
      const p = F.passkey(userId)
      yield* passkeys.insert(p)
      yield* passkeys.insert(other)
      assert.isTrue(yield* Effect.flatMap(UserStore.UserStore, (users) => users.remove(userId, T)))
      assert.isTrue(Option.isNone(yield* passkeys.find(p.credentialId)))
      assert.deepStrictEqual(yield* passkeys.listByUser(other.userId), [other])
    })
  )
}

/** Renaming. */
const renamed = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("passkeys: rename renames only the user's own passkey, leaving the rest of it as it was", () =>
    Effect.gen(function* () {
      const passkeys = yield* PasskeyStore.PasskeyStore
      const userId = F.id("user")
      const mine = F.passkey(userId, { name: "old name" })
      yield* passkeys.insert(mine)
      assert.isFalse(yield* passkeys.rename(F.id("user"), mine.credentialId, "taken over"))
      assert.isFalse(yield* passkeys.rename(userId, F.hash(), "nothing"))
      assert.deepStrictEqual(some(yield* passkeys.find(mine.credentialId), "passkey"), mine)
      assert.isTrue(yield* passkeys.rename(userId, mine.credentialId, "Work laptop"))
      assert.deepStrictEqual(some(yield* passkeys.find(mine.credentialId), "passkey"), {
        ...mine,
        name: "Work laptop"
      })
    })
  )
}

/** A session keeps how it was signed in. */
const sessionMethod = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "passkeys: a session signed in with a passkey keeps its method through save, signIn and renew",
    () =>
      Effect.gen(function* () {
        const sessions = yield* SessionStore.SessionStore
        const userId = yield* insertUser
        const user = some(yield* Effect.flatMap(UserStore.UserStore, (u) => u.findById(userId)), "user")
        const saved = F.signedInSession({ method: "passkey" })
        yield* sessions.save(saved)
        assert.deepStrictEqual(some(yield* sessions.find(saved.idHash, T), "session"), saved)
        const signedIn = F.signedInSession({ userId, username: user.username, method: "passkey" })
        assert.isTrue(yield* sessions.signIn(signedIn, user))
        assert.deepStrictEqual(some(yield* sessions.find(signedIn.idHash, T), "session"), signedIn)
        const renewed = { ...signedIn, expiresAt: signedIn.expiresAt + 60 }
        assert.isTrue(yield* sessions.renew(renewed))
        assert.deepStrictEqual(some(yield* sessions.find(signedIn.idHash, T), "session"), renewed)
        // A password's session has no method, as before
        const password = F.signedInSession()
        yield* sessions.save(password)
        assert.isFalse("method" in some(yield* sessions.find(password.idHash, T), "session"))
      })
  )
}

/** Register the passkey cases with the contract's `it`. */
export const passkeyCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  registered(it)
  used(it)
  renamed(it)
  sessionMethod(it)
}
