/**
 * The storage contract for the sign-in codes and tokens record (`SignIn`): a code's
 * `signInMethod` beside its `authTime`, and a token's `authTime` and `signInMethod`, round-trip
 * through every write that stores them (insert, a code's redemption, a refresh token's rotation)
 * for every method; a record written without them reads them back absent, in every store.
 */
import { assert, type Vitest } from "@effect/vitest"
import { CodeStore, SignIn, type Stores, TokenStore } from "@latchkey/core"
import { Effect } from "effect"
import * as F from "../Fixtures.js"
import { findToken, some } from "./support.js"

const T = F.baseTime

/** A token set of one family that came from a sign-in made with `method` at `authTime`. */
const signedIn = (
  method: SignIn.SignedInWith,
  authTime: number,
  overrides: Parameters<typeof F.pair>[0] = {}
) => F.pair({ ...overrides, authTime, signInMethod: method })

/** Codes and tokens keep how and when the user signed in. */
export const signInRecordCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("codes: every sign-in method round-trips with authTime, and survives redemption", () =>
    Effect.gen(function* () {
      const codes = yield* CodeStore.CodeStore
      for (const method of SignIn.SignedInWith.literals) {
        const c = F.code({ authTime: T - 40, signInMethod: method })
        yield* F.insertCode(c)
        assert.deepStrictEqual(some(yield* codes.find(c.codeHash), "code"), c, method)
        const tokens = signedIn(method, T - 40, { appKey: c.appKey, familyId: c.familyId })
        yield* codes.redeem(c.codeHash, T + 1, tokens)
        assert.deepStrictEqual(some(yield* codes.find(c.codeHash), "code"), { ...c, usedAt: T + 1 }, method)
        for (const t of tokens) assert.deepStrictEqual(yield* findToken(t), t, method)
      }
      const bare = F.code({ authTime: T - 40 })
      yield* F.insertCode(bare)
      assert.notProperty(some(yield* codes.find(bare.codeHash), "code"), "signInMethod")
    })
  )

  it.effect(
    "tokens: authTime and signInMethod round-trip through insert and rotation; a token without them reads them absent",
    () =>
      Effect.gen(function* () {
        const tokens = yield* TokenStore.TokenStore
        const [access, refresh] = signedIn("passkey-device", T - 300)
        const plain = F.token()
        yield* tokens.insert([access, refresh, plain])
        assert.deepStrictEqual(yield* findToken(access), access)
        assert.deepStrictEqual(yield* findToken(refresh), refresh)
        const read = yield* findToken(plain)
        assert.deepStrictEqual(read, plain)
        assert.notProperty(read, "authTime")
        assert.notProperty(read, "signInMethod")
        const next = signedIn("passkey-device", T - 300, {
          familyId: refresh.familyId,
          appKey: refresh.appKey,
          parentHash: refresh.tokenHash
        })
        yield* tokens.rotate(refresh.tokenHash, T + 100, 0, next)
        assert.deepStrictEqual(yield* findToken(refresh), { ...refresh, rotatedAt: T + 100 })
        for (const t of next) assert.deepStrictEqual(yield* findToken(t), t)
      })
  )
}
