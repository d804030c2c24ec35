/**
 * Deterministic budgets of the hot paths (docs/performance.md): the Effect operations one request
 * runs through the core, counted (`countOps`), never timed, on the in-memory stores with the audit
 * trail kept and its lines written, no tracer, and a synchronous Digest as the reference server
 * has (node:crypto). A change that adds steps to one of these paths fails here on any machine.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as Http from "../src/http/Http.js"
import * as Audit from "../src/security/Audit.js"
import * as PasswordChecks from "../src/security/PasswordChecks.js"
import * as Throttle from "../src/security/Throttle.js"
import * as Memory from "../src/storage/Memory.js"
import { cb, form, issueCode, newApp, newUser, SyncDigest, TestLayer } from "./fixtures.js"
import { openIdCode } from "./openid/helpers.js"
import { countOps } from "./ops.js"

const Served = (checks?: PasswordChecks.Limits) =>
  Layer.mergeAll(
    TestLayer({}, Throttle.defaultPolicy, checks),
    SyncDigest,
    Layer.provideMerge(
      Audit.layerWriting(() => {}),
      Memory.auditLayer
    ),
    Layer.setTracerEnabled(false)
  )

/** The core's answer to a request, and the operations it ran. */
const served = (req: Partial<Http.HttpRequest> & Pick<Http.HttpRequest, "path">) =>
  countOps(
    Option.getOrThrow(
      Http.route({ method: "POST", query: "", headers: {}, body: "", remoteAddress: "127.0.0.1", ...req })
    )
  )

const posted = (path: string, params: Record<string, string>, authorization: string) =>
  served({
    path,
    headers: { authorization, "content-type": "application/x-www-form-urlencoded" },
    body: form(params)
  })

/** One request's operations, after its answer was checked. */
const within = (
  run: { readonly value: Http.HttpResponse; readonly ops: number },
  status: number,
  budget: number
) => {
  assert.strictEqual(run.value.status, status, run.value.body)
  assert.isAtMost(run.ops, budget, `ran ${run.ops} operations, over the budget of ${budget}`)
  return run
}

describe("operation budgets of the protocol endpoints", () => {
  it.effect("client_credentials: at most 40 operations", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      within(yield* posted("/oauth2/oauth2/token", { grant_type: "client_credentials" }, basic), 200, 40)
    }).pipe(Effect.provide(Served()))
  )

  it.effect("introspection of an active token: at most 25 operations", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const issued = yield* posted("/oauth2/oauth2/token", { grant_type: "client_credentials" }, basic)
      const token = JSON.parse(issued.value.body).access_token as string
      const run = within(yield* posted("/oauth2/oauth2/introspect", { token }, basic), 200, 25)
      assert.include(run.value.body, '"active":true')
    }).pipe(Effect.provide(Served()))
  )

  /** A user's code redeemed, then its refresh token used, then the new refresh token revoked. */
  const userFlow = Effect.gen(function* () {
    const { app, basic } = yield* newApp()
    const { user } = yield* newUser()
    const code = yield* issueCode(app.appKey, user.userId)
    const redeemed = yield* posted(
      "/oauth2/oauth2/token",
      { grant_type: "authorization_code", code, redirect_uri: cb },
      basic
    )
    const refresh_token = JSON.parse(redeemed.value.body).refresh_token as string
    const refreshed = yield* posted(
      "/oauth2/oauth2/token",
      { grant_type: "refresh_token", refresh_token },
      basic
    )
    const token = JSON.parse(refreshed.value.body).refresh_token as string
    const revoked = yield* posted("/oauth2/oauth2/revoke", { token }, basic)
    return { redeemed, refreshed, revoked }
  })

  it.effect("authorization_code: at most 40 operations", () =>
    Effect.map(userFlow, ({ redeemed }) => within(redeemed, 200, 40)).pipe(Effect.provide(Served()))
  )

  it.effect("refresh_token: at most 40 operations", () =>
    Effect.map(userFlow, ({ refreshed }) => within(refreshed, 200, 40)).pipe(Effect.provide(Served()))
  )

  it.effect("revocation of a refresh token: at most 30 operations", () =>
    Effect.map(userFlow, ({ revoked }) => within(revoked, 200, 30)).pipe(Effect.provide(Served()))
  )

  it.effect("userinfo with an opaque openid access token: at most 20 operations", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp({ scope: "openid,profile" })
      const { user } = yield* newUser()
      const code = yield* openIdCode(app.appKey, user.userId, { scope: "openid,profile" })
      const redeemed = yield* posted(
        "/oauth2/oauth2/token",
        { grant_type: "authorization_code", code, redirect_uri: cb },
        basic
      )
      const access = JSON.parse(redeemed.value.body).access_token as string
      const run = within(
        yield* served({
          method: "GET",
          path: "/oauth2/oauth2/userinfo",
          headers: { authorization: `Bearer ${access}` }
        }),
        200,
        20
      )
      assert.include(run.value.body, `"preferred_username":"${user.username}"`)
    }).pipe(Effect.provide(Served()))
  )

  it.effect("the JWK Set, from the key set held: at most 5 operations", () =>
    Effect.gen(function* () {
      // The first request stores the signing key and loads the set; the next one answers from it
      const first = yield* served({ method: "GET", path: "/oauth2/oauth2/jwks" })
      assert.strictEqual(first.value.status, 200)
      const run = within(yield* served({ method: "GET", path: "/oauth2/oauth2/jwks" }), 200, 5)
      assert.strictEqual(run.value.body, first.value.body)
      assert.include(run.value.body, '"kty"')
    }).pipe(Effect.provide(Served()))
  )

  it.effect("the metadata, from the scope catalogue held: at most 5 operations", () =>
    Effect.gen(function* () {
      // The first request reads the scope catalogue; the next one answers from what it read
      const first = yield* served({ method: "GET", path: "/.well-known/oauth-authorization-server" })
      assert.strictEqual(first.value.status, 200)
      const run = within(
        yield* served({ method: "GET", path: "/.well-known/oauth-authorization-server" }),
        200,
        5
      )
      assert.strictEqual(run.value.body, first.value.body)
      assert.include(run.value.body, '"issuer":"https://auth.example"')
    }).pipe(Effect.provide(Served()))
  )

  /** A user's password grants from an application, until the throttle locks the username. */
  const lockedOut = Effect.gen(function* () {
    const { basic } = yield* newApp()
    const { user, password } = yield* newUser()
    const attempt = (given: string) =>
      posted(
        "/oauth2/oauth2/token",
        { grant_type: "password", username: user.username, password: given },
        basic
      )
    // The policy's free failures, then one that locks the key
    for (let i = 0; i <= Throttle.defaultPolicy.freeFailures; i++)
      assert.strictEqual((yield* attempt("wrong password")).value.status, 400)
    return attempt(password)
  })

  it.effect("a password grant refused by the throttle, the right password too: at most 35 operations", () =>
    Effect.gen(function* () {
      const run = within(yield* yield* lockedOut, 429, 35)
      assert.include(run.value.body, "too many failed attempts; try again later")
      assert.strictEqual(run.value.headers["retry-after"], "30")
    }).pipe(Effect.provide(Served()))
  )

  it.effect("a password grant refused by admission (503): at most 25 operations", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const { user, password } = yield* newUser()
      const params = { grant_type: "password", username: user.username, password }
      const run = within(yield* posted("/oauth2/oauth2/token", params, basic), 503, 25)
      assert.include(run.value.body, "too many sign-in attempts are waiting")
    }).pipe(Effect.provide(Served({ ...PasswordChecks.defaultLimits, maxPending: 0 })))
  )
})
