/**
 * Dynamic client registration (`RegistrationStore`): initial access tokens found and listed while
 * they have a use left and are unexpired, spent one use at a time (never below zero, never once
 * expired), revoked, swept once spent or expired; registrations recorded for an existing
 * application only, found by App Key and gone with their application.
 */
import { assert, type Vitest } from "@effect/vitest"
import { ApplicationStore, RegistrationStore, type Stores } from "@latchkey/core"
import { Effect, Option } from "effect"
import * as F from "../Fixtures.js"
import { purgeEra } from "./support.js"

const T = F.baseTime

/** An initial access token with `uses` left, expiring 1000 seconds after `at`. */
const initial = (uses: number, at: number = T): RegistrationStore.InitialAccessToken => ({
  tokenHash: F.hash(),
  usesLeft: uses,
  expiresAt: at + 1000,
  createdAt: at
})

const mine = (
  listed: ReadonlyArray<RegistrationStore.InitialAccessToken>,
  ours: ReadonlyArray<RegistrationStore.InitialAccessToken>
) => listed.filter((t) => ours.some((o) => o.tokenHash === t.tokenHash))

/** Register the client registration cases with the contract's `it`. */
export const registrationCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("initial access tokens: found and listed while live, the latest expiry first", () =>
    Effect.gen(function* () {
      const store = yield* RegistrationStore.RegistrationStore
      const early = initial(2, T)
      const late = initial(1, T + 10)
      const spent = initial(0, T)
      const ours = [early, late, spent]
      for (const t of ours) yield* store.insertToken(t)
      assert.deepStrictEqual(yield* store.findToken(early.tokenHash, T + 5), Option.some(early))
      assert.isTrue(Option.isNone(yield* store.findToken(spent.tokenHash, T + 5)), "no use left")
      assert.isTrue(Option.isNone(yield* store.findToken(early.tokenHash, early.expiresAt)), "expired")
      assert.isTrue(Option.isNone(yield* store.findToken(F.hash(), T)))
      assert.deepStrictEqual(mine(yield* store.listTokens(T + 5), ours), [late, early])
      assert.deepStrictEqual(mine(yield* store.listTokens(early.expiresAt), ours), [late])
    })
  )

  it.effect("initial access tokens: each use spent once, never past the last or the expiry", () =>
    Effect.gen(function* () {
      const store = yield* RegistrationStore.RegistrationStore
      const two = initial(2)
      yield* store.insertToken(two)
      assert.isTrue(yield* store.spendToken(two.tokenHash, T + 1))
      assert.deepStrictEqual(
        Option.map(yield* store.findToken(two.tokenHash, T + 1), (t) => t.usesLeft),
        Option.some(1)
      )
      assert.isFalse(yield* store.spendToken(two.tokenHash, two.expiresAt), "expired: not spent")
      assert.isTrue(yield* store.spendToken(two.tokenHash, T + 2))
      assert.isFalse(yield* store.spendToken(two.tokenHash, T + 3), "no use left")
      assert.isFalse(yield* store.spendToken(F.hash(), T), "unknown")
      assert.isTrue(Option.isNone(yield* store.findToken(two.tokenHash, T + 3)))
    })
  )

  it.effect("initial access tokens: revoked once; a digest recorded twice fails", () =>
    Effect.gen(function* () {
      const store = yield* RegistrationStore.RegistrationStore
      const t = initial(3)
      yield* store.insertToken(t)
      const twice = yield* Effect.either(store.insertToken(t))
      assert.strictEqual(twice._tag, "Left")
      assert.isTrue(yield* store.revokeToken(t.tokenHash))
      assert.isFalse(yield* store.revokeToken(t.tokenHash))
      assert.isTrue(Option.isNone(yield* store.findToken(t.tokenHash, T)))
    })
  )

  it.effect(
    "initial access tokens: purgeTokens deletes at most `limit` spent or expired ones, never a live one",
    () =>
      Effect.gen(function* () {
        const store = yield* RegistrationStore.RegistrationStore
        const P = purgeEra
        const expired = [1, 2].map((i) => initial(5, P - 2000 - i))
        const spent = initial(0, P - 10)
        const live = initial(1, P - 10)
        for (const t of [...expired, spent, live]) yield* store.insertToken(t)
        assert.strictEqual(yield* store.purgeTokens(P, 2), 2)
        assert.strictEqual(yield* store.purgeTokens(P, 0), 0)
        assert.isAtLeast(yield* store.purgeTokens(P, 10), 1)
        assert.isTrue(yield* store.revokeToken(live.tokenHash), "the live one is still there")
        for (const t of [...expired, spent]) assert.isFalse(yield* store.revokeToken(t.tokenHash))
      })
  )

  clientCases(it)
}

const clientCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("registrations: recorded for an application, found by App Key, gone with it", () =>
    Effect.gen(function* () {
      const store = yield* RegistrationStore.RegistrationStore
      const apps = yield* ApplicationStore.ApplicationStore
      const app = F.application()
      yield* apps.insert(app)
      const registration = { appKey: app.appKey, accessTokenHash: F.hash(), registeredAt: T }
      yield* store.insertClient(registration)
      assert.deepStrictEqual(yield* store.findClient(app.appKey), Option.some(registration))
      const twice = yield* Effect.either(store.insertClient({ ...registration, accessTokenHash: F.hash() }))
      assert.strictEqual(twice._tag, "Left", "one registration per application")
      assert.isTrue(Option.isNone(yield* store.findClient(F.id("app"))))
      assert.isTrue(yield* apps.remove(app.appKey, T + 1))
      assert.isTrue(Option.isNone(yield* store.findClient(app.appKey)), "deleted with its application")
    })
  )
}
