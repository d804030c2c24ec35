import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Logger, Option, TestClock } from "effect"
import * as Http from "../src/http/Http.js"
import * as Config from "../src/model/Config.js"
import * as BasicAuth from "../src/oauth/requests/BasicAuth.js"
import { StorageError } from "../src/storage/StorageError.js"
import { TokenStore } from "../src/storage/TokenStore.js"
import { newApp, post, TestLayer, token } from "./fixtures.js"

const cc = { grant_type: "client_credentials" }

describe("token endpoint HTTP rules", () => {
  it.effect("missing, malformed or wrong credentials are 401 invalid_client with WWW-Authenticate", () =>
    Effect.gen(function* () {
      const { app, appSecret } = yield* newApp()
      const cases = [
        undefined,
        "Bearer abc",
        "Basic !!!",
        "Basic " + btoa("no-colon"),
        BasicAuth.encode({ appKey: app.appKey, appSecret: `${appSecret}x` }),
        BasicAuth.encode({ appKey: "unknown-app", appSecret })
      ]
      const bodies = new Set<string>()
      for (const auth of cases) {
        const res = yield* token(cc, auth)
        assert.strictEqual(res.status, 401, String(auth))
        assert.strictEqual(res.json?.error, "invalid_client")
        assert.strictEqual(res.headers["www-authenticate"], 'Basic realm="latchkey"')
        // No Authorization header says how to authenticate (public clients exist, see PublicClients.test.ts)
        if (auth === undefined)
          assert.strictEqual(
            res.json?.error_description,
            "client authentication failed: send the App Key and App Secret with HTTP Basic (RFC 6749 §2.3.1)"
          )
        else bodies.add(res.body)
      }
      assert.strictEqual(bodies.size, 1, "unknown App Key and wrong secret get the same answer")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "repeated failed client authentication is throttled per App Key with 429, even for the right secret",
    () =>
      Effect.gen(function* () {
        const { app, appSecret, basic } = yield* newApp()
        const wrong = BasicAuth.encode({ appKey: app.appKey, appSecret: `${appSecret}x` })
        for (let i = 0; i < 6; i++) assert.strictEqual((yield* token(cc, wrong)).status, 401)
        const locked = yield* token(cc, basic)
        assert.strictEqual(locked.status, 429)
        assert.strictEqual(locked.json?.error, "temporarily_unavailable")
        assert.strictEqual(locked.headers["retry-after"], "30")
        yield* TestClock.adjust("31 seconds")
        assert.strictEqual((yield* token(cc, basic)).status, 200)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("failed client authentication from one address is throttled across App Keys", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      for (let i = 0; i < 21; i++) {
        const res = yield* token(cc, BasicAuth.encode({ appKey: `guess-${i}`, appSecret: "x".repeat(43) }))
        assert.strictEqual(res.status, 401)
      }
      assert.strictEqual((yield* token(cc, basic)).status, 429)
      const elsewhere = yield* post("/oauth2/oauth2/token", cc, basic, { remoteAddress: "10.0.0.9" })
      assert.strictEqual(elsewhere.status, 200)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("credentials form-urlencoded inside Basic are decoded (RFC 6749 Appendix B)", () =>
    Effect.gen(function* () {
      const { app, appSecret } = yield* newApp({
        appKey: "legacy.app~1",
        appSecret: "s3cret+with/odd=chars:and-colons-0123"
      })
      assert.strictEqual(app.appKey, "legacy.app~1")
      const res = yield* token(cc, BasicAuth.encode({ appKey: app.appKey, appSecret }))
      assert.strictEqual(res.status, 200)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("client_secret in the body, or a different client_id, is invalid_request", () =>
    Effect.gen(function* () {
      const { app, appSecret, basic } = yield* newApp()
      assert.strictEqual(
        (yield* token({ ...cc, client_secret: appSecret }, basic)).json?.error,
        "invalid_request"
      )
      assert.strictEqual((yield* token({ ...cc, client_id: "other" }, basic)).json?.error, "invalid_request")
      assert.strictEqual((yield* token({ ...cc, client_id: app.appKey }, basic)).status, 200)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a repeated parameter is invalid_request", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const res = yield* token("grant_type=client_credentials&grant_type=client_credentials", basic)
      assert.strictEqual(res.status, 400)
      assert.strictEqual(res.json?.error, "invalid_request")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("malformed percent-encoding and invalid UTF-8 are invalid_request", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      for (const body of ["grant_type=client%ZZcredentials", "grant_type=%C3%28", "grant_type=%"]) {
        assert.strictEqual((yield* token(body, basic)).json?.error, "invalid_request", body)
      }
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "an empty value counts as absent; unknown parameters are ignored; a[]= is just an unknown name",
    () =>
      Effect.gen(function* () {
        const { basic } = yield* newApp()
        assert.strictEqual((yield* token("grant_type=", basic)).json?.error, "invalid_request")
        assert.strictEqual(
          (yield* token("grant_type=client_credentials&foo=bar&a[]=1&a[b]=2", basic)).status,
          200
        )
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("missing grant_type is invalid_request; an unknown one is unsupported_grant_type", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      assert.strictEqual((yield* token({}, basic)).json?.error, "invalid_request")
      assert.strictEqual(
        (yield* token({ grant_type: "implicit" }, basic)).json?.error,
        "unsupported_grant_type"
      )
      assert.strictEqual(
        (yield* token({ grant_type: "__proto__" }, basic)).json?.error,
        "unsupported_grant_type"
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a grant the application is not registered for is unauthorized_client", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp({ grantTypes: ["authorization_code"] })
      assert.strictEqual((yield* token(cc, basic)).json?.error, "unauthorized_client")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a body over 16 KiB is 413", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const res = yield* token(`grant_type=client_credentials&pad=${"a".repeat(16 * 1024)}`, basic)
      assert.strictEqual(res.status, 413)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a body within 16 KiB in characters but over it in UTF-8 bytes is 413; one within it in bytes is not",
    () =>
      Effect.gen(function* () {
        const { basic } = yield* newApp()
        // "é" is 2 bytes of UTF-8: 9,000 of them are 18,000 bytes; 5,000 are 10,000
        const over = yield* token(`grant_type=client_credentials&pad=${"é".repeat(9000)}`, basic)
        assert.strictEqual(over.status, 413)
        const within = yield* token(`grant_type=client_credentials&pad=${"é".repeat(5000)}`, basic)
        assert.notStrictEqual(within.status, 413)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a body the binding stopped reading as too large is 413, whatever it handed over", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const res = yield* post("/oauth2/oauth2/token", cc, basic, { bodyTooLarge: true })
      assert.deepStrictEqual([res.status, res.json?.error], [413, "invalid_request"])
      assert.strictEqual(
        (yield* post("/oauth2/oauth2/token", cc, basic, { bodyTooLarge: false })).status,
        200
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an error response carries its body's error code as a value; a success none", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      for (const res of [
        yield* token(cc, "Basic bm9wZTpub3Bl"),
        yield* token({ grant_type: "magic" }, basic),
        yield* post("/oauth2/oauth2/token", cc, basic, { method: "GET" }),
        yield* post("/oauth2/oauth2/token", cc, basic, { bodyTooLarge: true })
      ]) {
        assert.isAtLeast(res.status, 400)
        assert.strictEqual(res.error, res.json?.error)
      }
      assert.isUndefined((yield* token(cc, basic)).error)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a content type other than form-urlencoded is invalid_request", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      for (const type of [
        "application/json",
        "text/plain",
        "multipart/form-data",
        "application/x-www-form-urlencoded; charset=latin1"
      ]) {
        const res = yield* post("/oauth2/oauth2/token", cc, basic, {
          headers: { "content-type": type, authorization: basic }
        })
        assert.strictEqual(res.json?.error, "invalid_request", type)
      }
      const ok = yield* post("/oauth2/oauth2/token", cc, basic, {
        headers: { "content-type": "application/x-www-form-urlencoded; charset=UTF-8", authorization: basic }
      })
      assert.strictEqual(ok.status, 200)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a compressed body is refused with 415, never inflated", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const res = yield* post("/oauth2/oauth2/token", cc, basic, {
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "content-encoding": "gzip",
          authorization: basic
        }
      })
      assert.strictEqual(res.status, 415)
      assert.strictEqual(res.json?.error, "invalid_request")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("methods other than POST are 405 with Allow", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const res = yield* post("/oauth2/oauth2/token", cc, basic, { method: "GET" })
      assert.strictEqual(res.status, 405)
      assert.strictEqual(res.headers.allow, "POST")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("parameters in the query string are not read", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const res = yield* post("/oauth2/oauth2/token", {}, basic, { query: "grant_type=client_credentials" })
      assert.strictEqual(res.json?.error, "invalid_request")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("storage failures are 503 temporarily_unavailable with Retry-After and no cause", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const tokens = yield* TokenStore
      const res = yield* token(cc, basic).pipe(
        Effect.provideService(TokenStore, {
          ...tokens,
          insert: () => Effect.fail(new StorageError({ message: "disk I/O error at /var/secret" }))
        })
      )
      assert.strictEqual(res.status, 503)
      assert.strictEqual(res.json?.error, "temporarily_unavailable")
      assert.strictEqual(res.headers["retry-after"], "1")
      assert.notInclude(res.body, "disk")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an unexpected defect is 500 server_error without a stack trace", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const tokens = yield* TokenStore
      const res = yield* token(cc, basic).pipe(
        Effect.provideService(TokenStore, {
          ...tokens,
          insert: () => Effect.die(new Error("boom at line 42"))
        })
      )
      assert.strictEqual(res.status, 500)
      assert.deepStrictEqual(res.json, { error: "server_error", error_description: "internal server error" })
    }).pipe(Effect.provide(TestLayer()), Effect.provide(Logger.remove(Logger.defaultLogger)))
  )
})

describe("metadata", () => {
  it.effect("advertises the endpoints, S256 only and the iss parameter (RFC 8414, RFC 9207)", () =>
    Effect.gen(function* () {
      const res = yield* Option.getOrThrow(
        Http.route({
          method: "GET",
          path: "/.well-known/oauth-authorization-server",
          query: "",
          headers: {},
          body: ""
        })
      )
      const doc = JSON.parse(res.body)
      assert.strictEqual(doc.issuer, "https://auth.example")
      assert.strictEqual(doc.token_endpoint, "https://auth.example/oauth2/oauth2/token")
      assert.deepStrictEqual(doc.code_challenge_methods_supported, ["S256"])
      assert.isTrue(doc.authorization_response_iss_parameter_supported)
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("Config.make", () => {
  it("refuses an unusable issuer, a short server key and bad lifetimes with a typed error naming the setting", () => {
    const base = { issuer: "https://auth.example", serverKey: "k".repeat(32) }
    assert.isTrue(Either.isRight(Config.make(base)))
    for (const [options, field] of [
      [{ ...base, issuer: "auth.example" }, "issuer"],
      [{ ...base, issuer: "ftp://auth.example" }, "issuer"],
      [{ ...base, issuer: "https://auth.example/?a=1" }, "issuer"],
      [{ ...base, issuer: "https://auth.example/" }, "issuer"],
      [{ ...base, serverKey: "k".repeat(31) }, "serverKey"],
      [{ ...base, codeTtl: 601 }, "codeTtl"],
      [{ ...base, sessionTtl: 0 }, "sessionTtl"],
      [{ ...base, refreshReuseGrace: -1 }, "refreshReuseGrace"]
    ] as const) {
      const r = Config.make(options)
      assert.isTrue(Either.isLeft(r), JSON.stringify(options))
      const e = (r as Either.Left<Config.InvalidConfig, Config.Settings>).left
      assert.deepStrictEqual([e._tag, e.field], ["InvalidConfig", field])
    }
  })
})

describe("Http.nestsDeeperThan", () => {
  const depthOf = (v: unknown): number =>
    typeof v === "object" && v !== null ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0

  it("agrees with the nesting of any JSON value, whatever its strings hold", () => {
    const value = fc
      .jsonValue({ maxDepth: 6 })
      .chain((v) => fc.constantFrom(v, [v], { '"[{\\': v }, { k: ['\\"', "[[[", v] }))
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 8 }), (v, max) => {
        assert.strictEqual(Http.nestsDeeperThan(JSON.stringify(v), max), depthOf(v) > max)
      }),
      { numRuns: 500 }
    )
  })

  it("scans 10,000 unclosed levels without recursion", () => {
    assert.isTrue(Http.nestsDeeperThan("[".repeat(10_000), Http.maxJsonDepth))
    assert.isTrue(Http.nestsDeeperThan('{"a":'.repeat(10_000), Http.maxJsonDepth))
    assert.isFalse(Http.nestsDeeperThan(`"${"[".repeat(10_000)}"`, Http.maxJsonDepth))
  })
})
