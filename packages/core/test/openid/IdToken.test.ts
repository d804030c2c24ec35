import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, TestClock } from "effect"
import * as jose from "jose"
import * as Admin from "../../src/admin/Admin.js"
import { KeyStore } from "../../src/storage/KeyStore.js"
import { StorageError } from "../../src/storage/StorageError.js"
import { issuer, newApp, newUser, TestLayer, token } from "../fixtures.js"
import { atHash, idClaims, openIdCode, redeem, verifyIdToken } from "./helpers.js"

const start = 1_700_000_000

/** An application registered for OpenID Connect and a user of it. */
const setup = (appScope = "openid,profile,email,read") =>
  Effect.gen(function* () {
    yield* TestClock.setTime(start * 1000)
    const { app, basic } = yield* newApp({ scope: appScope })
    const { user, password } = yield* newUser()
    return { app, basic, user, password }
  })

const todaysFields = ["access_token", "token_type", "expires_in", "scope", "refresh_token", "open_id"]

describe("ID token at the token endpoint", () => {
  it.effect(
    "an openid code gives an id_token that verifies against the JWKS with exactly the expected claims",
    () =>
      Effect.gen(function* () {
        const { app, basic, user } = yield* setup()
        const code = yield* openIdCode(app.appKey, user.userId, {
          scope: "openid,profile",
          nonce: "n-0S6_WzA2Mj",
          authTime: start - 30
        })
        const res = yield* redeem(code, basic)
        assert.strictEqual(res.status, 200)
        const body = res.json as Record<string, string>
        assert.deepStrictEqual(Object.keys(body), [...todaysFields, "id_token"])
        const verified = yield* idClaims(body.id_token as string, app.appKey)
        assert.deepStrictEqual(verified.protectedHeader.typ, "JWT")
        assert.include(["ES256", "RS256"], verified.protectedHeader.alg)
        const iat = verified.payload.iat as number
        assert.isAtLeast(iat, start)
        assert.isAtMost(iat, start + 1)
        assert.deepStrictEqual(verified.payload, {
          iss: issuer,
          sub: body.open_id as string,
          aud: app.appKey,
          exp: iat + 3600,
          iat,
          auth_time: start - 30,
          nonce: "n-0S6_WzA2Mj",
          at_hash: yield* atHash(body.access_token as string),
          preferred_username: user.username
        })
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "without nonce or sign-in time on the code, the id_token has neither; email yields no claim",
    () =>
      Effect.gen(function* () {
        const { app, basic, user } = yield* setup()
        const code = yield* openIdCode(app.appKey, user.userId, { scope: "openid,email" })
        const body = (yield* redeem(code, basic)).json as Record<string, string>
        const { payload } = yield* idClaims(body.id_token as string, app.appKey)
        assert.sameMembers(Object.keys(payload), ["iss", "sub", "aud", "exp", "iat", "at_hash"])
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("the id_token lives Config.idTokenTtl", () =>
    Effect.gen(function* () {
      const { app, basic, user } = yield* setup()
      const code = yield* openIdCode(app.appKey, user.userId, { scope: "openid" })
      const body = (yield* redeem(code, basic)).json as Record<string, string>
      const { payload } = yield* idClaims(body.id_token as string, app.appKey)
      assert.strictEqual((payload.exp as number) - (payload.iat as number), 600)
    }).pipe(Effect.provide(TestLayer({ idTokenTtl: 600 })))
  )

  it.effect("a code without openid gives today's response: no id_token", () =>
    Effect.gen(function* () {
      const { app, basic, user } = yield* setup()
      const code = yield* openIdCode(app.appKey, user.userId, { scope: "profile,read" })
      const res = yield* redeem(code, basic)
      assert.strictEqual(res.status, 200)
      assert.deepStrictEqual(Object.keys(res.json ?? {}), todaysFields)
      assert.strictEqual(res.json?.scope, "profile,read")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a code redeemed after openid left the application's registration gives no id_token", () =>
    Effect.gen(function* () {
      const { app, basic, user } = yield* setup()
      const code = yield* openIdCode(app.appKey, user.userId, { scope: "openid,profile,read" })
      yield* Admin.updateApplication(app.appKey, { scope: "profile,read" })
      const res = yield* redeem(code, basic)
      assert.deepStrictEqual(Object.keys(res.json ?? {}), todaysFields, JSON.stringify(res.json))
      assert.strictEqual(res.json?.scope, "profile,read")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("client_credentials and password never give an id_token, even with openid in the scope", () =>
    Effect.gen(function* () {
      const { basic, user, password } = yield* setup()
      const cc = yield* token({ grant_type: "client_credentials", scope: "openid,profile" }, basic)
      assert.strictEqual(cc.status, 200)
      assert.notProperty(cc.json, "id_token")
      const pw = yield* token(
        { grant_type: "password", username: user.username, password, scope: "openid,profile" },
        basic
      )
      assert.strictEqual(pw.status, 200)
      assert.include(String(pw.json?.scope).split(","), "openid")
      assert.notProperty(pw.json, "id_token")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a refresh with openid gives a new id_token with the same sub and aud, without nonce or auth_time",
    () =>
      Effect.gen(function* () {
        const { app, basic, user } = yield* setup()
        const code = yield* openIdCode(app.appKey, user.userId, {
          scope: "openid,profile",
          nonce: "n-1",
          authTime: start - 5
        })
        const first = (yield* redeem(code, basic)).json as Record<string, string>
        yield* TestClock.adjust("10 minutes")
        const res = yield* token(
          { grant_type: "refresh_token", refresh_token: first.refresh_token as string },
          basic
        )
        assert.strictEqual(res.status, 200)
        const body = res.json as Record<string, string>
        const { payload } = yield* idClaims(body.id_token as string, app.appKey)
        assert.deepStrictEqual(payload, {
          iss: issuer,
          sub: first.open_id as string,
          aud: app.appKey,
          exp: (payload.iat as number) + 3600,
          iat: payload.iat as number,
          at_hash: yield* atHash(body.access_token as string),
          preferred_username: user.username
        })
        assert.isAtLeast(payload.iat as number, start + 600)
        const narrowed = yield* token(
          { grant_type: "refresh_token", refresh_token: body.refresh_token as string, scope: "profile" },
          basic
        )
        assert.strictEqual(narrowed.status, 200)
        assert.notProperty(narrowed.json, "id_token")
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a signing key that cannot be read fails the exchange with 503 before the code is used: it redeems later",
    () =>
      Effect.gen(function* () {
        const { app, basic, user } = yield* setup()
        const code = yield* openIdCode(app.appKey, user.userId, { scope: "openid" })
        const keys = yield* KeyStore
        const down = yield* redeem(code, basic).pipe(
          Effect.provideService(KeyStore, {
            ...keys,
            list: () => Effect.fail(new StorageError({ message: "x" }))
          })
        )
        assert.deepStrictEqual([down.status, down.json?.error], [503, "temporarily_unavailable"])
        const res = yield* redeem(code, basic)
        assert.strictEqual(res.status, 200)
        assert.isString(res.json?.id_token)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect.prop(
    "every id_token verifies against the published JWKS for its App Key and for no other application's",
    [fc.array(fc.stringMatching(/^[a-z][a-z0-9]{2,12}$/), { minLength: 2, maxLength: 3 }), fc.boolean()],
    ([names, profile]) =>
      Effect.gen(function* () {
        yield* TestClock.setTime(start * 1000)
        const apps = yield* Effect.forEach([0, 1], () => newApp({ scope: "openid,profile" }))
        const issued: Array<{ appKey: string; idToken: string; openId: string }> = []
        for (const [i, name] of [...new Set(names)].entries()) {
          const { user } = yield* newUser(`${name}-${i}`)
          for (const { app, basic } of apps) {
            const scope = profile ? "openid,profile" : "openid"
            const code = yield* openIdCode(app.appKey, user.userId, { scope, nonce: `${name}${i}` })
            const body = (yield* redeem(code, basic)).json as Record<string, string>
            issued.push({
              appKey: app.appKey,
              idToken: body.id_token as string,
              openId: body.open_id as string
            })
          }
        }
        for (const t of issued) {
          const own = yield* verifyIdToken(t.idToken, t.appKey)
          assert.isTrue(Either.isRight(own))
          assert.strictEqual(Either.getOrThrow(own).payload.sub, t.openId)
          for (const { app } of apps.filter(({ app }) => app.appKey !== t.appKey)) {
            const other = yield* verifyIdToken(t.idToken, app.appKey)
            assert.isTrue(Either.isLeft(other))
            assert.instanceOf(
              (Either.getLeft(other) as { value: { error: unknown } }).value.error,
              jose.errors.JWTClaimValidationFailed
            )
          }
        }
      }).pipe(Effect.provide(TestLayer())),
    { fastCheck: { numRuns: 8 } }
  )
})
