import { assert, it } from "@effect/vitest"
import { Digest, Entropy, HmacSha1, Totp } from "@latchkey/core"
import { Effect, FastCheck } from "effect"
import { NodeCrypto } from "../src/index.js"

it.effect.prop(
  "node:crypto SHA-256 and HMAC equal the core's Web Crypto digests for any UTF-8 input",
  [FastCheck.string({ unit: "binary" }), FastCheck.string({ unit: "binary", minLength: 1 })],
  ([value, key]) =>
    Effect.gen(function* () {
      assert.strictEqual(yield* NodeCrypto.digest.sha256(value), yield* Digest.webCrypto.sha256(value))
      assert.strictEqual(yield* NodeCrypto.digest.hmac(key, value), yield* Digest.webCrypto.hmac(key, value))
    })
)

it.effect("HMAC keys of every length around the 64-byte block equal Web Crypto's", () =>
  Effect.gen(function* () {
    for (const n of [1, 63, 64, 65, 100, 200]) {
      const key = "k€".repeat(n).slice(0, n)
      for (const value of ["", "m", "x".repeat(1000)]) {
        assert.strictEqual(
          yield* NodeCrypto.digest.hmac(key, value),
          yield* Digest.webCrypto.hmac(key, value),
          `key length ${n}`
        )
      }
    }
  })
)

it.effect("the layer replaces the core's default digest and entropy", () =>
  Effect.gen(function* () {
    // The known SHA-256 of "abc" (FIPS 180-2 appendix B.1), base64url
    assert.strictEqual(yield* Digest.sha256("abc"), "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0")
    const digest = yield* Digest.Digest
    assert.strictEqual(digest, NodeCrypto.digest)
    const a = yield* Entropy.token
    const b = yield* Entropy.token
    assert.strictEqual(a.length, 43)
    assert.notStrictEqual(a, b)
  }).pipe(Effect.provide(NodeCrypto.layer))
)

it.effect("digests run synchronously: no asynchronous boundary per request", () =>
  Effect.sync(() => {
    let result: string | undefined
    Effect.runSync(Effect.map(NodeCrypto.digest.hmac("k", "v"), (d) => (result = d)))
    assert.isString(result)
  })
)

it.effect.prop(
  "node:crypto HMAC-SHA-1 equals the core's Web Crypto one for any key and message, synchronously",
  [FastCheck.uint8Array({ minLength: 1, maxLength: 100 }), FastCheck.uint8Array({ maxLength: 100 })],
  ([key, message]) =>
    Effect.gen(function* () {
      const node = Effect.runSync(NodeCrypto.hmacSha1.sign(key, message))
      assert.deepStrictEqual(node, yield* HmacSha1.webCrypto.sign(key, message))
    })
)

it.effect("the layer provides node:crypto's HMAC-SHA-1 to the core's TOTP codes (RFC 6238 Appendix B)", () =>
  Effect.gen(function* () {
    assert.strictEqual(yield* HmacSha1.HmacSha1, NodeCrypto.hmacSha1)
    const seed = new TextEncoder().encode("12345678901234567890")
    assert.strictEqual(yield* Totp.codeAt(seed, Totp.stepAt(1111111109), 8), "07081804")
  }).pipe(Effect.provide(NodeCrypto.layer))
)
