/**
 * The source of randomness: a service, so tests can make it deterministic.
 * The default draws from the Web Crypto CSPRNG.
 */
import { Context, Effect, Layer } from "effect"
import { encode } from "./internal/base64url.js"

/**
 * Bytes of entropy in every token, code and generated secret: 256 bits, well past the guessing
 * chance of at most 2^-128 that RFC 6749 §10.10 asks for.
 */
export const tokenBytes = 32

/** Produces random bytes. */
export class Entropy extends Context.Tag("@latchkey/core/Entropy")<
  Entropy,
  {
    /** `n` bytes from a cryptographically secure generator. */
    readonly bytes: (n: number) => Effect.Effect<Uint8Array>
  }
>() {}

/** Entropy from `crypto.getRandomValues`. */
export const layer: Layer.Layer<Entropy> = Layer.succeed(Entropy, {
  bytes: (n) => Effect.sync(() => crypto.getRandomValues(new Uint8Array(n)))
})

/** A fresh 256-bit value, base64url (43 characters): tokens, codes, secrets, family ids. */
export const token: Effect.Effect<string, never, Entropy> = Effect.flatMap(Entropy, (e) =>
  Effect.map(e.bytes(tokenBytes), encode)
)

/** A fresh identifier of `bytes` random bytes, base64url. */
export const id = (bytes = 16): Effect.Effect<string, never, Entropy> =>
  Effect.flatMap(Entropy, (e) => Effect.map(e.bytes(bytes), encode))

/**
 * A fresh identifier of `bytes` random bytes, base64url, starting with a letter or digit: App
 * Keys and user ids are typed on command lines, where a leading `-` would read as an option.
 */
export const argumentSafeId = (bytes = 16): Effect.Effect<string, never, Entropy> =>
  id(bytes).pipe(Effect.repeat({ until: (value) => /^[A-Za-z0-9]/.test(value) }))
