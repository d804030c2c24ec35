import { Clock, Effect, Either, Option } from "effect"
import * as jose from "jose"
import type { SignedInWith } from "../../src/model/SignIn.js"
import { sha256 } from "../../src/services/Digest.js"
import * as Keys from "../../src/signing/Keys.js"
import { CodeStore } from "../../src/storage/CodeStore.js"
import { cb, issueCode, issuer, token } from "../fixtures.js"

/** OpenID Connect Core §3.1.3.6, computed apart from the server: left half of SHA-256, base64url by btoa. */
export const atHash = (accessToken: string): Effect.Effect<string> =>
  Effect.promise(async () => {
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(accessToken))
    const half = new Uint8Array(digest).subarray(0, 16)
    return btoa(String.fromCharCode(...half))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "")
  })

/** Verify an ID token as a relying party would: against the published JWK Set, at the Clock's time. */
export const verifyIdToken = (idToken: string, audience: string) =>
  Effect.gen(function* () {
    const jwks = jose.createLocalJWKSet((yield* Keys.jwks) as jose.JSONWebKeySet)
    const now = yield* Clock.currentTimeMillis
    return yield* Effect.either(
      Effect.tryPromise(() => jose.jwtVerify(idToken, jwks, { issuer, audience, currentDate: new Date(now) }))
    )
  })

/** The claims of an ID token that must verify. */
export const idClaims = (idToken: string, audience: string) =>
  Effect.map(verifyIdToken(idToken, audience), (r) => Either.getOrThrow(r))

/**
 * A code for `appKey` from the authorize flow, copied under a new value with the OpenID fields
 * the authorize side records (`nonce`, `authTime`, and how the user signed in).
 */
export const openIdCode = (
  appKey: string,
  userId: string,
  options: {
    scope: string
    nonce?: string | null
    authTime?: number | null
    signInMethod?: SignedInWith
  }
) =>
  Effect.gen(function* () {
    const issued = yield* issueCode(appKey, userId, { scope: options.scope })
    const codes = yield* CodeStore
    const stored = Option.getOrThrow(yield* codes.find(yield* sha256(issued)))
    const value = `${issued}-oidc`
    yield* codes.insert({
      ...stored,
      codeHash: yield* sha256(value),
      nonce: options.nonce ?? null,
      authTime: options.authTime ?? null,
      ...(options.signInMethod === undefined ? {} : { signInMethod: options.signInMethod })
    })
    return value
  })

/** Redeem a code at the token endpoint. */
export const redeem = (code: string, basic: string) =>
  token({ grant_type: "authorization_code", code, redirect_uri: cb }, basic)
