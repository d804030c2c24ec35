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
import * as Call from "../Call.js"
import type * as TokenRequest from "../requests/TokenRequest.js"
import { type Grant, issuedEvent, type MintRequirements, mint, refreshAllowed } from "./Issue.js"

/** The grant type this module handles. */
export const grantType = "password"

/** What the grant reads besides minting's: the sign-in check's services and the TokenStore. */
export type Requirements =
  | MintRequirements
  | TokenStore
  | Effect.Effect.Context<ReturnType<typeof authenticate>>
  | Effect.Effect.Context<ReturnType<typeof forUser>>

/** Exchange a user's credentials for a token set carrying the application's default scopes. */
export const handle = Effect.fnUntraced(function* (
  call: Call.Call<Requirements>,
  req: TokenRequest.Password,
  app: Application
) {
  // The sign-in check is the page's too: its audit events read who is asking from RequestInfo
  const user = yield* authenticate(req.username, req.password, call.address, {
    _tag: "Grant",
    appKey: app.appKey
  }).pipe(
    Effect.provideService(Audit.RequestInfo, { requestId: call.requestId, address: call.address ?? null })
  )
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
