/**
 * The consent part of the storage contract (D15, docs/security.md): a code redeems, and an implicit
 * token is saved, only while its user's consent to its application stands and covers its scope, as
 * the store reads it in the write's transaction. A consent granted again after a withdrawal counts.
 * The authorize race pins a withdrawal between approve's consent check and its write.
 */
import { assert, type Vitest } from "@effect/vitest"
import {
  type Application,
  Authorize,
  CodeStore,
  ConsentStore,
  Digest,
  Grants,
  type Stores,
  TokenStore
} from "@latchkey/core"
import { Effect, Option } from "effect"
import * as F from "../Fixtures.js"
import { failureOf, grantServices } from "./grants.js"
import { areStored, some } from "./support.js"
import { insertUser } from "./users.js"

const T = F.baseTime

/** Redeem `code` for its user; answers the failure's tag, or "redeemed". */
const redeem = (code: { readonly codeHash: string; readonly userId: string; readonly appKey: string }) =>
  Effect.gen(function* () {
    const codes = yield* CodeStore.CodeStore
    const issued = F.pair({ userId: code.userId, appKey: code.appKey })
    const result = yield* Effect.either(codes.redeem(code.codeHash, T + 1, issued))
    const stored = yield* areStored(issued)
    const used = Option.map(yield* codes.find(code.codeHash), (c) => c.usedAt !== null)
    return { tag: result._tag === "Left" ? result.left._tag : "redeemed", stored, used }
  })

const refused = { tag: "ConsentWithdrawn", stored: [false, false], used: Option.some(false) }

/** Register the consent-grant case with the contract's `it`. */
export const consentGrantCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("consents: grant records scopes per (user, application) and unions later grants", () =>
    Effect.gen(function* () {
      const consents = yield* ConsentStore.ConsentStore
      const userId = F.id("user")
      const appKey = F.id("app")
      assert.isTrue(Option.isNone(yield* consents.find(userId, appKey)))
      yield* consents.grant(userId, appKey, F.scope("write", "profile"), T)
      assert.deepStrictEqual(
        some(yield* consents.find(userId, appKey), "consent"),
        F.scope("profile", "write")
      )
      yield* consents.grant(userId, appKey, F.scope("read", "write"), T + 1)
      assert.deepStrictEqual(
        some(yield* consents.find(userId, appKey), "consent"),
        F.scope("profile", "read", "write")
      )
      yield* consents.grant(userId, appKey, F.scope(), T + 2)
      assert.deepStrictEqual(
        some(yield* consents.find(userId, appKey), "consent"),
        F.scope("profile", "read", "write")
      )
      assert.isTrue(Option.isNone(yield* consents.find(userId, F.id("app"))))
      assert.isTrue(Option.isNone(yield* consents.find(F.id("user"), appKey)))
      const otherApp = F.id("app")
      yield* consents.grant(userId, otherApp, F.scope(), T)
      assert.deepStrictEqual(some(yield* consents.find(userId, otherApp), "consent"), F.scope())
    })
  )
}

/** Codes redeemed and tokens saved only while the consent stands and covers their scope. */
const writesUnderConsent = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "codes: a code whose consent was never given does not redeem: ConsentWithdrawn, nothing written",
    () =>
      Effect.gen(function* () {
        const code = F.code({ userId: yield* insertUser })
        yield* Effect.flatMap(CodeStore.CodeStore, (codes) => codes.insert(code))
        assert.deepStrictEqual(yield* redeem(code), refused)
      })
  )

  it.effect(
    "codes: a code issued after its consent was withdrawn (an authorization racing it) does not redeem",
    () =>
      Effect.gen(function* () {
        const consents = yield* ConsentStore.ConsentStore
        const code = F.code({ userId: yield* insertUser })
        yield* consents.grant(code.userId, code.appKey, code.scope, T)
        assert.isTrue(yield* consents.withdraw(code.userId, code.appKey, T))
        yield* Effect.flatMap(CodeStore.CodeStore, (codes) => codes.insert(code))
        assert.deepStrictEqual(yield* redeem(code), refused)
        // The code's own state still comes first: a used code is a replay
        const used = F.code({ userId: code.userId, appKey: code.appKey, usedAt: T })
        yield* Effect.flatMap(CodeStore.CodeStore, (codes) => codes.insert(used))
        assert.strictEqual((yield* redeem(used)).tag, "CodeAlreadyUsed")
      })
  )

  it.effect(
    "codes: a consent granted again redeems the code only once it covers the code's scope again",
    () =>
      Effect.gen(function* () {
        const consents = yield* ConsentStore.ConsentStore
        const code = F.code({ userId: yield* insertUser, scope: F.scope("read", "write") })
        yield* consents.grant(code.userId, code.appKey, code.scope, T)
        yield* consents.withdraw(code.userId, code.appKey, T)
        yield* Effect.flatMap(CodeStore.CodeStore, (codes) => codes.insert(code))
        yield* consents.grant(code.userId, code.appKey, F.scope("read"), T)
        assert.deepStrictEqual(yield* redeem(code), refused, "read does not cover read,write")
        yield* consents.grant(code.userId, code.appKey, F.scope("write"), T)
        const again = yield* redeem(code)
        assert.deepStrictEqual(again, { tag: "redeemed", stored: [true, true], used: Option.some(true) })
      })
  )

  it.effect(
    "tokens: insertUnderConsent saves the tokens only while the consent stands and covers its scope",
    () =>
      Effect.gen(function* () {
        const tokens = yield* TokenStore.TokenStore
        const consents = yield* ConsentStore.ConsentStore
        const userId = yield* insertUser
        const appKey = F.id("app")
        const under = { userId, appKey, scope: F.scope("read") }
        const attempt = () => {
          const issued = [F.token({ userId, appKey })]
          return Effect.flatMap(Effect.either(tokens.insertUnderConsent(issued, under)), (r) =>
            Effect.map(areStored(issued), (stored) => [r._tag === "Left" ? r.left._tag : "saved", ...stored])
          )
        }
        assert.deepStrictEqual(yield* attempt(), ["ConsentWithdrawn", false], "no consent")
        yield* consents.grant(userId, appKey, F.scope("write"), T)
        assert.deepStrictEqual(yield* attempt(), ["ConsentWithdrawn", false], "a consent not covering it")
        yield* consents.grant(userId, appKey, F.scope("read"), T)
        assert.deepStrictEqual(yield* attempt(), ["saved", true])
        yield* consents.withdraw(userId, appKey, T)
        assert.deepStrictEqual(yield* attempt(), ["ConsentWithdrawn", false], "withdrawn")
      })
  )
}

/** A withdrawal racing approve, for the `code` or the `token` response type. */
const authorizeRace = (
  it: Vitest.MethodsNonLive<Stores.Stores>,
  responseType: Authorize.AuthorizationRequest["responseType"]
): void => {
  it.effect(
    `authorize (${responseType}): a withdrawal between approve's consent check and its write stops what it issues`,
    () =>
      Effect.gen(function* () {
        const consents = yield* ConsentStore.ConsentStore
        const userId = yield* insertUser
        const app: Application.Application = F.application({
          grantTypes: ["authorization_code", "implicit"]
        })
        const scope = F.scope("read")
        yield* consents.grant(userId, app.appKey, scope, T)
        // The withdrawal commits right after approve read the consent standing
        const racing = ConsentStore.ConsentStore.of({
          ...consents,
          find: (u, a) => Effect.tap(consents.find(u, a), () => consents.withdraw(userId, app.appKey, T + 1))
        })
        const req: Authorize.AuthorizationRequest = {
          app,
          redirectUri: app.redirectUris[0] ?? "",
          responseType,
          scope,
          state: "s",
          clientType: "PC",
          codeChallenge: null,
          codeChallengeMethod: null
        }
        const location = new URL(
          yield* Authorize.approve(req, userId).pipe(Effect.provideService(ConsentStore.ConsentStore, racing))
        )
        assert.isTrue(Option.isNone(yield* consents.find(userId, app.appKey)), "the withdrawal ran")
        if (responseType === "code") {
          const value = location.searchParams.get("code") ?? ""
          const params = { grant_type: "authorization_code", code: value, redirect_uri: req.redirectUri }
          assert.strictEqual(
            failureOf(yield* Effect.exit(Grants.handle(params, app, undefined))),
            "invalid_grant"
          )
          const code = yield* Effect.flatMap(CodeStore.CodeStore, (codes) =>
            Effect.flatMap(Digest.sha256(value), codes.find)
          )
          assert.isTrue(Option.isSome(code) && code.value.usedAt === null, "the code stays unused")
        } else {
          const fragment = new URLSearchParams(location.hash.slice(1))
          assert.deepStrictEqual(
            [fragment.get("error"), fragment.get("access_token")],
            ["access_denied", null]
          )
        }
        const unrevoked = yield* Effect.flatMap(TokenStore.TokenStore, (s) =>
          s.revokeSubject({ appKey: app.appKey, userId }, T + 2)
        )
        assert.strictEqual(unrevoked, 0, "no token of the user is active")
      }).pipe(Effect.provide(grantServices))
  )
}

/** Register the consent cases with the contract's `it`. */
export const consentCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  writesUnderConsent(it)
  for (const responseType of ["code", "token"] as const) authorizeRace(it, responseType)
}
