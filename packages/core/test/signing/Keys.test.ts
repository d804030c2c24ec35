/**
 * The signing keys: generated on first use, sealed at rest, rotated without downtime (a token
 * signed before a rotation keeps verifying until it expires), and JWTs refused when anything
 * but this server's published keys and claims stands behind them. Time is the test clock's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"
import * as jose from "jose"
import * as Jwt from "../../src/signing/Jwt.js"
import * as Keys from "../../src/signing/Keys.js"
import { KeyStore } from "../../src/storage/KeyStore.js"
import { issuer, TestLayer } from "../fixtures.js"

const claims = (now: number, extra: jose.JWTPayload = {}): jose.JWTPayload => ({
  iss: issuer,
  sub: "subject",
  aud: "audience",
  iat: now,
  exp: now + 60,
  ...extra
})

describe("signing keys", () => {
  it.effect("the first use creates one ES256 signing key, its private part sealed", () =>
    Effect.gen(function* () {
      const set = yield* Keys.ensured
      assert.strictEqual(set.keys.length, 1)
      const [stored] = yield* Effect.flatMap(KeyStore, (s) => s.list())
      assert.strictEqual(stored?.alg, "ES256")
      assert.isFalse(stored?.sealedPrivateJwk.includes('"d"'))
      assert.notProperty(JSON.parse(stored?.publicJwk ?? "{}"), "d")
      const jwks = yield* Keys.jwks
      assert.deepStrictEqual(
        jwks.keys.map((k) => k.kid),
        [stored?.kid]
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a token signed now verifies; with another audience or type it does not", () =>
    Effect.gen(function* () {
      const token = yield* Jwt.sign(claims(0), Jwt.accessTokenType)
      const payload = yield* Jwt.verify(token, { typ: Jwt.accessTokenType, audience: "audience" })
      assert.strictEqual(payload.sub, "subject")
      const other = yield* Effect.either(
        Jwt.verify(token, { typ: Jwt.accessTokenType, audience: "elsewhere" })
      )
      assert.isTrue(Either.isLeft(other))
      const idType = yield* Effect.either(Jwt.verify(token, { typ: Jwt.idTokenType }))
      assert.isTrue(Either.isLeft(idType))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "after a rotation new tokens name the new key and old tokens verify until the old key's last token expired",
    () =>
      Effect.gen(function* () {
        const before = yield* Jwt.sign(claims(0), Jwt.idTokenType)
        const rotated = yield* Keys.rotate("RS256")
        const after = yield* Jwt.sign(claims(0), Jwt.idTokenType)
        assert.strictEqual(jose.decodeProtectedHeader(after).kid, rotated.kid)
        assert.strictEqual(jose.decodeProtectedHeader(after).alg, "RS256")
        for (const t of [before, after]) {
          assert.isTrue(Either.isRight(yield* Effect.either(Jwt.verify(t, { typ: Jwt.idTokenType }))))
        }
        assert.strictEqual((yield* Keys.jwks).keys.length, 2)
        // Published until the longest lifetime (the default access token's, 3600 s) has passed
        yield* TestClock.setTime(3600 * 1000)
        const removed = yield* Effect.flatMap(KeyStore, (s) => s.removeExpired(3600))
        assert.strictEqual(removed, 1)
        yield* TestClock.setTime(3610 * 1000)
        assert.strictEqual((yield* Keys.jwks).keys.length, 1)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a sealed private key opens only under the server key that sealed it", () =>
    Effect.gen(function* () {
      const sealed = yield* Effect.promise(() => Keys.seal("a".repeat(32), "secret"))
      assert.strictEqual(yield* Effect.promise(() => Keys.unseal("a".repeat(32), sealed)), "secret")
      const wrong = yield* Effect.either(Effect.tryPromise(() => Keys.unseal("b".repeat(32), sealed)))
      assert.isTrue(Either.isLeft(wrong))
    })
  )

  it.effect(
    "alg none, HS256 keyed with the public key, a foreign kid, another issuer, expired and future tokens are refused",
    () =>
      Effect.gen(function* () {
        const set = yield* Keys.ensured
        const publicJwk = JSON.parse(set.keys[0]?.record.publicJwk ?? "{}") as jose.JWK
        const kid = publicJwk.kid as string
        const refused = (t: string) =>
          Effect.map(Effect.either(Jwt.verify(t, { typ: Jwt.idTokenType })), (r) =>
            assert.isTrue(Either.isLeft(r), t)
          )
        const unsigned = new jose.UnsecuredJWT(claims(0)).encode()
        yield* refused(unsigned)
        const hs = yield* Effect.promise(() =>
          new jose.SignJWT(claims(0))
            .setProtectedHeader({ alg: "HS256", kid, typ: "JWT" })
            .sign(new TextEncoder().encode(JSON.stringify(publicJwk)))
        )
        yield* refused(hs)
        const foreign = yield* Effect.promise(async () => {
          const pair = await jose.generateKeyPair("ES256")
          return new jose.SignJWT(claims(0))
            .setProtectedHeader({ alg: "ES256", kid, typ: "JWT" })
            .sign(pair.privateKey)
        })
        yield* refused(foreign)
        yield* refused(yield* Jwt.sign(claims(0, { iss: "https://elsewhere.example" }), Jwt.idTokenType))
        yield* refused(yield* Jwt.sign(claims(0, { iat: 100, exp: 200 }), Jwt.idTokenType))
        yield* TestClock.setTime(61_000)
        yield* refused(yield* Jwt.sign(claims(0), Jwt.idTokenType))
      }).pipe(Effect.provide(TestLayer()))
  )
})

describe("reading keys never creates one", () => {
  it.effect("a JWT naming an unknown kid on an empty store writes nothing", () =>
    Effect.gen(function* () {
      const forged = "eyJhbGciOiJFUzI1NiIsImtpZCI6Im5vbmUiLCJ0eXAiOiJKV1QifQ.e30.c2ln"
      yield* TestClock.adjust("2 seconds")
      assert.isTrue(Either.isLeft(yield* Effect.either(Jwt.verify(forged, { typ: Jwt.idTokenType }))))
      assert.deepStrictEqual(yield* Effect.flatMap(KeyStore, (s) => s.list()), [])
    }).pipe(Effect.provide(TestLayer()))
  )
})
