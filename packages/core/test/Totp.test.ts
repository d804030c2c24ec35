import { createHmac } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import * as Totp from "../src/security/Totp.js"
import * as HmacSha1 from "../src/services/HmacSha1.js"

const utf8 = (s: string) => new TextEncoder().encode(s)

// RFC 6238 Appendix B: the SHA-1 seed and the 8-digit codes at each time.
const seed = utf8("12345678901234567890")
const vectors: ReadonlyArray<readonly [number, string]> = [
  [59, "94287082"],
  [1111111109, "07081804"],
  [1111111111, "14050471"],
  [1234567890, "89005924"],
  [2000000000, "69279037"],
  [20000000000, "65353130"]
]

/** HMAC-SHA-1 with node:crypto, as the node binding provides it. */
const nodeHmac = HmacSha1.layer({
  sign: (key, message) => Effect.sync(() => new Uint8Array(createHmac("sha1", key).update(message).digest()))
})

describe("TOTP (RFC 6238) over HOTP (RFC 4226)", () => {
  it.effect("RFC 6238 Appendix B, SHA-1: 8 digits, and the 6 digits authenticator apps show", () =>
    Effect.gen(function* () {
      for (const [time, code] of vectors) {
        assert.strictEqual(yield* Totp.codeAt(seed, Totp.stepAt(time), 8), code, `T = ${time}`)
        assert.strictEqual(yield* Totp.codeAt(seed, Totp.stepAt(time)), code.slice(2), `T = ${time}`)
      }
    })
  )

  it.effect(
    "the same vectors through another HMAC-SHA-1 implementation (node:crypto, as a binding provides)",
    () =>
      Effect.gen(function* () {
        for (const [time, code] of vectors)
          assert.strictEqual(yield* Totp.codeAt(seed, Totp.stepAt(time), 8), code, `T = ${time}`)
      }).pipe(Effect.provide(nodeHmac))
  )

  it.effect("RFC 4226 Appendix D: HOTP values of counters 0 to 9", () =>
    Effect.gen(function* () {
      const expected = [
        "755224",
        "287082",
        "359152",
        "969429",
        "338314",
        "254676",
        "287922",
        "162583",
        "399871",
        "520489"
      ]
      for (const [counter, code] of expected.entries())
        assert.strictEqual(yield* Totp.codeAt(seed, counter), code)
    })
  )

  it("base32 (RFC 4648 test vectors) both ways, without padding; a foreign character is refused", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["", ""],
      ["f", "MY"],
      ["fo", "MZXQ"],
      ["foo", "MZXW6"],
      ["foob", "MZXW6YQ"],
      ["fooba", "MZXW6YTB"],
      ["foobar", "MZXW6YTBOI"]
    ]
    for (const [plain, encoded] of cases) {
      assert.strictEqual(Totp.base32(utf8(plain)), encoded)
      assert.deepStrictEqual(Totp.fromBase32(encoded), utf8(plain))
      assert.deepStrictEqual(Totp.fromBase32(`${encoded.toLowerCase()}==`), utf8(plain))
    }
    assert.strictEqual(Totp.base32(seed), "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
    assert.isUndefined(Totp.fromBase32("MZXW1"))
  })

  it.effect("a code is accepted at steps -1, 0 and +1 of the test clock, and not two steps away", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_800_000_015_000)
      const now = Totp.stepAt(Math.floor((yield* Clock.currentTimeMillis) / 1000))
      assert.strictEqual(now, 60_000_000)
      for (const d of [-1, 0, 1]) {
        const code = yield* Totp.codeAt(seed, now + d)
        assert.strictEqual(yield* Totp.matchingStep(seed, code, now), now + d, `step ${d}`)
      }
      for (const d of [-2, 2]) {
        const code = yield* Totp.codeAt(seed, now + d)
        assert.isUndefined(yield* Totp.matchingStep(seed, code, now), `step ${d}`)
      }
    })
  )

  it.effect("a code of another shape than six ASCII digits matches nothing", () =>
    Effect.gen(function* () {
      const code = yield* Totp.codeAt(seed, 100)
      for (const bad of [`${code}0`, code.slice(1), ` ${code.slice(1)}`, "١٢٣٤٥٦", "12345a", ""])
        assert.isUndefined(yield* Totp.matchingStep(seed, bad, 100), JSON.stringify(bad))
    })
  )

  it("the otpauth URI escapes the issuer and the account in the label and the issuer parameter", () => {
    assert.strictEqual(
      Totp.otpauthUri("auth.example", "alice", "JBSWY3DPEHPK3PXP"),
      "otpauth://totp/auth.example:alice?secret=JBSWY3DPEHPK3PXP&issuer=auth.example&algorithm=SHA1&digits=6&period=30"
    )
    const uri = Totp.otpauthUri("Acme: Co & Sons", "bob:smith@x.example/?#", "ABC")
    assert.strictEqual(
      uri,
      "otpauth://totp/Acme%3A%20Co%20%26%20Sons:bob%3Asmith%40x.example%2F%3F%23?secret=ABC&issuer=Acme%3A%20Co%20%26%20Sons&algorithm=SHA1&digits=6&period=30"
    )
    const parsed = new URL(uri)
    assert.strictEqual(parsed.searchParams.get("issuer"), "Acme: Co & Sons")
    assert.strictEqual(decodeURIComponent(parsed.pathname.split(":")[1] ?? ""), "bob:smith@x.example/?#")
  })
})
