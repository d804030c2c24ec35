/**
 * The user part of the storage contract: inserting, finding by id and by the exact
 * username, listing and removing platform users.
 */
import { assert, type Vitest } from "@effect/vitest"
import { ConsentStore, type Stores, TokenStore, UserStore } from "@latchkey/core"
import { Effect, Option } from "effect"
import * as F from "../Fixtures.js"
import { findToken, some } from "./support.js"

const T = F.baseTime

/** Insert and find, the username's uniqueness, and its exact match. */
const records = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("users: insert then find by id and by username", () =>
    Effect.gen(function* () {
      const users = yield* UserStore.UserStore
      const u = F.user()
      yield* users.insert(u)
      assert.deepStrictEqual(some(yield* users.findById(u.userId), "user"), u)
      assert.deepStrictEqual(some(yield* users.findByUsername(u.username), "user"), u)
      assert.isTrue(Option.isNone(yield* users.findById(F.id("user"))))
      assert.isTrue(Option.isNone(yield* users.findByUsername(F.id("name"))))
    })
  )

  it.effect("users: a second user with the same username fails with UsernameTaken", () =>
    Effect.gen(function* () {
      const users = yield* UserStore.UserStore
      const u = F.user()
      yield* users.insert(u)
      const err = yield* Effect.flip(users.insert(F.user({ username: u.username })))
      assert.strictEqual(err._tag, "UsernameTaken")
      if (err._tag === "UsernameTaken") assert.strictEqual(err.username, u.username)
      assert.deepStrictEqual(some(yield* users.findByUsername(u.username), "user"), u)
    })
  )

  it.effect("users: findByUsername matches exactly (case, spacing and accents count)", () =>
    Effect.gen(function* () {
      const users = yield* UserStore.UserStore
      const suffix = crypto.randomUUID()
      const lower = F.user({ username: `alice-${suffix}` })
      yield* users.insert(lower)
      for (const probe of [
        `Alice-${suffix}`,
        `ALICE-${suffix}`,
        ` alice-${suffix}`,
        `alice-${suffix} `,
        `alicé-${suffix}`
      ]) {
        assert.isTrue(Option.isNone(yield* users.findByUsername(probe)), probe)
      }
      assert.isTrue(Option.isNone(yield* users.findByUsername(`alice-${suffix.slice(0, 8)}%`)))
      // Usernames differing only in case are different users.
      const upper = F.user({ username: `Alice-${suffix}` })
      yield* users.insert(upper)
      assert.strictEqual(some(yield* users.findByUsername(`Alice-${suffix}`), "user").userId, upper.userId)
      assert.strictEqual(some(yield* users.findByUsername(`alice-${suffix}`), "user").userId, lower.userId)
    })
  )
}

/** Listing users, and removing one with their consents and tokens. */
const listAndRemoval = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("users: list returns every user, oldest first", () =>
    Effect.gen(function* () {
      const users = yield* UserStore.UserStore
      const a = F.user({ createdAt: T + 1 })
      const b = F.user({ createdAt: T })
      yield* Effect.forEach([a, b], users.insert)
      const mine = new Set([a.userId, b.userId])
      assert.deepStrictEqual(
        (yield* users.list()).filter((u) => mine.has(u.userId)),
        [b, a]
      )
    })
  )

  it.effect("users: remove deletes the user, their consents, and revokes their tokens only", () =>
    Effect.gen(function* () {
      const users = yield* UserStore.UserStore
      const tokens = yield* TokenStore.TokenStore
      const consents = yield* ConsentStore.ConsentStore
      const u = F.user()
      const other = F.user()
      yield* users.insert(u)
      yield* users.insert(other)
      const appKey = F.id("app")
      yield* consents.grant(u.userId, appKey, F.scope("read"), T)
      yield* consents.grant(other.userId, appKey, F.scope("read"), T)
      const mine = F.pair({ userId: u.userId })
      const theirs = F.token({ userId: other.userId })
      yield* tokens.insert([...mine, theirs])
      assert.isTrue(yield* users.remove(u.userId, T + 7))
      assert.isTrue(Option.isNone(yield* users.findById(u.userId)))
      assert.isTrue(Option.isNone(yield* users.findByUsername(u.username)))
      assert.isTrue(Option.isNone(yield* consents.find(u.userId, appKey)))
      assert.isTrue(Option.isSome(yield* consents.find(other.userId, appKey)))
      for (const t of mine) assert.strictEqual((yield* findToken(t)).revokedAt, T + 7)
      assert.strictEqual((yield* findToken(theirs)).revokedAt, null)
      assert.isFalse(yield* users.remove(u.userId, T + 8))
      // The username is free again.
      yield* users.insert(F.user({ username: u.username }))
    })
  )
}

/** Register the user cases with the contract's `it`. */
export const userCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  records(it)
  listAndRemoval(it)
}
