/**
 * The authorization_code grant (RFC 6749 §4.1.3, RFC 7636 §4.6): single use,
 * bound to client and redirect URI, PKCE enforced, replay revokes the family.
 */
import { Effect, Option } from "effect"
import { type Application, isPublic } from "../../model/Application.js"
import { InvalidGrant } from "../../model/OAuthError.js"
import * as Pkce from "../../model/Pkce.js"
import * as SignIn from "../../model/SignIn.js"
import { isDisabled } from "../../model/User.js"
import { CodeStore } from "../../storage/CodeStore.js"
import { TokenStore } from "../../storage/TokenStore.js"
import { UserStore } from "../../storage/UserStore.js"
import * as Call from "../Call.js"
import type * as TokenRequest from "../requests/TokenRequest.js"
import {
  type Grant,
  issuedEvent,
  type MintRequirements,
  mint,
  refreshAllowed,
  registeredScope
} from "./Issue.js"

/** The grant type this module handles. */
export const grantType = "authorization_code"

const invalid = (description: string) => Effect.fail(new InvalidGrant({ description }))

/** RFC 6749 §4.1.2: a replayed code revokes every token issued from it, then fails. */
const replayed = (
  call: Call.Call<Requirements>,
  code: { readonly familyId: string; readonly appKey: string; readonly userId: string },
  now: number
) =>
  Effect.gen(function* () {
    yield* Call.record(call, "code_replay", { appKey: code.appKey, userId: code.userId })
    const revoked = yield* Call.use(call, TokenStore).revokeFamily(code.familyId, now)
    yield* Call.record(call, "family_revoked", {
      appKey: code.appKey,
      userId: code.userId,
      detail: `${revoked} tokens`
    })
    return yield* invalid("authorization code was already used; tokens issued from it are revoked")
  })

/** What the grant reads besides minting's. */
export type Requirements = MintRequirements | CodeStore | TokenStore | UserStore

/** Exchange an authorization code for a token set. */
export const handle = Effect.fnUntraced(function* (
  call: Call.Call<Requirements>,
  req: TokenRequest.AuthorizationCode,
  app: Application
) {
  const codes = Call.use(call, CodeStore)
  const now = Call.seconds(call)
  const codeHash = yield* call.digest.sha256(req.code)
  const found = yield* codes.find(codeHash)
  if (Option.isNone(found)) return yield* invalid("authorization code is invalid or expired")
  const code = found.value
  // RFC 6749 §4.1.3: issued to this client, for exactly this redirect_uri
  if (code.appKey !== app.appKey) return yield* invalid("authorization code is invalid or expired")
  if (code.usedAt !== null) return yield* replayed(call, code, now)
  if (code.expiresAt <= now) return yield* invalid("authorization code is invalid or expired")
  if (code.redirectUri !== req.redirectUri)
    return yield* invalid("redirect_uri does not match the authorization request")
  // RFC 9700 §2.1.1: a public application proves possession only with PKCE S256
  if (isPublic(app) && code.codeChallengeMethod !== "S256")
    return yield* invalid("a public application redeems only codes issued with a PKCE S256 challenge")
  // RFC 7636 §4.6 and RFC 9700 §4.8.2: enforce the challenge, refuse a verifier without one
  if (code.codeChallenge !== null && code.codeChallengeMethod !== null) {
    if (Option.isNone(req.codeVerifier)) return yield* invalid("code_verifier is required")
    const ok = yield* Pkce.verify(req.codeVerifier.value, code.codeChallenge, code.codeChallengeMethod)
    if (!ok) return yield* invalid("code_verifier does not match the code challenge")
  } else if (Option.isSome(req.codeVerifier)) {
    return yield* invalid("code_verifier sent for a code issued without a code challenge")
  } else if (app.requirePkce) {
    // RFC 9700 §2.1.1: an application that requires PKCE now redeems no code issued without it
    return yield* invalid("the application requires PKCE; this code was issued without a code challenge")
  }
  const user = yield* Call.use(call, UserStore).findById(code.userId)
  if (Option.isNone(user)) return yield* invalid("the user no longer exists")
  // A code issued before its user was disabled is not exchanged while the account is disabled
  if (isDisabled(user.value)) return yield* invalid("authorization code is invalid or expired")
  const signIn = SignIn.of(code)
  const grant: Grant = {
    app,
    userId: code.userId,
    openId: code.openId,
    scope: registeredScope(app, code.scope),
    grantScope: registeredScope(app, code.scope),
    familyId: code.familyId,
    parentHash: null,
    withRefresh: refreshAllowed(app),
    openIdContext: {
      user: user.value,
      nonce: code.nonce ?? null,
      authTime: code.authTime ?? null,
      sid: code.sid ?? null
    },
    ...(signIn === undefined ? {} : { signIn })
  }
  const minted = yield* mint(call, grant)
  yield* Call.audited(call, codes.redeem(codeHash, now, minted.records), [
    issuedEvent(grant, grantType)
  ]).pipe(
    Effect.catchTags({
      CodeNotFound: () => invalid("authorization code is invalid or expired"),
      CodeAlreadyUsed: () => replayed(call, code, now),
      // D13: disabled or deleted since the check above; nothing was issued
      UserInactive: () => invalid("authorization code is invalid or expired"),
      // D15: the consent it was issued under is withdrawn; nothing was issued
      ConsentWithdrawn: () => invalid("authorization code is invalid or expired")
    })
  )
  return minted.response
})
