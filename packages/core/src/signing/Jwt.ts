/**
 * Signing and verifying the JWTs Latchkey issues (ID tokens, RFC 9068 access tokens) with the
 * keys of `Keys`, over `jose`: ES256 or RS256 only, the key found by `kid` among the published
 * keys, issuer, audience, type and lifetime checked against the Clock service's time.
 */
import { Effect, Schema } from "effect"
import * as jose from "jose"
import { Config, SigningAlgorithm } from "../model/Config.js"
import { nowSeconds } from "../services/internal/time.js"
import type { KeyStore } from "../storage/KeyStore.js"
import type { StorageError } from "../storage/StorageError.js"
import * as Keys from "./Keys.js"

/** The `typ` header of an RFC 9068 access token. */
export const accessTokenType = "at+jwt"

/** The `typ` header of an ID token. */
export const idTokenType = "JWT"

/** A JWT that does not verify; `reason` says why (for logs and tests, never the token). */
export class InvalidJwt extends Schema.TaggedError<InvalidJwt>()("InvalidJwt", {
  reason: Schema.String
}) {}

/** Whether a string has the shape of a JWS compact serialization (three base64url parts). */
export const looksLikeJwt = (value: string): boolean =>
  /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(value)

/** Sign `claims` with the signing key, with `typ` in the protected header. */
export const sign = (
  claims: jose.JWTPayload,
  typ: string
): Effect.Effect<string, StorageError, KeyStore | Config> =>
  Effect.flatMap(Keys.signingKey, ({ record, privateKey }) =>
    Effect.promise(() =>
      new jose.SignJWT(claims).setProtectedHeader({ alg: record.alg, kid: record.kid, typ }).sign(privateKey)
    )
  )

/** What `verify` checks beyond the signature. */
export interface Expected {
  /** The `typ` header, compared as RFC 8725 §3.11 says (case-insensitive, `application/` optional). */
  readonly typ: string
  /** The audience the token must name, if any. */
  readonly audience?: string
  /**
   * Accept a token past its `exp` (every other check stays): an `id_token_hint` at the end
   * session endpoint (OpenID Connect RP-Initiated Logout 1.0 §2) names a sign-in that may have
   * outlived its ID token.
   */
  readonly acceptExpired?: boolean
}

/**
 * Verify a JWT issued by this server: signed by a published key (ES256 or RS256, never `none`
 * or an HMAC), of this issuer, of the expected `typ` and audience, unexpired and not issued in
 * the future (at the Clock service's time, no leeway). Its claims, or InvalidJwt.
 */
export const verify = (
  token: string,
  expected: Expected
): Effect.Effect<jose.JWTPayload, InvalidJwt | StorageError, KeyStore | Config> =>
  Effect.gen(function* () {
    if (!looksLikeJwt(token)) return yield* Effect.fail(new InvalidJwt({ reason: "not a JWT" }))
    let header: jose.ProtectedHeaderParameters
    try {
      header = jose.decodeProtectedHeader(token)
    } catch {
      return yield* Effect.fail(new InvalidJwt({ reason: "unreadable header" }))
    }
    const alg = header.alg
    if (alg === undefined || !(SigningAlgorithm.literals as ReadonlyArray<string>).includes(alg))
      return yield* Effect.fail(new InvalidJwt({ reason: `algorithm ${String(alg)} is not accepted` }))
    if (typeof header.kid !== "string") return yield* Effect.fail(new InvalidJwt({ reason: "no key id" }))
    const key = yield* Keys.find(header.kid)
    if (key === undefined || key.record.alg !== alg)
      return yield* Effect.fail(new InvalidJwt({ reason: "unknown key id" }))
    const { issuer } = yield* Config
    const now = yield* nowSeconds
    const result = yield* Effect.tryPromise({
      try: () =>
        jose.jwtVerify(token, key.publicKey, {
          algorithms: [key.record.alg],
          issuer,
          typ: expected.typ,
          // jose checks exp against currentDate: the epoch never finds a token expired
          currentDate: new Date((expected.acceptExpired === true ? 0 : now) * 1000),
          requiredClaims: ["exp", "iat"],
          ...(expected.audience === undefined ? {} : { audience: expected.audience })
        }),
      catch: (e) => new InvalidJwt({ reason: e instanceof Error ? e.message : "does not verify" })
    })
    // RFC 7519 §4.1.6: iat is not after the issue instant; a second of leeway for a node whose
    // clock runs behind the issuer's (docs/decisions.md, "Token and code lifetimes")
    if (typeof result.payload.iat !== "number" || result.payload.iat > now + 1)
      return yield* Effect.fail(new InvalidJwt({ reason: "issued in the future" }))
    return result.payload
  })
