/**
 * The password grant (RFC 6749 §4.3): opt-in per application, throttled, with
 * one generic answer for every wrong credential.
 */
import { Effect } from "effect"
import type { Application } from "../../model/Application.js"
import { InvalidGrant } from "../../model/OAuthError.js"
import { forUser } from "../../model/OpenId.js"
import { authenticate, badCredentials } from "../../security/Accounts.js"
import * as Audit from "../../security/Audit.js"
import * as Entropy from "../../services/Entropy.js"
import { TokenStore } from "../../storage/TokenStore.js"
import type * as TokenRequest from "../requests/TokenRequest.js"
import { type Grant, issuedEvent, mint, refreshAllowed } from "./Issue.js"

/** The grant type this module handles. */
export const grantType = "password"

/** Exchange a user's credentials for a token set carrying the application's default scopes. */
export const handle = Effect.fnUntraced(function* (
  req: TokenRequest.Password,
  app: Application,
  address: string | undefined
) {
  const user = yield* authenticate(req.username, req.password, address, { _tag: "Grant", appKey: app.appKey })
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
  const minted = yield* mint(grant)
  yield* Audit.recordWith(
    Effect.flatMap(TokenStore, (tokens) => tokens.insert(minted.records)),
    [issuedEvent(grant, grantType)]
  ).pipe(
    // D13: disabled or deleted while the password was checked: the answer of a disabled account
    Effect.catchTag("UserInactive", () => Effect.fail(new InvalidGrant({ description: badCredentials })))
  )
  return minted.response
})
