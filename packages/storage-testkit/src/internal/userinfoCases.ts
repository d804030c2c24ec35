/**
 * The token records userinfo reads (docs/openid-connect.md, "Userinfo"): a JWT access token the
 * core's grant minted is found by the SHA-256 of its value, admitted by `Bearer.issuedHere`
 * whatever its audience, and reads revoked, so it is refused, after every ending that revokes.
 */
import { assert, type Vitest } from "@effect/vitest"
import {
  ApplicationStore,
  Bearer,
  ConsentStore,
  Digest,
  Grants,
  type Stores,
  TokenStore,
  UserStore
} from "@latchkey/core"
import { Effect, Either, Option, TestClock } from "effect"
import * as F from "../Fixtures.js"
import { grantServices } from "./grants.js"
import { some } from "./support.js"

const T = F.baseTime

/** What an ending needs to know about the token set it ends. */
interface Issued {
  readonly appKey: string
  readonly userId: string
  readonly openId: string
  readonly accessHash: string
  readonly refreshHash: string
}

/** Every store write that ends a user's JWT access token before its `exp`. */
const endings: ReadonlyArray<
  readonly [string, (i: Issued) => Effect.Effect<unknown, unknown, Stores.Stores>]
> = [
  [
    "revoking the token",
    (i) => Effect.flatMap(TokenStore.TokenStore, (s) => s.revoke("access", i.accessHash, T))
  ],
  [
    "revoking its refresh token's family",
    (i) =>
      Effect.flatMap(TokenStore.TokenStore, (s) =>
        Effect.flatMap(s.find("refresh", i.refreshHash), (r) =>
          s.revokeFamily(some(r, "refresh token").familyId, T)
        )
      )
  ],
  [
    "withdrawing the consent",
    (i) => Effect.flatMap(ConsentStore.ConsentStore, (s) => s.withdraw(i.userId, i.appKey, T))
  ],
  ["disabling the user", (i) => Effect.flatMap(UserStore.UserStore, (s) => s.setDisabled(i.userId, true, T))],
  ["deleting the user", (i) => Effect.flatMap(UserStore.UserStore, (s) => s.remove(i.userId, T))],
  [
    "revoking the subject's tokens",
    (i) =>
      Effect.flatMap(TokenStore.TokenStore, (s) => s.revokeSubject({ appKey: i.appKey, openId: i.openId }, T))
  ],
  [
    "deleting the application",
    (i) => Effect.flatMap(ApplicationStore.ApplicationStore, (s) => s.remove(i.appKey, T))
  ]
]

/** A JWT access token and refresh token of a consenting user, minted by the core's password grant. */
const issue = Effect.gen(function* () {
  yield* TestClock.setTime(T * 1000)
  const app = F.application({
    grantTypes: ["password", "refresh_token"],
    scopes: F.scope("openid", "read"),
    accessTokenFormat: "jwt",
    accessTokenAudience: "https://api.example"
  })
  const user = F.user({ passwordHash: "test$pw" })
  yield* Effect.flatMap(ApplicationStore.ApplicationStore, (s) => s.insert(app))
  yield* Effect.flatMap(UserStore.UserStore, (s) => s.insert(user))
  yield* Effect.flatMap(ConsentStore.ConsentStore, (s) => s.grant(user.userId, app.appKey, app.scopes, T))
  const params = { grant_type: "password", username: user.username, password: "pw", scope: "openid,read" }
  const response = yield* Grants.handle(params, app, undefined)
  return {
    jwt: response.access_token,
    issued: {
      appKey: app.appKey,
      userId: user.userId,
      openId: response.open_id as string,
      accessHash: yield* Digest.sha256(response.access_token),
      refreshHash: yield* Digest.sha256(response.refresh_token as string)
    } satisfies Issued
  }
})

/** Whether userinfo's check admits the token. */
const admitted = (jwt: string) =>
  Effect.map(
    Effect.either(Bearer.verify(`Bearer ${jwt}`, F.scope("openid"), Bearer.issuedHere)),
    Either.isRight
  )

/** Register the userinfo cases with the contract's `it`. */
export const userinfoCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  for (const [ending, end] of endings) {
    it.effect(
      `userinfo: a JWT access token's record is found by its SHA-256 and reads revoked after ${ending}`,
      () =>
        Effect.gen(function* () {
          const { jwt, issued } = yield* issue
          const tokens = yield* TokenStore.TokenStore
          const record = some(yield* tokens.find("access", issued.accessHash), "JWT access token")
          assert.deepStrictEqual(
            [record.appKey, record.userId, record.revokedAt],
            [issued.appKey, issued.userId, null]
          )
          assert.isTrue(yield* admitted(jwt))
          yield* end(issued)
          const after = yield* tokens.find("access", issued.accessHash)
          assert.isTrue(Option.isNone(after) || after.value.revokedAt !== null, "the record reads ended")
          assert.isFalse(yield* admitted(jwt))
        }).pipe(Effect.provide(grantServices))
    )
  }
}
