/**
 * The resource-server check of a JWT access token (RFC 9068 §4): verified locally, against the
 * published keys and the expected issuer, type, audience and lifetime, without reading the
 * TokenStore; anything else is the same invalid_token an unknown opaque token gets. Time is
 * the test clock's (0 at start).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Layer, TestClock } from "effect"
import * as jose from "jose"
import * as Scope from "../../src/model/Scope.js"
import * as Bearer from "../../src/oauth/Bearer.js"
import * as Jwt from "../../src/signing/Jwt.js"
import * as Keys from "../../src/signing/Keys.js"
import { ApplicationStore } from "../../src/storage/ApplicationStore.js"
import { KeyStore } from "../../src/storage/KeyStore.js"
import { StorageError } from "../../src/storage/StorageError.js"
import { TokenStore } from "../../src/storage/TokenStore.js"
import { issuer, newUser, post, TestLayer, token } from "../fixtures.js"
import { jwtApp, parts } from "./helpers.js"

const scope = (s: string) => Either.getOrThrow(Scope.parse(s))

const verify = (value: string, required = "", audience?: string) =>
  Effect.either(Bearer.verify(`Bearer ${value}`, scope(required), audience))

const description = "the access token is invalid, expired or revoked"

/** Assert that `value` is refused as invalid_token with the description every invalid token gets. */
const refused = (value: string, audience?: string) =>
  Effect.map(verify(value, "", audience), (r) => {
    assert.isTrue(Either.isLeft(r), "expected a refusal")
    const e = (r as Either.Left<{ readonly _tag: string; readonly description: string }, unknown>).left
    assert.deepStrictEqual([e._tag, e.description], ["InvalidToken", description])
  })

/** A JWT access token of a fresh JWT application (client_credentials with an open_id). */
const minted = (audience?: string) =>
  Effect.gen(function* () {
    const { app, basic } = yield* jwtApp({}, audience)
    const res = yield* token({ grant_type: "client_credentials", open_id: "device-42" }, basic)
    return { app, basic, access: res.json?.access_token as string }
  })

const b64 = (value: object) => jose.base64url.encode(JSON.stringify(value))

const signingKey = Effect.map(Keys.ensured, (set) => {
  const key = set.keys[0]
  if (key === undefined) throw new Error("no signing key")
  return key.record
})

/** Every store read `find` of the TokenStore and ApplicationStore dies: only the key set may be read. */
const withoutTokenReads = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const tokens = yield* TokenStore
    const apps = yield* ApplicationStore
    return yield* self.pipe(
      Effect.provideService(TokenStore, { ...tokens, find: () => Effect.die("the TokenStore was read") }),
      Effect.provideService(ApplicationStore, {
        ...apps,
        find: () => Effect.die("the ApplicationStore was read")
      })
    )
  })

describe("Bearer.verify of a JWT access token", () => {
  it.effect(
    "accepts a valid one without reading the TokenStore or ApplicationStore, its principal from the claims",
    () =>
      Effect.gen(function* () {
        const { app, access } = yield* minted()
        const r = yield* withoutTokenReads(verify(access, "read"))
        assert.deepStrictEqual(
          r,
          Either.right({
            clientId: app.appKey,
            openId: "device-42",
            subjectType: "application" as const,
            scope: scope("read write"),
            expiresAt: 300
          })
        )
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "an application's own token has no open_id; a user's token names the user's open_id as user",
    () =>
      Effect.gen(function* () {
        const { app, basic } = yield* jwtApp()
        const own = (yield* token({ grant_type: "client_credentials" }, basic)).json?.access_token as string
        const { user, password } = yield* newUser()
        const res = yield* token({ grant_type: "password", username: user.username, password }, basic)
        const mine = yield* withoutTokenReads(verify(own))
        const users = yield* withoutTokenReads(verify(res.json?.access_token as string))
        assert.deepStrictEqual(
          Either.map(mine, (p) => [p.clientId, p.openId, p.subjectType]),
          Either.right([app.appKey, null, null])
        )
        assert.deepStrictEqual(
          Either.map(users, (p) => [p.clientId, p.openId, p.subjectType]),
          Either.right([app.appKey, res.json?.open_id as string, "user"])
        )
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a scope the token lacks is insufficient_scope", () =>
    Effect.gen(function* () {
      const { access } = yield* minted()
      const r = yield* verify(access, "admin")
      assert.strictEqual(Either.isLeft(r) ? r.left._tag : "ok", "InsufficientScope")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("refuses alg none, with or without a signature part", () =>
    Effect.gen(function* () {
      const { access } = yield* minted()
      const [, payload, signature] = access.split(".")
      const { kid } = yield* signingKey
      const none = b64({ alg: "none", kid, typ: "at+jwt" })
      yield* refused(`${none}.${payload}.`)
      yield* refused(`${none}.${payload}.${signature}`)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("refuses HS256 signed with the published public JWK as the secret", () =>
    Effect.gen(function* () {
      const { access } = yield* minted()
      const key = yield* signingKey
      const forged = yield* Effect.promise(() =>
        new jose.SignJWT(parts(access).claims)
          .setProtectedHeader({ alg: "HS256", kid: key.kid, typ: "at+jwt" })
          .sign(new TextEncoder().encode(key.publicJwk))
      )
      yield* refused(forged)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("refuses a key id that is not published, and a foreign key behind a published key id", () =>
    Effect.gen(function* () {
      const { access } = yield* minted()
      const { kid } = yield* signingKey
      const foreign = yield* Effect.promise(() => jose.generateKeyPair("ES256"))
      const signWith = (keyId: string) =>
        Effect.promise(() =>
          new jose.SignJWT(parts(access).claims)
            .setProtectedHeader({ alg: "ES256", kid: keyId, typ: "at+jwt" })
            .sign(foreign.privateKey)
        )
      yield* refused(yield* signWith("not-published"))
      yield* refused(yield* signWith(kid))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a token signed by a key another process just created verifies: its unknown kid rereads the key set",
    () =>
      Effect.gen(function* () {
        const { access } = yield* minted()
        // Another process: the same stored keys, its own cached copy of them
        const other = { ...(yield* KeyStore) }
        yield* TestClock.adjust("1 second")
        const fresh = yield* Effect.zipRight(
          Keys.rotate(),
          Jwt.sign({ ...parts(access).claims, iat: 1, exp: 301 }, Jwt.accessTokenType)
        ).pipe(Effect.provideService(KeyStore, other))
        assert.notStrictEqual(parts(fresh).header.kid, parts(access).header.kid)
        assert.isTrue(Either.isRight(yield* withoutTokenReads(verify(fresh))))
        assert.isTrue(Either.isRight(yield* verify(access)))
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("refuses a token once expired (at exp itself), and accepts it the second before", () =>
    Effect.gen(function* () {
      const { access } = yield* minted()
      yield* TestClock.adjust("299 seconds")
      assert.isTrue(Either.isRight(yield* verify(access)))
      yield* TestClock.adjust("1 second")
      yield* refused(access)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("refuses a token issued in the future, of another issuer, or that is an ID token", () =>
    Effect.gen(function* () {
      const { access } = yield* minted()
      const claims = parts(access).claims
      yield* refused(yield* Jwt.sign({ ...claims, iat: 60, exp: 360 }, Jwt.accessTokenType))
      yield* refused(yield* Jwt.sign({ ...claims, iss: "https://other.example" }, Jwt.accessTokenType))
      yield* refused(yield* Jwt.sign(claims, Jwt.idTokenType))
      // The same claims under the access token type verify: each refusal above is its one difference
      assert.isTrue(Either.isRight(yield* verify(yield* Jwt.sign(claims, Jwt.accessTokenType))))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("refuses a token for another audience, and accepts it where that audience is expected", () =>
    Effect.gen(function* () {
      const { access } = yield* minted("https://api.example")
      yield* refused(access)
      yield* refused(access, "https://other-api.example")
      assert.isTrue(Either.isRight(yield* verify(access, "", "https://api.example")))
      const own = yield* minted()
      yield* refused(own.access, "https://api.example")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("refuses a tampered payload under the original signature", () =>
    Effect.gen(function* () {
      const { access } = yield* minted()
      const [header, , signature] = access.split(".")
      const claims = { ...parts(access).claims, scope: "read write admin" }
      yield* refused(`${header}.${b64(claims)}.${signature}`)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("refuses a signed at+jwt whose claims are not an access token's", () =>
    Effect.gen(function* () {
      const { app, access } = yield* minted()
      const { client_id: _, ...withoutClient } = parts(access).claims
      yield* refused(yield* Jwt.sign(withoutClient, Jwt.accessTokenType))
      const { subject_type: __, ...asApplication } = parts(access).claims
      // Without subject_type the subject must be the application itself
      yield* refused(yield* Jwt.sign(asApplication, Jwt.accessTokenType))
      yield* refused(
        yield* Jwt.sign({ ...asApplication, sub: app.appKey, scope: "a,b" }, Jwt.accessTokenType)
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a revoked JWT access token is still accepted locally until its exp, the documented trade-off",
    () =>
      Effect.gen(function* () {
        const { basic, access } = yield* minted()
        yield* post("/oauth2/oauth2/revoke", { token: access }, basic)
        assert.deepStrictEqual((yield* post("/oauth2/oauth2/introspect", { token: access }, basic)).json, {
          active: false
        })
        assert.isTrue(Either.isRight(yield* verify(access)))
        yield* TestClock.adjust("300 seconds")
        yield* refused(access)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect.prop(
    "a token minted for audience X never verifies for an audience Y other than X",
    {
      audiences: fc
        .tuple(fc.oneof(fc.webUrl(), fc.string({ minLength: 1, maxLength: 40 })), fc.webUrl())
        .filter(([x, y]) => x !== y)
    },
    ({ audiences: [x, y] }) =>
      Effect.gen(function* () {
        const { access } = yield* minted(x)
        assert.isTrue(Either.isRight(yield* verify(access, "", x)))
        yield* refused(access, y)
        if (x !== issuer) yield* refused(access)
      }).pipe(Effect.provide(TestLayer())),
    { fastCheck: { numRuns: 25 } }
  )
})

describe("Bearer.admit of a JWT access token", () => {
  it.effect(
    "admits it for its audience and answers another audience with 401 invalid_token and its challenge",
    () =>
      Effect.gen(function* () {
        const { access } = yield* minted("https://api.example")
        const admitted = yield* Bearer.admit(
          [`Bearer ${access}`],
          scope("read"),
          "api",
          "https://api.example"
        )
        assert.isTrue(Either.isRight(admitted))
        const other = yield* Bearer.admit([`Bearer ${access}`], scope("read"), "api")
        assert.isTrue(Either.isLeft(other))
        const res = (other as Either.Left<{ status: number; headers: Record<string, string> }, unknown>).left
        assert.strictEqual(res.status, 401)
        assert.strictEqual(
          res.headers["www-authenticate"],
          `Bearer realm="api", error="invalid_token", error_description="${description}"`
        )
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a key store that cannot answer is 503 with Retry-After, as a token store that cannot", () =>
    Effect.gen(function* () {
      const { access } = yield* minted()
      const broken = Layer.succeed(KeyStore, {
        ...(yield* KeyStore),
        list: () => Effect.fail(new StorageError({ message: "down" }))
      })
      const r = yield* Bearer.admit([`Bearer ${access}`], scope("")).pipe(Effect.provide(broken))
      assert.isTrue(Either.isLeft(r))
      const res = (r as Either.Left<{ status: number; headers: Record<string, string> }, unknown>).left
      assert.strictEqual(res.status, 503)
      assert.isString(res.headers["retry-after"])
    }).pipe(Effect.provide(TestLayer()))
  )
})
