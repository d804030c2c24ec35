import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as Cors from "../src/http/Cors.js"
import * as Http from "../src/http/Http.js"
import * as Paths from "../src/http/Paths.js"
import { ApplicationStore } from "../src/storage/ApplicationStore.js"
import { StorageError } from "../src/storage/StorageError.js"
import { cb, form, newApp, newUser, TestLayer } from "./fixtures.js"
import { openIdCode, redeem } from "./openid/helpers.js"

const spa = "https://spa.example"
const other = "https://other.example"
const formType = { "content-type": "application/x-www-form-urlencoded" }

const send = (
  method: string,
  path: string,
  headers: Http.HttpRequest["headers"] = {},
  body = "",
  query = ""
) => Option.getOrThrow(Http.route({ method, path, query, headers, body, remoteAddress: "127.0.0.1" }))

const preflightOf = (path: string, origin: string, method = "POST") =>
  send("OPTIONS", path, {
    origin,
    "access-control-request-method": method,
    "access-control-request-headers": "authorization, content-type"
  })

const withOrigins = (appKey: string, webOrigins: ReadonlyArray<string>) =>
  Effect.flatMap(ApplicationStore, (apps) => apps.update(appKey, { webOrigins }, 0))

/** An application with `webOrigins`, its Basic credentials. */
const appWithOrigins = (webOrigins: ReadonlyArray<string>, input: Partial<Admin.NewApplication> = {}) =>
  Effect.tap(newApp(input), ({ app }) => withOrigins(app.appKey, webOrigins))

const corsNames = (headers: Readonly<Record<string, string>>): Array<string> =>
  Object.keys(headers).filter((k) => k.startsWith("access-control-") || k === "vary")

/** The headers `res` has beyond `plain`'s, which must otherwise be the same. */
const added = (res: Http.HttpResponse, plain: Http.HttpResponse): Record<string, string> => {
  const extra: Record<string, string> = {}
  for (const [k, v] of Object.entries(res.headers)) if (plain.headers[k] !== v) extra[k] = v
  for (const k of Object.keys(plain.headers)) assert.strictEqual(res.headers[k], plain.headers[k], k)
  return extra
}

const granted = (origin: string) => ({ "access-control-allow-origin": origin, vary: "Origin" })

const publicPaths = [Paths.oauth.metadata, Paths.oauth.openidConfiguration, Paths.oauth.jwks]
const applicationPaths = [Paths.oauth.token, Paths.oauth.revoke, Paths.oauth.userinfo]

describe("CORS of the public documents", () => {
  it.effect(
    "the discovery documents and the JWK Set answer every request with `*` and nothing else, with an Origin or without, so a cached copy serves any page",
    () =>
      Effect.gen(function* () {
        for (const path of publicPaths) {
          const plain = yield* send("GET", path)
          assert.deepStrictEqual(
            Object.fromEntries(corsNames(plain.headers).map((k) => [k, plain.headers[k]])),
            { "access-control-allow-origin": "*" },
            path
          )
          for (const origin of [spa, "https://anyone.example", "null"]) {
            const res = yield* send("GET", path, { origin })
            assert.strictEqual(res.status, 200)
            assert.strictEqual(res.body, plain.body)
            assert.deepStrictEqual(added(res, plain), {}, path)
          }
        }
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "their preflight is 204 with `*` and GET; OPTIONS without a preflight's headers is the 405 OPTIONS always got",
    () =>
      Effect.gen(function* () {
        for (const path of publicPaths) {
          const res = yield* preflightOf(path, "https://anyone.example", "GET")
          assert.deepStrictEqual(res, {
            status: 204,
            headers: {
              "access-control-allow-origin": "*",
              "access-control-allow-methods": "GET",
              "access-control-max-age": String(Cors.maxAge)
            },
            body: ""
          })
          const options = yield* send("OPTIONS", path)
          assert.deepStrictEqual([options.status, options.headers.allow], [405, "GET, HEAD"])
        }
      }).pipe(Effect.provide(TestLayer()))
  )
})

describe("CORS preflight of the token, revocation and userinfo endpoints", () => {
  it.effect("is granted, 204 with that exact origin, only to an origin some application registered", () =>
    Effect.gen(function* () {
      yield* appWithOrigins([spa])
      for (const path of applicationPaths) {
        const methods = path === Paths.oauth.userinfo ? "GET, POST" : "POST"
        assert.deepStrictEqual(yield* preflightOf(path, spa), {
          status: 204,
          headers: {
            "access-control-allow-origin": spa,
            vary: "Origin",
            "access-control-allow-methods": methods,
            "access-control-allow-headers": "Authorization, Content-Type",
            "access-control-max-age": String(Cors.maxAge)
          },
          body: ""
        })
      }
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "an unregistered or look-alike origin gets the answer OPTIONS gets without CORS (405), no grant",
    () =>
      Effect.gen(function* () {
        yield* appWithOrigins([spa])
        const lookAlikes = [
          other,
          `${spa}/`,
          `${spa}:8443`,
          "http://spa.example",
          "HTTPS://SPA.EXAMPLE",
          "https://spa.example.evil",
          "null",
          "*"
        ]
        for (const path of applicationPaths) {
          const today = yield* send("OPTIONS", path)
          assert.strictEqual(today.status, 405)
          for (const origin of lookAlikes)
            assert.deepStrictEqual(yield* preflightOf(path, origin), today, origin)
        }
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a store that cannot answer grants nothing: the answer OPTIONS gets without CORS", () =>
    Effect.gen(function* () {
      yield* appWithOrigins([spa])
      const apps = yield* ApplicationStore
      const down = { ...apps, webOriginRegistered: () => Effect.fail(new StorageError({ message: "down" })) }
      const res = yield* preflightOf(Paths.oauth.token, spa).pipe(
        Effect.provideService(ApplicationStore, down)
      )
      assert.deepStrictEqual(res, yield* send("OPTIONS", Paths.oauth.token))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("is no longer granted once the application drops the origin", () =>
    Effect.gen(function* () {
      const { app } = yield* appWithOrigins([spa])
      assert.strictEqual((yield* preflightOf(Paths.oauth.token, spa)).status, 204)
      yield* withOrigins(app.appKey, [])
      assert.strictEqual((yield* preflightOf(Paths.oauth.token, spa)).status, 405)
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("CORS of the token endpoint's answers", () => {
  const cc = form({ grant_type: "client_credentials" })

  it.effect(
    "the authenticated application's own origin reads its success and error answers; another's, or none, gets today's headers",
    () =>
      Effect.gen(function* () {
        const { basic } = yield* appWithOrigins([spa])
        yield* appWithOrigins([other])
        const post = (body: string, origin?: string, authorization = basic) =>
          send(
            "POST",
            Paths.oauth.token,
            {
              ...formType,
              authorization,
              ...(origin === undefined ? {} : { origin })
            },
            body
          )
        const plain = yield* post(cc)
        assert.strictEqual(plain.status, 200)
        assert.deepStrictEqual(corsNames(plain.headers), [])
        const mine = yield* post(cc, spa)
        assert.strictEqual(mine.status, 200)
        assert.deepStrictEqual(added(mine, plain), granted(spa))
        assert.deepStrictEqual(
          corsNames((yield* post(cc, other)).headers),
          [],
          "another application's origin"
        )
        assert.deepStrictEqual(corsNames((yield* post(cc, `${spa}/`)).headers), [], "a look-alike")
        // Error answers once the application is known
        for (const body of [form({ grant_type: "password" }), form({ grant_type: "x" })]) {
          const refused = yield* post(body, spa)
          const today = yield* post(body)
          assert.strictEqual(refused.status, 400)
          assert.strictEqual(refused.body, today.body)
          assert.deepStrictEqual(added(refused, today), granted(spa))
        }
        // Before it is known (failed authentication, a malformed request): no grant
        const wrong = yield* post(cc, spa, `${basic}x`)
        assert.strictEqual(wrong.status, 401)
        assert.deepStrictEqual(corsNames(wrong.headers), [])
        const notForm = yield* send("POST", Paths.oauth.token, { origin: spa, authorization: basic }, cc)
        assert.deepStrictEqual([notForm.status, corsNames(notForm.headers)], [400, []])
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a public client named by client_id reads its error answer from its own origin only", () =>
    Effect.gen(function* () {
      const { app } = yield* Admin.createApplication({
        name: "SPA",
        redirectUris: [cb],
        scope: "read",
        public: true
      })
      yield* withOrigins(app.appKey, [spa])
      const body = form({
        grant_type: "authorization_code",
        code: "x".repeat(43),
        redirect_uri: cb,
        client_id: app.appKey,
        code_verifier: "v".repeat(50)
      })
      const mine = yield* send("POST", Paths.oauth.token, { ...formType, origin: spa }, body)
      assert.deepStrictEqual([mine.status, mine.error], [400, "invalid_grant"])
      assert.deepStrictEqual(
        added(mine, yield* send("POST", Paths.oauth.token, formType, body)),
        granted(spa)
      )
      const theirs = yield* send("POST", Paths.oauth.token, { ...formType, origin: other }, body)
      assert.deepStrictEqual(corsNames(theirs.headers), [])
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a repeated Origin header grants nothing", () =>
    Effect.gen(function* () {
      const { basic } = yield* appWithOrigins([spa])
      const res = yield* send(
        "POST",
        Paths.oauth.token,
        { ...formType, authorization: basic, origin: [spa, spa] },
        cc
      )
      assert.strictEqual(res.status, 200)
      assert.deepStrictEqual(corsNames(res.headers), [])
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("CORS of the revocation endpoint's answers", () => {
  it.effect(
    "its own origin reads the answer and an error once the application is known; another's gets today's",
    () =>
      Effect.gen(function* () {
        const { basic } = yield* appWithOrigins([spa])
        const revoke = (origin?: string, query = "") =>
          send(
            "POST",
            Paths.oauth.revoke,
            { ...formType, authorization: basic, ...(origin === undefined ? {} : { origin }) },
            form({ token: "unknown-token" }),
            query
          )
        const plain = yield* revoke()
        assert.strictEqual(plain.status, 200)
        assert.deepStrictEqual(added(yield* revoke(spa), plain), granted(spa))
        assert.deepStrictEqual(corsNames((yield* revoke(other)).headers), [])
        const inQuery = yield* revoke(spa, "token=x")
        assert.deepStrictEqual([inQuery.status, inQuery.error], [400, "invalid_request"])
        assert.deepStrictEqual(added(inQuery, yield* revoke(undefined, "token=x")), granted(spa))
      }).pipe(Effect.provide(TestLayer()))
  )
})

describe("CORS of the userinfo endpoint's answers", () => {
  const userToken = (webOrigins: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const { app, basic } = yield* appWithOrigins(webOrigins, { scope: "openid,profile" })
      const { user } = yield* newUser()
      const code = yield* openIdCode(app.appKey, user.userId, { scope: "openid,profile" })
      return { basic, access: (yield* redeem(code, basic)).json?.access_token as string }
    })

  it.effect(
    "the origin of the application the token was issued to reads the claims and WWW-Authenticate; another's gets today's headers",
    () =>
      Effect.gen(function* () {
        const { access } = yield* userToken([spa])
        yield* appWithOrigins([other])
        const get = (origin?: string, authorization = `Bearer ${access}`) =>
          send("GET", Paths.oauth.userinfo, { authorization, ...(origin === undefined ? {} : { origin }) })
        const plain = yield* get()
        assert.strictEqual(plain.status, 200)
        const mine = yield* get(spa)
        assert.strictEqual(mine.body, plain.body)
        assert.deepStrictEqual(added(mine, plain), {
          ...granted(spa),
          "access-control-expose-headers": "WWW-Authenticate"
        })
        assert.deepStrictEqual(corsNames((yield* get(other)).headers), [])
        // A token the server cannot tie to an application: no grant
        const invalid = yield* get(spa, "Bearer not-a-token")
        assert.deepStrictEqual([invalid.status, corsNames(invalid.headers)], [401, []])
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("the application's own token (no user) is refused readably to its origin", () =>
    Effect.gen(function* () {
      const { basic } = yield* appWithOrigins([spa], { scope: "openid,profile" })
      const cc = yield* send(
        "POST",
        Paths.oauth.token,
        { ...formType, authorization: basic },
        form({ grant_type: "client_credentials", scope: "openid" })
      )
      const access = JSON.parse(cc.body).access_token as string
      const res = yield* send("POST", Paths.oauth.userinfo, {
        authorization: `Bearer ${access}`,
        origin: spa
      })
      assert.deepStrictEqual([res.status, res.error], [401, "invalid_token"])
      assert.strictEqual(res.headers["access-control-allow-origin"], spa)
      assert.strictEqual(res.headers["access-control-expose-headers"], "WWW-Authenticate")
      assert.match(res.headers["www-authenticate"] ?? "", /error="invalid_token"/)
    }).pipe(Effect.provide(TestLayer()))
  )
})
