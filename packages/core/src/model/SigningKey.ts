/**
 * The keys ID tokens and JWT access tokens are signed with: one signs at a time, the ones it
 * replaced stay published until every token they signed has expired.
 */
import { Schema } from "effect"
import { SigningAlgorithm } from "./Config.js"

/** A stored signing key. The private key is stored sealed (AES-GCM under a key derived from the server key). */
export const SigningKey = Schema.Struct({
  /** The key id (`kid`): the public key's JWK thumbprint (RFC 7638). */
  kid: Schema.String,
  alg: SigningAlgorithm,
  /** The public key as a JWK, JSON text; it is what the JWKS publishes. */
  publicJwk: Schema.String,
  /** The private key as a JWK, JSON text, sealed: never stored or logged in the clear. */
  sealedPrivateJwk: Schema.String,
  createdAt: Schema.Number,
  /** When a rotation replaced it (it signs nothing from then on), or null while it is the signing key. */
  retiredAt: Schema.NullOr(Schema.Number),
  /** Retired keys only: when every token it signed has expired, so it is no longer published. */
  publishUntil: Schema.NullOr(Schema.Number)
})
/** A stored signing key. */
export type SigningKey = typeof SigningKey.Type

/** Whether the key is still published at `now`: the signing key, or a retired key some token it signed may still need. */
export const isPublished = (key: SigningKey, now: number): boolean =>
  key.retiredAt === null || (key.publishUntil !== null && key.publishUntil > now)
