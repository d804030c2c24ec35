/**
 * OpenID Connect Back-Channel Logout 1.0 §2.4: the logout token a session's end sends to each
 * application that received an ID token in it, a JWT of type `logout+jwt` signed like ID tokens.
 */

import type { Effect } from "effect"
import type * as jose from "jose"
import type { Config } from "../model/Config.js"
import { expiry, type IssueTime } from "../services/internal/time.js"
import * as Jwt from "../signing/Jwt.js"
import type { KeyStore } from "../storage/KeyStore.js"
import type { Delivery } from "../storage/LogoutStore.js"
import type { StorageError } from "../storage/StorageError.js"

/** The `typ` header of a logout token (§2.4, RFC 8725 §3.11 explicit typing). */
export const logoutTokenType = "logout+jwt"

/** The member of `events` naming a back-channel logout (§2.4). */
export const backchannelLogoutEvent = "http://schemas.openid.net/event/backchannel-logout"

/** How long a logout token is valid: two minutes (§2.4 recommends a short lifetime). */
export const logoutTokenTtl = 120

/**
 * The claims of the logout token of `delivery`, issued by `issuer` at `time` with the unique `jti`:
 * `iss`, `aud` (the App Key), `iat`, `exp`, `jti`, `events`, `sub` (the application's open_id of
 * the user) and `sid` (always: a session's end is what it reports, so an application that registered
 * `backchannel_logout_session_required` gets it too), never a `nonce` (§2.4).
 */
export const claims = (
  delivery: Pick<Delivery, "appKey" | "sub" | "sid">,
  issuer: string,
  time: IssueTime,
  jti: string
): jose.JWTPayload => ({
  iss: issuer,
  aud: delivery.appKey,
  iat: time.issuedAt,
  exp: expiry(time, logoutTokenTtl),
  jti,
  events: { [backchannelLogoutEvent]: {} },
  sub: delivery.sub,
  sid: delivery.sid
})

/** Sign the logout token of `delivery` (`claims`) with the server's signing key. */
export const mint = (
  delivery: Pick<Delivery, "appKey" | "sub" | "sid">,
  issuer: string,
  time: IssueTime,
  jti: string
): Effect.Effect<string, StorageError, KeyStore | Config> =>
  Jwt.sign(claims(delivery, issuer, time, jti), logoutTokenType)
