/**
 * The client_credentials grant (RFC 6749 §4.4): the application's own token, or
 * with `open_id` a per-user token that also gets a refresh token when the application may refresh (docs/decisions.md).
 */
import { Effect, Option } from "effect"
import type { Application } from "../../model/Application.js"
import { InvalidRequest } from "../../model/OAuthError.js"
import * as Audit from "../../security/Audit.js"
import * as Entropy from "../../services/Entropy.js"
import { OpenIdStore } from "../../storage/OpenIdStore.js"
import { TokenStore } from "../../storage/TokenStore.js"
import type * as TokenRequest from "../requests/TokenRequest.js"
import { type Grant, issuedEvent, mint, refreshAllowed } from "./Issue.js"

/** The grant type this module handles. */
export const grantType = "client_credentials"

/** Issue a token to the authenticated application. */
export const handle = Effect.fnUntraced(function* (req: TokenRequest.ClientCredentials, app: Application) {
  const openId = Option.getOrNull(req.openId)
  // A subject the application asserts must not pass for one of its signed-in users
  if (
    openId !== null &&
    Option.isSome(yield* Effect.flatMap(OpenIdStore, (s) => s.findUser(app.appKey, openId)))
  ) {
    return yield* Effect.fail(
      new InvalidRequest({
        description: "open_id names a user of this application; an application may not assert it"
      })
    )
  }
  const grant: Grant = {
    app,
    userId: null,
    openId,
    scope: app.scopes,
    grantScope: app.scopes,
    familyId: yield* Entropy.id(),
    parentHash: null,
    // RFC 6749 §4.4.3: no refresh token for the application's own token
    withRefresh: openId !== null && refreshAllowed(app)
  }
  const minted = yield* mint(grant)
  yield* Audit.recordWith(
    Effect.flatMap(TokenStore, (tokens) => tokens.insert(minted.records)),
    [issuedEvent(grant, grantType)]
  ).pipe(
    // These tokens carry no user id: the store refuses a write only for a user's (D13)
    Effect.catchTag("UserInactive", (e) => Effect.die(e))
  )
  return minted.response
})
