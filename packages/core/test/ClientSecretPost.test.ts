/**
 * RFC 6749 §2.3.1: an application registered for `client_secret_post` authenticates with
 * `client_id` and `client_secret` in the body, at the token, introspection and revocation
 * endpoints; an application that uses the method it did not register gets `invalid_client` naming
 * the one it registered, whether its secret was right or not, counted like any failure.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import * as BasicAuth from "../src/oauth/requests/BasicAuth.js"
import * as Audit from "../src/security/Audit.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import * as Memory from "../src/storage/Memory.js"
import { newApp, post, TestLayer, token } from "./fixtures.js"

const layer = () => Layer.merge(TestLayer(), Layer.provideMerge(Audit.layer, Memory.auditLayer))
const cc = { grant_type: "client_credentials" }
const usesBasic =
  "client authentication failed: this application authenticates with client_secret_basic: send the App Key and App Secret with HTTP Basic (RFC 6749 §2.3.1), not in the body"
const usesPost =
  "client authentication failed: this application authenticates with client_secret_post: send client_id and client_secret in the body (RFC 6749 §2.3.1), not with HTTP Basic"
const failures = (appKey: string) =>
  Effect.map(
    Effect.flatMap(AuditStore, (s) => s.tail({ limit: 1000 })),
    (all) => all.filter((e) => e.type === "client_auth_failed" && e.appKey === appKey).length
  )
/** The three endpoints that authenticate the application, with a request each. */
const endpoints = [
  ["/oauth2/oauth2/token", cc],
  ["/oauth2/oauth2/introspect", { token: "t" }],
  ["/oauth2/oauth2/revoke", { token: "t" }]
] as const
const postApp = newApp({ tokenEndpointAuthMethod: "client_secret_post" })

describe("client_secret_post", () => {
  it.effect(
    "an application registered for it gets tokens, introspects and revokes with body credentials",
    () =>
      Effect.gen(function* () {
        const { app, appSecret } = yield* postApp
        const creds = { client_id: app.appKey, client_secret: appSecret }
        const issued = yield* token({ ...cc, ...creds })
        assert.strictEqual(issued.status, 200, issued.body)
        const access = issued.json?.access_token as string
        const active = yield* post("/oauth2/oauth2/introspect", { token: access, ...creds })
        assert.strictEqual(active.json?.active, true, active.body)
        const revoked = yield* post("/oauth2/oauth2/revoke", { token: access, ...creds })
        assert.strictEqual(revoked.status, 200, revoked.body)
        const after = yield* post("/oauth2/oauth2/introspect", { token: access, ...creds })
        assert.deepStrictEqual(after.json, { active: false })
        const wrong = yield* token({ ...cc, client_id: app.appKey, client_secret: `${appSecret}x` })
        assert.strictEqual(wrong.status, 401)
        assert.strictEqual(wrong.json?.error_description, "client authentication failed")
        assert.strictEqual(yield* failures(app.appKey), 1)
      }).pipe(Effect.provide(layer()))
  )

  it.effect("it sending HTTP Basic is invalid_client naming client_secret_post, right secret or not", () =>
    Effect.gen(function* () {
      const { app, appSecret, basic } = yield* postApp
      const wrong = BasicAuth.encode({ appKey: app.appKey, appSecret: `${appSecret}x` })
      const bodies = new Set<string>()
      for (const [path, params] of endpoints) {
        for (const authorization of [basic, wrong]) {
          const r = yield* post(path, params, authorization)
          assert.strictEqual(r.status, 401, path)
          assert.strictEqual(r.headers["www-authenticate"], 'Basic realm="latchkey"')
          bodies.add(r.body)
        }
      }
      assert.deepStrictEqual(
        [...bodies],
        [JSON.stringify({ error: "invalid_client", error_description: usesPost })]
      )
      assert.strictEqual(yield* failures(app.appKey), 6, "each counts as a failed authentication")
      const bare = yield* token({ ...cc, client_id: app.appKey })
      assert.strictEqual(bare.json?.error_description, usesPost, "client_id alone names the method too")
    }).pipe(Effect.provide(layer()))
  )

  it.effect("a client_secret_basic application sending body credentials is told client_secret_basic", () =>
    Effect.gen(function* () {
      const { app, appSecret } = yield* newApp()
      const bodies = new Set<string>()
      for (const [path, params] of endpoints) {
        for (const secret of [appSecret, `${appSecret}x`]) {
          const r = yield* post(path, { ...params, client_id: app.appKey, client_secret: secret })
          assert.strictEqual(r.status, 401, path)
          bodies.add(r.body)
        }
      }
      const unknown = yield* token({ ...cc, client_id: "no-such-app", client_secret: appSecret })
      bodies.add(unknown.body)
      assert.deepStrictEqual(
        [...bodies],
        [JSON.stringify({ error: "invalid_client", error_description: usesBasic })]
      )
      assert.strictEqual(yield* failures(app.appKey), 6)
    }).pipe(Effect.provide(layer()))
  )

  it.effect(
    "the wrong method counts toward the throttle: after the free failures, even the right way is 429",
    () =>
      Effect.gen(function* () {
        const { app, appSecret, basic } = yield* newApp()
        for (let i = 0; i < 12; i++) {
          const r = yield* token({ ...cc, client_id: app.appKey, client_secret: appSecret })
          assert.oneOf(r.status, [401, 429])
        }
        assert.strictEqual((yield* token(cc, basic)).status, 429)
      }).pipe(Effect.provide(layer()))
  )

  it.effect("Basic and body credentials in one request stay invalid_request, for either method", () =>
    Effect.gen(function* () {
      for (const { app, appSecret, basic } of [yield* newApp(), yield* postApp]) {
        const r = yield* token({ ...cc, client_id: app.appKey, client_secret: appSecret }, basic)
        assert.strictEqual(r.status, 400)
        assert.strictEqual(r.json?.error, "invalid_request")
      }
    }).pipe(Effect.provide(layer()))
  )

  it.effect("malformed body credentials are invalid_client and never logged", () =>
    Effect.gen(function* () {
      const { app, appSecret } = yield* postApp
      const lines: Array<string> = []
      const logger = Layer.merge(
        Logger.replace(
          Logger.defaultLogger,
          Logger.make(({ message, annotations }) => lines.push(JSON.stringify([message, [...annotations]])))
        ),
        Logger.minimumLogLevel(LogLevel.All)
      )
      for (const params of [
        { client_id: app.appKey, client_secret: "" },
        { client_id: app.appKey, client_secret: "x".repeat(513) },
        { client_id: app.appKey, client_secret: `${appSecret}\u0000` },
        { client_id: "", client_secret: appSecret },
        { client_secret: appSecret }
      ]) {
        const r = yield* token({ ...cc, ...params }).pipe(Effect.provide(logger))
        assert.strictEqual(r.status, 401, JSON.stringify(params))
        assert.strictEqual(r.json?.error, "invalid_client")
      }
      assert.notInclude(lines.join("\n"), appSecret)
    }).pipe(Effect.provide(layer()))
  )
})
