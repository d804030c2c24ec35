/**
 * The password grant (RFC 6749 §4.3): opt-in per application, throttled, with
 * one generic answer for every wrong credential.
 */
import { Effect, Option } from "effect"
import { type Application, requiresMfa } from "../../model/Application.js"
import { Config } from "../../model/Config.js"
import { InvalidGrant } from "../../model/OAuthError.js"
import { forUser } from "../../model/OpenId.js"
import { isConfirmed } from "../../model/TotpFactor.js"
import type { User } from "../../model/User.js"
import { authenticateIn, badCredentials, type CallRequirements } from "../../security/Accounts.js"
import * as Entropy from "../../services/Entropy.js"
import { FactorStore } from "../../storage/FactorStore.js"
import { TokenStore } from "../../storage/TokenStore.js"
import * as Call from "../Call.js"
import type * as TokenRequest from "../requests/TokenRequest.js"
import { type Grant, issuedEvent, type MintRequirements, mint, refreshAllowed } from "./Issue.js"

/** The grant type this module handles. */
export const grantType = "password"

/** What the grant reads besides minting's: the sign-in check's services and the TokenStore. */
export type Requirements =
  | MintRequirements
  | TokenStore
  | FactorStore
  | CallRequirements
  | Effect.Effect.Context<ReturnType<typeof forUser>>

/** The token set of a user whose password was right. */
const issue = Effect.fnUntraced(function* (call: Call.Call<Requirements>, app: Application, user: User) {
  const openId = yield* forUser(app.appKey, user.userId)
  const grant: Grant = {
    app,
    userId: user.userId,
    openId,
    scope: app.scopes,
    grantScope: app.scopes,
    familyId: yield* Entropy.id(),
    parentHash: null,
    withRefresh: refreshAllowed(app)
  }
  const minted = yield* mint(call, grant)
  yield* Call.audited(call, Call.use(call, TokenStore).insert(minted.records), [
    issuedEvent(grant, grantType)
  ]).pipe(
    // D13: disabled or deleted while the password was checked: the answer of a disabled account
    Effect.catchTag("UserInactive", () => Effect.fail(new InvalidGrant({ description: badCredentials })))
  )
  return minted.response
})

/** Whether the user has an authenticator app: their sign-in needs its code, which this grant cannot ask for. */
const hasAuthenticator = (call: Call.Call<Requirements>, user: User) =>
  Effect.map(Call.use(call, FactorStore).find(user.userId), Option.exists(isConfirmed))

/** The answer when the operator (`LATCHKEY_MFA=required`) or the application (`require_mfa`) needs a second factor. */
export const secondFactorRequired =
  "a second factor is required: use the authorization code flow, where the user is asked for it"

/**
 * Exchange a user's credentials for a token set carrying the application's default scopes: the
 * sign-in check (the page's too) in the request's services, its audit events of the request.
 */
export const handle = (call: Call.Call<Requirements>, req: TokenRequest.Password, app: Application) =>
  // The grant asks for a password only. A policy needing a second factor refuses it before any
  // password is checked; a user with an authenticator app gets the answer of a wrong password, so
  // that it tells nobody the password was right
  Call.use(call, Config).mfa === "required" || requiresMfa(app)
    ? Effect.fail(new InvalidGrant({ description: secondFactorRequired }))
    : Effect.flatMap(
        authenticateIn(call, req.username, req.password, { _tag: "Grant", appKey: app.appKey }),
        (user) =>
          Effect.flatMap(hasAuthenticator(call, user), (has) =>
            has ? Effect.fail(new InvalidGrant({ description: badCredentials })) : issue(call, app, user)
          )
      )
