/**
 * The purge part of the storage contract for codes and tokens: `purgeExpired` deletes at
 * most `limit` expired records per call, and never a tombstone that still detects reuse.
 */
import { assert, type Vitest } from "@effect/vitest"
import { CodeStore, type Stores, TokenStore } from "@latchkey/core"
import { Array as Arr, Effect, Option } from "effect"
import * as F from "../Fixtures.js"
import { findToken, isStored, purgeEra, some } from "./support.js"

const P = purgeEra

/** Register the code and token purge cases with the contract's `it`. */
export const purgeCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "codes: purgeExpired deletes at most `limit` expired codes and never an unexpired tombstone",
    () =>
      Effect.gen(function* () {
        const codes = yield* CodeStore.CodeStore
        const expired = Arr.makeBy(5, (i) => F.code({ issuedAt: P - 100, expiresAt: P - i }))
        const live = F.code({ issuedAt: P - 10, expiresAt: P + 1 })
        const tombstone = F.code({ issuedAt: P - 10, expiresAt: P + 50 })
        const usedExpired = F.code({ issuedAt: P - 100, expiresAt: P - 50 })
        yield* Effect.forEach([...expired, live, tombstone, usedExpired], F.insertCode)
        yield* codes.redeem(tombstone.codeHash, P - 5, [])
        yield* codes.redeem(usedExpired.codeHash, P - 60, [])
        assert.strictEqual(yield* codes.purgeExpired(P, 2), 2)
        assert.strictEqual(yield* codes.purgeExpired(P, 0), 0)
        let n = 1
        for (let round = 0; n > 0 && round < 1000; round++) {
          n = yield* codes.purgeExpired(P, 3)
          assert.isAtMost(n, 3)
        }
        assert.strictEqual(n, 0)
        for (const c of [...expired, usedExpired]) assert.isTrue(Option.isNone(yield* codes.find(c.codeHash)))
        assert.deepStrictEqual(some(yield* codes.find(live.codeHash), "code"), live)
        assert.strictEqual(some(yield* codes.find(tombstone.codeHash), "tombstone").usedAt, P - 5)
        // The kept tombstone still detects reuse.
        const err = yield* Effect.flip(codes.redeem(tombstone.codeHash, P + 1, []))
        assert.strictEqual(err._tag, "CodeAlreadyUsed")
      })
  )

  it.effect(
    "tokens: purgeExpired deletes at most `limit` expired tokens and never an unexpired tombstone",
    () =>
      Effect.gen(function* () {
        const tokens = yield* TokenStore.TokenStore
        const expired = Arr.makeBy(5, (i) =>
          F.token({ kind: i % 2 === 0 ? "access" : "refresh", issuedAt: P - 100, expiresAt: P - i })
        )
        const live = F.token({ issuedAt: P - 10, expiresAt: P + 1 })
        const tombstone = F.token({ kind: "refresh", issuedAt: P - 10, expiresAt: P + 50 })
        const revoked = F.token({ issuedAt: P - 10, expiresAt: P + 50, revokedAt: P - 1 })
        yield* tokens.insert([...expired, live, tombstone, revoked])
        yield* tokens.rotate(tombstone.tokenHash, P - 5, 0, [])
        assert.strictEqual(yield* tokens.purgeExpired(P, 2), 2)
        let n = 1
        for (let round = 0; n > 0 && round < 1000; round++) {
          n = yield* tokens.purgeExpired(P, 3)
          assert.isAtMost(n, 3)
        }
        assert.strictEqual(n, 0)
        for (const t of expired) assert.isFalse(yield* isStored(t))
        assert.deepStrictEqual(yield* findToken(live), live)
        assert.deepStrictEqual(yield* findToken(revoked), revoked)
        assert.strictEqual((yield* findToken(tombstone)).rotatedAt, P - 5)
        const err = yield* Effect.flip(tokens.rotate(tombstone.tokenHash, P + 1, 0, []))
        assert.strictEqual(err._tag, "RefreshAlreadyRotated")
      })
  )
}
