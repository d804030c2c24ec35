/**
 * The core's digest and randomness services over `node:crypto`, synchronously:
 * no round trip through the libuv thread pool per request, so request crypto
 * never queues behind password hashing.
 */
import * as crypto from "node:crypto"
import { createHash, createHmac, randomFillSync } from "node:crypto"
import { Digest, Entropy, HmacSha1 } from "@latchkey/core"
import { Effect, Layer } from "effect"

// One-shot hashing (`crypto.hash`, Node 20.12 and later) skips the Hash object.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: "base64url") => string }).hash

/** SHA-256 and HMAC-SHA-256 with `node:crypto`, base64url like the Web Crypto default. */
export const digest: Digest.DigestService = {
  sha256: (value) =>
    Effect.sync(() =>
      oneShot !== undefined
        ? oneShot("sha256", value, "base64url")
        : createHash("sha256").update(value, "utf8").digest("base64url")
    ),
  hmac: (key, value) =>
    Effect.sync(() =>
      createHmac("sha256", Buffer.from(key, "utf8")).update(value, "utf8").digest("base64url")
    )
}

/** HMAC-SHA-1 with `node:crypto`, for authenticator-app codes (TOTP). */
export const hmacSha1: HmacSha1.HmacSha1Service = {
  sign: (key, message) => Effect.sync(() => new Uint8Array(createHmac("sha1", key).update(message).digest()))
}

// Bytes are drawn from a pool refilled in one call, each handed out once: one call into
// OpenSSL per 128 tokens instead of one per token.
const pool = new Uint8Array(4096)
let offset = pool.length

const draw = (n: number): Uint8Array => {
  if (n > pool.length) return randomFillSync(new Uint8Array(n))
  if (offset + n > pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const out = pool.slice(offset, offset + n)
  // Handed out: never again part of the pool's unused bytes
  pool.fill(0, offset, offset + n)
  offset += n
  return out
}

/** Randomness from `crypto.randomFillSync` (the OpenSSL CSPRNG). */
export const entropy: Entropy.Entropy["Type"] = {
  bytes: (n) => Effect.sync(() => draw(n))
}

/** Digest, HMAC-SHA-1 and Entropy over `node:crypto`. */
export const layer: Layer.Layer<Digest.Digest | HmacSha1.HmacSha1 | Entropy.Entropy> = Layer.mergeAll(
  Digest.layer(digest),
  HmacSha1.layer(hmacSha1),
  Layer.succeed(Entropy.Entropy, entropy)
)
