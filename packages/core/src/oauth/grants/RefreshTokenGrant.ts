/**
 * The refresh_token grant (RFC 6749 §6, RFC 9700 §4.14.2): rotation with reuse
 * detection, scope narrowing that does not stick.
 */
import { Effect, Option } from "effect"
import type { Application } from "../../model/Application.js"
import { InvalidGrant, InvalidScope } from "../../model/OAuthError.js"
import * as Scope from "../../model/Scope.js"
import * as SignIn from "../../model/SignIn.js"
import { isDisabled, type User } from "../../model/User.js"
import { TokenStore } from "../../storage/TokenStore.js"
import { UserStore } from "../../storage/UserStore.js"
import * as Call from "../Call.js"
import type * as TokenRequest from "../requests/TokenRequest.js"
import { type Grant, issuedEvent, type MintRequirements, mint, registeredScope } from "./Issue.js"

/** The grant type this module handles. */
export const grantType = "refresh_token"

const invalid = (description: string) => Effect.fail(new InvalidGrant({ description }))

/** What the grant reads besides minting's. */
export type Requirements = MintRequirements | TokenStore | UserStore

/** Exchange a refresh token for a new access token and a new refresh token of the same family. */
export const handle = Effect.fnUntraced(function* (
  call: Call.Call<Requirements>,
  req: TokenRequest.RefreshToken,
  app: Application
) {
  const tokens = Call.use(call, TokenStore)
  const { refreshReuseGrace } = call.config
  const now = Call.seconds(call)
  const hash = yield* call.digest.sha256(req.refreshToken)
  const found = yield* tokens.find("refresh", hash)
  // RFC 6749 §10.4: bound to the client it was issued to
  if (Option.isNone(found) || found.value.appKey !== app.appKey) {
    return yield* invalid("refresh token is invalid, expired or revoked")
  }
  const old = found.value
  const who = { appKey: old.appKey, userId: old.userId, openId: old.openId }
  const reused = () =>
    Effect.gen(function* () {
      yield* Call.record(call, "refresh_reuse_detected", who)
      const revoked = yield* tokens.revokeFamily(old.familyId, now)
      yield* Call.record(call, "family_revoked", { ...who, detail: `${revoked} tokens` })
      return yield* invalid("refresh token was already used; its token family is revoked")
    })
  if (old.revokedAt !== null || old.expiresAt <= now)
    return yield* invalid("refresh token is invalid, expired or revoked")
  if (old.rotatedAt !== null && !(refreshReuseGrace > 0 && old.rotatedAt >= now - refreshReuseGrace)) {
    return yield* reused()
  }
  // RFC 6749 §6: the requested scope must not exceed the original grant
  const requested = Option.getOrElse(req.scope, () => old.scope)
  if (!Scope.isSubset(requested, old.scope)) {
    return yield* Effect.fail(new InvalidScope({ description: "scope exceeds the scope originally granted" }))
  }
  // Nor what the application is registered for now: scopes taken from its registration since the
  // grant are dropped from what is refreshed, and refused when asked for by name
  if (Option.isSome(req.scope) && !Scope.isSubset(requested, app.scopes)) {
    return yield* Effect.fail(
      new InvalidScope({ description: "scope exceeds the scopes the application is registered for" })
    )
  }
  const scope = registeredScope(app, requested)
  let user: User | null = null
  if (old.userId !== null) {
    const found = yield* Call.use(call, UserStore).findById(old.userId)
    if (Option.isNone(found)) return yield* invalid("the user no longer exists")
    // A disabled account's tokens were revoked when it was disabled; none is refreshed while it is
    if (isDisabled(found.value)) return yield* invalid("refresh token is invalid, expired or revoked")
    user = found.value
  }
  const signIn = SignIn.of(old)
  // OpenID Connect Core §12.2: a refreshed ID token keeps sub and aud, with no nonce and no sid (the
  // browser's session may be gone); the sign-in it came from, when its tokens record one, stays
  // (auth_time the original sign-in's, its acr and amr), as it does on the new tokens
  const openIdContext = user === null ? null : { user, nonce: null, authTime: signIn?.authTime ?? null }
  const grant: Grant = {
    app,
    userId: old.userId,
    openId: old.openId,
    scope,
    grantScope: registeredScope(app, old.scope),
    familyId: old.familyId,
    parentHash: hash,
    withRefresh: true,
    ...(openIdContext === null ? {} : { openIdContext }),
    ...(signIn === undefined ? {} : { signIn })
  }
  const minted = yield* mint(call, grant)
  yield* Call.audited(call, tokens.rotate(hash, now, refreshReuseGrace, minted.records), [
    ["refresh_rotated", who],
    issuedEvent(grant, grantType)
  ]).pipe(
    Effect.catchTags({
      TokenInactive: () => invalid("refresh token is invalid, expired or revoked"),
      RefreshAlreadyRotated: () => reused(),
      // D13: disabled or deleted since the check above; the disable revoked the family
      UserInactive: () => invalid("refresh token is invalid, expired or revoked")
    })
  )
  return minted.response
})
