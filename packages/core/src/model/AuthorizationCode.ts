/**
 * Authorization codes: issued by the authorize endpoint, used once at the token
 * endpoint. Stored by the SHA-256 of their value only.
 */
import { Schema } from "effect"
import * as Pkce from "./Pkce.js"
import * as Scope from "./Scope.js"
import { SignedInWith } from "./SignIn.js"

/** A stored authorization code. `usedAt` null means issued; set means used (a tombstone). */
export const AuthorizationCode = Schema.Struct({
  codeHash: Schema.String,
  appKey: Schema.String,
  redirectUri: Schema.String,
  userId: Schema.String,
  openId: Schema.String,
  scope: Scope.ScopeSet,
  codeChallenge: Schema.NullOr(Schema.String),
  codeChallengeMethod: Schema.NullOr(Pkce.Method),
  /** Every token issued from this code, and every token refreshed from those, shares this family. */
  familyId: Schema.String,
  issuedAt: Schema.Number,
  expiresAt: Schema.Number,
  usedAt: Schema.NullOr(Schema.Number),
  /**
   * OpenID Connect: the `nonce` of the authorization request, returned in the ID token, or null.
   * Optional so codes built before OpenID Connect still type; absent means null.
   */
  nonce: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  /** OpenID Connect: when the user signed in (epoch seconds), the ID token's `auth_time`; absent means null. */
  authTime: Schema.optionalWith(Schema.NullOr(Schema.Number), { exact: true }),
  /**
   * OpenID Connect: the sign-in session the code was issued in (`Session.sidOf`), the ID token's
   * `sid`; absent means null.
   */
  sid: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  /**
   * OpenID Connect: how the user signed in at `authTime` (`SignIn.SignedInWith`), which the ID
   * token's `acr` and `amr` and its tokens tell; absent (a store reads NULL so) for a code of no
   * sign-in it knows of.
   */
  signInMethod: Schema.optionalWith(SignedInWith, { exact: true })
})
/** A stored authorization code. */
export type AuthorizationCode = typeof AuthorizationCode.Type
