/**
 * HMAC-SHA-1 over raw bytes: the one primitive of HOTP and TOTP (RFC 4226, RFC 6238), which
 * authenticator apps compute with SHA-1. A service of its own with a Web Crypto default, like
 * `Digest`, so the core runs in any Web-standard runtime and a binding may provide a synchronous
 * implementation (e.g. `node:crypto`); `Digest`'s implementations need not change.
 */
import { Context, Effect, Layer } from "effect"

/** How HMAC-SHA-1 is computed. */
export interface HmacSha1Service {
  /** HMAC-SHA-1 of `message` under `key`: 20 bytes. */
  readonly sign: (key: Uint8Array, message: Uint8Array) => Effect.Effect<Uint8Array>
}

/** HMAC-SHA-1 over Web Crypto (`crypto.subtle`), available in Node, Bun, Deno and browsers. */
export const webCrypto: HmacSha1Service = {
  sign: (key, message) =>
    Effect.promise(async () => {
      const k = await crypto.subtle.importKey(
        "raw",
        key as Uint8Array<ArrayBuffer>,
        { name: "HMAC", hash: "SHA-1" },
        false,
        ["sign"]
      )
      return new Uint8Array(await crypto.subtle.sign("HMAC", k, message as Uint8Array<ArrayBuffer>))
    })
}

/** The HMAC-SHA-1 implementation; Web Crypto unless a layer provides another. */
export class HmacSha1 extends Context.Reference<HmacSha1>()("@latchkey/core/HmacSha1", {
  defaultValue: (): HmacSha1Service => webCrypto
}) {}

/** A layer providing `implementation` as the HmacSha1 service. */
export const layer = (implementation: HmacSha1Service): Layer.Layer<HmacSha1> =>
  Layer.succeed(HmacSha1, implementation)

/** HMAC-SHA-1 of `message` under `key`. */
export const sign = (key: Uint8Array, message: Uint8Array): Effect.Effect<Uint8Array> =>
  Effect.flatMap(HmacSha1, (h) => h.sign(key, message))
