/**
 * Digests: SHA-256 for tokens and codes at rest, HMAC-SHA-256 for keyed digests
 * (App Secrets, open_id), and constant-time comparison. A service with a Web
 * Crypto default, so the core runs in any Web-standard runtime and a binding
 * may provide a faster synchronous implementation (e.g. `node:crypto`).
 */
import { Context, Effect, Layer } from "effect"
import { encode, utf8 } from "./internal/base64url.js"

/** How digests are computed. Both return base64url without padding. */
export interface DigestService {
  /** SHA-256 of a string's UTF-8 bytes. */
  readonly sha256: (value: string) => Effect.Effect<string>
  /** HMAC-SHA-256 of `value`'s UTF-8 bytes under `key`'s UTF-8 bytes. */
  readonly hmac: (key: string, value: string) => Effect.Effect<string>
}

const keys = new Map<string, Promise<CryptoKey>>()
const hmacKey = (key: string): Promise<CryptoKey> => {
  let k = keys.get(key)
  if (k === undefined) {
    k = crypto.subtle.importKey("raw", utf8(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
    keys.set(key, k)
  }
  return k
}

/** Digests over Web Crypto (`crypto.subtle`), available in every Web-standard runtime. */
export const webCrypto: DigestService = {
  sha256: (value) =>
    Effect.map(
      Effect.promise(() => crypto.subtle.digest("SHA-256", utf8(value))),
      (d) => encode(new Uint8Array(d))
    ),
  hmac: (key, value) =>
    Effect.map(
      Effect.promise(async () => crypto.subtle.sign("HMAC", await hmacKey(key), utf8(value))),
      (d) => encode(new Uint8Array(d))
    )
}

/** The digest implementation; Web Crypto unless a layer provides another. */
export class Digest extends Context.Reference<Digest>()("@latchkey/core/Digest", {
  defaultValue: (): DigestService => webCrypto
}) {}

/** A layer providing `implementation` as the Digest service. */
export const layer = (implementation: DigestService): Layer.Layer<Digest> =>
  Layer.succeed(Digest, implementation)

/** SHA-256 of a string's UTF-8 bytes, base64url. Tokens and codes are stored only as this. */
export const sha256 = (value: string): Effect.Effect<string> => Effect.flatMap(Digest, (d) => d.sha256(value))

/** HMAC-SHA-256 of `value` under `key`, base64url. */
export const hmac = (key: string, value: string): Effect.Effect<string> =>
  Effect.flatMap(Digest, (d) => d.hmac(key, value))

/**
 * Compare two strings in time that depends only on their lengths: every UTF-16 code unit of the
 * longer is read (two strings are equal exactly when their UTF-8 bytes are).
 */
export const timingSafeEqual = (a: string, b: string): boolean => {
  let diff = a.length ^ b.length
  const n = Math.max(a.length, b.length)
  // Past a string's end charCodeAt is NaN, and NaN | 0 is 0
  for (let i = 0; i < n; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0)
  return diff === 0
}
