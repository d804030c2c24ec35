/**
 * Digests over Web Crypto: SHA-256 for tokens and codes at rest, HMAC-SHA-256
 * for keyed digests (App Secrets, open_id), and constant-time comparison.
 */
import { Effect } from "effect"
import { encode, utf8 } from "./internal/base64url.js"

/** SHA-256 of a string's UTF-8 bytes, base64url. Tokens and codes are stored only as this. */
export const sha256 = (value: string): Effect.Effect<string> =>
  Effect.promise(() => crypto.subtle.digest("SHA-256", utf8(value))).pipe(
    Effect.map((d) => encode(new Uint8Array(d)))
  )

const keys = new Map<string, Promise<CryptoKey>>()
const hmacKey = (key: string): Promise<CryptoKey> => {
  let k = keys.get(key)
  if (k === undefined) {
    k = crypto.subtle.importKey("raw", utf8(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
    keys.set(key, k)
  }
  return k
}

/** HMAC-SHA-256 of `value` under `key`, base64url. */
export const hmac = (key: string, value: string): Effect.Effect<string> =>
  Effect.promise(async () => crypto.subtle.sign("HMAC", await hmacKey(key), utf8(value))).pipe(
    Effect.map((d) => encode(new Uint8Array(d)))
  )

/** Compare two strings in time that depends only on their lengths. */
export const timingSafeEqual = (a: string, b: string): boolean => {
  const x = utf8(a)
  const y = utf8(b)
  let diff = x.length ^ y.length
  const n = Math.max(x.length, y.length)
  for (let i = 0; i < n; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0)
  return diff === 0
}
