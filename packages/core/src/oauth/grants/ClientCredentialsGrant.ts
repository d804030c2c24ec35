/**
 * The client_credentials grant (RFC 6749 §4.4): the application's own token, or
 * with `open_id` a per-user token that also gets a refresh token when the application may refresh (docs/decisions.md).
 */
import { Effect, Option } from "effect"
import type { Application } from "../../model/Application.js"
import { InvalidRequest } from "../../model/OAuthError.js"
import * as Entropy from "../../services/Entropy.js"
import { encode } from "../../services/internal/base64url.js"
import { OpenIdStore } from "../../storage/OpenIdStore.js"
import { TokenStore } from "../../storage/TokenStore.js"
import * as Call from "../Call.js"
import type * as TokenRequest from "../requests/TokenRequest.js"
import { type Grant, issuedEvent, type MintRequirements, mint, refreshAllowed } from "./Issue.js"

/** The grant type this module handles. */
export const grantType = "client_credentials"

const asserted = new InvalidRequest({
  description: "open_id names a user of this application; an application may not assert it"
})

/** What the grant reads besides minting's: the OpenIdStore and the TokenStore. */
export type Requirements = MintRequirements | OpenIdStore | TokenStore

/** Issue a token to the authenticated application of the request `call`. */
export const handle = (
  call: Call.Call<Requirements>,
  req: TokenRequest.ClientCredentials,
  app: Application
) => {
  const openId = Option.getOrNull(req.openId)
  // A subject the application asserts must not pass for one of its signed-in users
  const unclaimed = (openId: string) =>
    Effect.flatMap(Call.use(call, OpenIdStore).findUser(app.appKey, openId), (user) =>
      Option.isSome(user) ? Effect.fail(asserted) : Effect.void
    )
  const issue = Effect.flatMap(Call.use(call, Entropy.Entropy).bytes(16), (random) => {
    const grant: Grant = {
      app,
      userId: null,
      openId,
      scope: app.scopes,
      grantScope: app.scopes,
      familyId: encode(random),
      parentHash: null,
      // RFC 6749 §4.4.3: no refresh token for the application's own token
      withRefresh: openId !== null && refreshAllowed(app)
    }
    return Effect.flatMap(mint(call, grant), (minted) =>
      Effect.matchEffect(
        Call.audited(call, Call.use(call, TokenStore).insert(minted.records), [
          issuedEvent(grant, grantType)
        ]),
        {
          // These tokens carry no user id: the store refuses a write only for a user's (D13)
          onFailure: (e) => (e._tag === "UserInactive" ? Effect.die(e) : Effect.fail(e)),
          onSuccess: () => Effect.succeed(minted.response)
        }
      )
    )
  })
  return openId === null ? issue : Effect.zipRight(unclaimed(openId), issue)
}
