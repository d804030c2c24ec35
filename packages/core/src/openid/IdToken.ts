/**
 * The ID token of OpenID Connect Core 1.0 §2, minted at the token endpoint beside an access
 * token: signed with the current signing key (`Jwt.sign`, `typ` JWT), about the application's
 * pairwise open_id of the user, for the App Key.
 */
import { Effect } from "effect"
import * as jose from "jose"
import { Config } from "../model/Config.js"
import type * as Scope from "../model/Scope.js"
import type { User } from "../model/User.js"
import { encode } from "../services/internal/base64url.js"
import { expiry, type IssueTime } from "../services/internal/time.js"
import * as Jwt from "../signing/Jwt.js"
import type { KeyStore } from "../storage/KeyStore.js"
import type { StorageError } from "../storage/StorageError.js"
import * as Claims from "./Claims.js"

/** What an ID token says besides its user claims: from the code or the refresh token it is minted for. */
export interface Subject {
  /** The App Key: the token's `aud`. */
  readonly appKey: string
  /** The application's open_id of the user: the token's `sub`. */
  readonly openId: string
  readonly user: User
  /** The granted scope: its standard scopes choose the user claims (`Claims.forScope`). */
  readonly scope: Scope.ScopeSet
  /** The authorization request's `nonce`; null on a refresh or when none was sent. */
  readonly nonce: string | null
  /** When the user signed in (epoch seconds); null on a refresh or when unknown. */
  readonly authTime: number | null
  /** The sign-in session the code was issued in (`Session.sidOf`); null on a refresh or when unknown. */
  readonly sid?: string | null
  /**
   * The `acr` and RFC 8176 `amr` of the browser sign-in the token came from (`Strength`), when
   * the code or refresh token recorded one; absent otherwise.
   */
  readonly acr?: string
  readonly amr?: ReadonlyArray<string>
}

/**
 * `at_hash` (OpenID Connect Core §3.1.3.6): base64url of the left half of the SHA-256 of the
 * access token's ASCII, SHA-256 being the hash of both ES256 and RS256. Taken from `tokenHash`,
 * the access token's SHA-256 (base64url) its record is stored under, so it is not hashed twice.
 */
export const accessTokenHash = (tokenHash: string): string =>
  encode(jose.base64url.decode(tokenHash).subarray(0, 16))

/** Sign the ID token issued at `time` beside the access token whose SHA-256 is `tokenHash`. */
export const mint = (
  subject: Subject,
  tokenHash: string,
  time: IssueTime
): Effect.Effect<string, StorageError, KeyStore | Config> =>
  Effect.gen(function* () {
    const config = yield* Config
    const claims = {
      iss: config.issuer,
      sub: subject.openId,
      aud: subject.appKey,
      exp: expiry(time, config.idTokenTtl),
      iat: time.issuedAt,
      ...(subject.authTime === null ? {} : { auth_time: subject.authTime }),
      ...(subject.acr === undefined ? {} : { acr: subject.acr }),
      ...(subject.amr === undefined ? {} : { amr: [...subject.amr] }),
      ...(subject.nonce === null ? {} : { nonce: subject.nonce }),
      ...(subject.sid === undefined || subject.sid === null ? {} : { sid: subject.sid }),
      at_hash: accessTokenHash(tokenHash),
      ...Claims.forScope(subject.user, subject.scope)
    }
    return yield* Jwt.sign(claims, Jwt.idTokenType)
  })
