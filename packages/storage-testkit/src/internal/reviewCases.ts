/**
 * The review status of applications and their owners (docs/platform.md): `setStatus` as one
 * conditional write that, entering a suspension or a rejection, revokes every token and deletes
 * every unused code of the application in the same write; owners added, removed, listed, found
 * by user, and gone with the user or the application.
 */
import { assert, type Vitest } from "@effect/vitest"
import { ApplicationStore, CodeStore, type Review, type Stores, TokenStore, UserStore } from "@latchkey/core"
import { Effect, Option } from "effect"
import * as F from "../Fixtures.js"
import { revokedAt, some } from "./support.js"
import { insertUser } from "./users.js"

const T = F.baseTime

const suspend: Review.StatusChange = { from: "active", to: "suspended", reason: "abuse reported" }

/** An application with a token pair, an unused code and a used one, and another application's token. */
const issued = Effect.gen(function* () {
  const apps = yield* ApplicationStore.ApplicationStore
  const tokens = yield* TokenStore.TokenStore
  const codes = yield* CodeStore.CodeStore
  const app = F.application()
  yield* apps.insert(app)
  const userId = yield* insertUser
  const pair = F.pair({ appKey: app.appKey, userId })
  yield* tokens.insert(pair)
  const unused = F.code({ appKey: app.appKey, userId })
  const used = F.code({ appKey: app.appKey, userId })
  yield* F.insertCode(unused)
  yield* F.insertCode(used)
  yield* codes.redeem(used.codeHash, T + 1, [F.token({ appKey: app.appKey, userId })])
  const other = F.token({ appKey: F.id("app") })
  yield* tokens.insert([other])
  return { app, pair, unused, used, other }
})

/** The status moves and what a suspension ends. */
const statuses = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "review: a new application reads as active with no reason; setStatus moves it and keeps the reason",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const app = F.application({ status: "pending" })
        yield* apps.insert(app)
        assert.strictEqual(some(yield* apps.find(app.appKey), "application").status, "pending")
        const rejected = yield* apps.setStatus(
          app.appKey,
          { from: "pending", to: "rejected", reason: "no privacy policy" },
          T
        )
        assert.deepStrictEqual(some(rejected, "application"), {
          ...app,
          status: "rejected",
          statusReason: "no privacy policy"
        })
        assert.deepStrictEqual(yield* apps.find(app.appKey), rejected)
        const plain = F.application()
        yield* apps.insert(plain)
        assert.deepStrictEqual(some(yield* apps.find(plain.appKey), "application").status, "active")
      })
  )

  it.effect(
    "review: setStatus from another status fails with StatusChanged naming it and writes nothing",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const app = F.application({ status: "pending" })
        yield* apps.insert(app)
        const refused = yield* Effect.flip(apps.setStatus(app.appKey, suspend, T))
        assert.strictEqual(refused._tag, "StatusChanged")
        if (refused._tag === "StatusChanged") assert.strictEqual(refused.status, "pending")
        assert.deepStrictEqual(some(yield* apps.find(app.appKey), "application"), app)
        assert.isTrue(Option.isNone(yield* apps.setStatus(F.id("app"), suspend, T)))
      })
  )

  it.effect(
    "review: suspending revokes every token and deletes every unused code of the application in the same write",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const codes = yield* CodeStore.CodeStore
        const { app, pair, unused, used, other } = yield* issued
        const after = yield* apps.setStatus(app.appKey, suspend, T + 5)
        assert.strictEqual(some(after, "application").status, "suspended")
        assert.deepStrictEqual(yield* revokedAt(pair), [T + 5, T + 5])
        assert.deepStrictEqual(yield* revokedAt([other]), [null])
        assert.isTrue(Option.isNone(yield* codes.find(unused.codeHash)))
        assert.isTrue(Option.isSome(yield* codes.find(used.codeHash)))
        // Reinstating brings nothing back
        yield* apps.setStatus(app.appKey, { from: "suspended", to: "active", reason: null }, T + 6)
        assert.deepStrictEqual(yield* revokedAt(pair), [T + 5, T + 5])
        assert.isTrue(Option.isNone(yield* codes.find(unused.codeHash)))
      })
  )

  it.effect("review: a refused suspension revokes nothing; approving revokes nothing", () =>
    Effect.gen(function* () {
      const apps = yield* ApplicationStore.ApplicationStore
      const codes = yield* CodeStore.CodeStore
      const { app, pair, unused } = yield* issued
      yield* Effect.flip(apps.setStatus(app.appKey, { ...suspend, from: "pending" }, T + 5))
      yield* apps.setStatus(app.appKey, { from: "active", to: "pending", reason: null }, T + 5)
      yield* apps.setStatus(app.appKey, { from: "pending", to: "active", reason: null }, T + 6)
      assert.deepStrictEqual(yield* revokedAt(pair), [null, null])
      assert.isTrue(Option.isSome(yield* codes.find(unused.codeHash)))
    })
  )
}

/** Owners: added once, listed in order, found by user, removed, and gone with the user or the application. */
const owners = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("review: owners are added once, listed in the order added, and removed", () =>
    Effect.gen(function* () {
      const apps = yield* ApplicationStore.ApplicationStore
      const app = F.application()
      yield* apps.insert(app)
      const [a, b] = [yield* insertUser, yield* insertUser]
      assert.deepStrictEqual(yield* apps.owners(app.appKey), [])
      assert.isTrue(yield* apps.addOwner(app.appKey, a, T))
      assert.isTrue(yield* apps.addOwner(app.appKey, b, T + 1))
      assert.isFalse(yield* apps.addOwner(app.appKey, a, T + 2))
      assert.deepStrictEqual(yield* apps.owners(app.appKey), [a, b])
      assert.isTrue(yield* apps.removeOwner(app.appKey, a))
      assert.isFalse(yield* apps.removeOwner(app.appKey, a))
      assert.deepStrictEqual(yield* apps.owners(app.appKey), [b])
    })
  )

  it.effect("review: addOwner writes nothing for an unknown application or user", () =>
    Effect.gen(function* () {
      const apps = yield* ApplicationStore.ApplicationStore
      const app = F.application()
      yield* apps.insert(app)
      const userId = yield* insertUser
      assert.isFalse(yield* apps.addOwner(F.id("app"), userId, T))
      assert.isFalse(yield* apps.addOwner(app.appKey, F.id("user"), T))
      assert.deepStrictEqual(yield* apps.owners(app.appKey), [])
      assert.deepStrictEqual(yield* apps.ownedBy(userId), [])
    })
  )

  it.effect("review: ownedBy lists a user's applications oldest first, and no one else's", () =>
    Effect.gen(function* () {
      const apps = yield* ApplicationStore.ApplicationStore
      const [userId, other] = [yield* insertUser, yield* insertUser]
      const newer = F.application({ createdAt: T + 2 })
      const older = F.application({ createdAt: T, status: "pending" })
      const theirs = F.application()
      yield* Effect.forEach([newer, older, theirs], apps.insert)
      yield* apps.addOwner(newer.appKey, userId, T)
      yield* apps.addOwner(older.appKey, userId, T)
      yield* apps.addOwner(theirs.appKey, other, T)
      assert.deepStrictEqual(yield* apps.ownedBy(userId), [older, newer])
    })
  )

  it.effect(
    "review: removing a user removes them from every owner list; removing an application its owners",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const users = yield* UserStore.UserStore
        const app = F.application()
        yield* apps.insert(app)
        const [gone, stays] = [yield* insertUser, yield* insertUser]
        yield* apps.addOwner(app.appKey, gone, T)
        yield* apps.addOwner(app.appKey, stays, T)
        assert.isTrue(yield* users.remove(gone, T + 1))
        assert.deepStrictEqual(yield* apps.owners(app.appKey), [stays])
        assert.deepStrictEqual(yield* apps.ownedBy(gone), [])
        assert.isTrue(yield* apps.remove(app.appKey, T + 2))
        assert.deepStrictEqual(yield* apps.ownedBy(stays), [])
        // An application registered again under the App Key has no owners from before
        yield* apps.insert(app)
        assert.deepStrictEqual(yield* apps.owners(app.appKey), [])
      })
  )
}

/** Register the review and ownership cases with the contract's `it`. */
export const reviewCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  statuses(it)
  owners(it)
}
