/**
 * The token part of the storage contract: access and refresh tokens stored by kind and
 * digest, a refresh token rotated at most once (within a grace period), and revocation
 * of one token or of a whole family.
 */
import { assert, type Vitest } from "@effect/vitest"
import { type Stores, TokenStore } from "@latchkey/core"
import { Array as Arr, Effect, Exit, Option } from "effect"
import * as F from "../Fixtures.js"
import { findToken, isStored } from "./support.js"

const T = F.baseTime

/** Insert and find by kind, all or none, and a rotation that succeeds once. */
const insertAndRotate = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("tokens: insert then find returns the same record, namespaced by kind", () =>
    Effect.gen(function* () {
      const tokens = yield* TokenStore.TokenStore
      const [access, refresh] = F.pair({ openId: null })
      const appToken = F.token({ userId: null, openId: null, scope: F.scope(), parentHash: F.hash() })
      yield* tokens.insert([access, refresh, appToken])
      assert.deepStrictEqual(yield* findToken(access), access)
      assert.deepStrictEqual(yield* findToken(refresh), refresh)
      assert.deepStrictEqual(yield* findToken(appToken), appToken)
      assert.isTrue(Option.isNone(yield* tokens.find("refresh", access.tokenHash)))
      assert.isTrue(Option.isNone(yield* tokens.find("access", refresh.tokenHash)))
      assert.isTrue(Option.isNone(yield* tokens.find("access", F.hash())))
      // The same digest under the other kind is a different token.
      const twin = F.token({ kind: "refresh", tokenHash: access.tokenHash })
      yield* tokens.insert([twin])
      assert.deepStrictEqual(yield* findToken(twin), twin)
      assert.deepStrictEqual(yield* findToken(access), access)
      assert.isTrue(yield* tokens.revoke("refresh", twin.tokenHash, T))
      assert.strictEqual((yield* findToken(access)).revokedAt, null)
    })
  )

  it.effect("tokens: insert is all or none; a duplicate digest fails loudly", () =>
    Effect.gen(function* () {
      const tokens = yield* TokenStore.TokenStore
      const existing = F.token()
      yield* tokens.insert([existing])
      const fresh = F.token()
      const exit = yield* Effect.exit(tokens.insert([fresh, F.token({ tokenHash: existing.tokenHash })]))
      assert.isTrue(Exit.isFailure(exit))
      assert.isFalse(yield* isStored(fresh))
      assert.deepStrictEqual(yield* findToken(existing), existing)
      yield* tokens.insert([])
    })
  )

  it.effect(
    "tokens: rotate succeeds once; a second rotate fails with RefreshAlreadyRotated, even in the same second",
    () =>
      Effect.gen(function* () {
        const tokens = yield* TokenStore.TokenStore
        const [access, refresh] = F.pair()
        yield* tokens.insert([access, refresh])
        const next = F.pair({
          familyId: refresh.familyId,
          appKey: refresh.appKey,
          parentHash: refresh.tokenHash
        })
        yield* tokens.rotate(refresh.tokenHash, T + 100, 0, next)
        assert.deepStrictEqual(yield* findToken(refresh), { ...refresh, rotatedAt: T + 100 })
        for (const t of next) assert.deepStrictEqual(yield* findToken(t), t)
        for (const now of [T + 100, T + 101, T + 5000]) {
          const again = F.pair({ familyId: refresh.familyId, parentHash: refresh.tokenHash })
          const err = yield* Effect.flip(tokens.rotate(refresh.tokenHash, now, 0, again))
          assert.strictEqual(err._tag, "RefreshAlreadyRotated")
          if (err._tag === "RefreshAlreadyRotated") assert.strictEqual(err.familyId, refresh.familyId)
          for (const t of again) assert.isFalse(yield* isStored(t))
        }
        assert.strictEqual((yield* findToken(refresh)).rotatedAt, T + 100)
        // Rotation does not revoke anything by itself.
        assert.strictEqual((yield* findToken(access)).revokedAt, null)
      })
  )
}

/** Rotation's grace window, inactive refresh tokens, and concurrent rotations. */
const rotationRefusals = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "tokens: with grace > 0 a retry within the window succeeds; after it, RefreshAlreadyRotated",
    () =>
      Effect.gen(function* () {
        const tokens = yield* TokenStore.TokenStore
        const [, refresh] = F.pair()
        yield* tokens.insert([refresh])
        const grace = 10
        yield* tokens.rotate(refresh.tokenHash, T + 100, grace, [F.token({ familyId: refresh.familyId })])
        const retry = F.pair({ familyId: refresh.familyId })
        yield* tokens.rotate(refresh.tokenHash, T + 100 + grace, grace, retry)
        for (const t of retry) assert.isTrue(yield* isStored(t))
        // The window counts from the first rotation, which a retry does not move.
        assert.strictEqual((yield* findToken(refresh)).rotatedAt, T + 100)
        const late = F.pair({ familyId: refresh.familyId })
        const err = yield* Effect.flip(tokens.rotate(refresh.tokenHash, T + 101 + grace, grace, late))
        assert.strictEqual(err._tag, "RefreshAlreadyRotated")
        for (const t of late) assert.isFalse(yield* isStored(t))
      })
  )

  it.effect("tokens: expired, revoked, unknown or access-kind refresh tokens fail with TokenInactive", () =>
    Effect.gen(function* () {
      const tokens = yield* TokenStore.TokenStore
      const [access, refresh] = F.pair()
      const revoked = F.token({ kind: "refresh", revokedAt: T })
      const rotatedRevoked = F.token({ kind: "refresh", revokedAt: T + 2, rotatedAt: T + 1 })
      yield* tokens.insert([access, refresh, revoked, rotatedRevoked])
      const cases: ReadonlyArray<readonly [string, number]> = [
        [refresh.tokenHash, refresh.expiresAt],
        [refresh.tokenHash, refresh.expiresAt + 1],
        [revoked.tokenHash, T + 1],
        [rotatedRevoked.tokenHash, T + 2],
        [access.tokenHash, T + 1],
        [F.hash(), T + 1]
      ]
      for (const [hash, now] of cases) {
        const issued = F.pair({ familyId: refresh.familyId })
        const err = yield* Effect.flip(tokens.rotate(hash, now, 60, issued))
        assert.strictEqual(err._tag, "TokenInactive")
        for (const t of issued) assert.isFalse(yield* isStored(t))
      }
      assert.deepStrictEqual(yield* findToken(refresh), refresh)
      yield* tokens.rotate(refresh.tokenHash, refresh.expiresAt - 1, 0, [])
    })
  )

  it.effect("tokens: of 25 concurrent rotations exactly one succeeds and only its tokens are saved", () =>
    Effect.gen(function* () {
      const tokens = yield* TokenStore.TokenStore
      const [, refresh] = F.pair()
      yield* tokens.insert([refresh])
      const attempts = Arr.makeBy(25, () => F.pair({ familyId: refresh.familyId }))
      const exits = yield* Effect.all(
        attempts.map((issued) => Effect.exit(tokens.rotate(refresh.tokenHash, T + 1, 0, issued))),
        { concurrency: "unbounded" }
      )
      const winners = exits.flatMap((e, i) => (Exit.isSuccess(e) ? [i] : []))
      assert.strictEqual(winners.length, 1)
      for (const [i, issued] of attempts.entries()) {
        for (const t of issued) assert.strictEqual(yield* isStored(t), i === winners[0])
      }
    })
  )
}

/** Revoking a family, and one token of one kind. */
const revocation = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("tokens: revokeFamily revokes every token of the family and only those", () =>
    Effect.gen(function* () {
      const tokens = yield* TokenStore.TokenStore
      const [access, refresh] = F.pair()
      const familyId = refresh.familyId
      const child = F.pair({ familyId, parentHash: refresh.tokenHash })
      const early = F.token({ familyId, revokedAt: T + 1 })
      const stranger = F.pair({ appKey: access.appKey, userId: access.userId })
      yield* tokens.insert([access, refresh, ...child, early, ...stranger])
      yield* tokens.rotate(refresh.tokenHash, T + 2, 0, [])
      assert.strictEqual(yield* tokens.revokeFamily(familyId, T + 3), 4)
      for (const t of [access, refresh, ...child]) assert.strictEqual((yield* findToken(t)).revokedAt, T + 3)
      assert.strictEqual((yield* findToken(early)).revokedAt, T + 1)
      for (const t of stranger) assert.strictEqual((yield* findToken(t)).revokedAt, null)
      assert.strictEqual(yield* tokens.revokeFamily(familyId, T + 4), 0)
      assert.strictEqual(yield* tokens.revokeFamily(F.id("family"), T + 4), 0)
      // A revoked refresh token is inactive, whatever else is true of it.
      const err = yield* Effect.flip(tokens.rotate(child[1].tokenHash, T + 5, 60, []))
      assert.strictEqual(err._tag, "TokenInactive")
    })
  )

  it.effect("tokens: revoke revokes one token of one kind; false when unknown or already revoked", () =>
    Effect.gen(function* () {
      const tokens = yield* TokenStore.TokenStore
      const [access, refresh] = F.pair()
      yield* tokens.insert([access, refresh])
      assert.isFalse(yield* tokens.revoke("refresh", access.tokenHash, T))
      assert.isTrue(yield* tokens.revoke("access", access.tokenHash, T + 1))
      assert.strictEqual((yield* findToken(access)).revokedAt, T + 1)
      assert.strictEqual((yield* findToken(refresh)).revokedAt, null)
      assert.isFalse(yield* tokens.revoke("access", access.tokenHash, T + 2))
      assert.strictEqual((yield* findToken(access)).revokedAt, T + 1)
      assert.isFalse(yield* tokens.revoke("access", F.hash(), T))
    })
  )
}

/** Register the token cases with the contract's `it`. */
export const tokenCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  insertAndRotate(it)
  rotationRefusals(it)
  revocation(it)
}
