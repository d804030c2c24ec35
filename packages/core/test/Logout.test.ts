/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0) at the end session endpoint, and
 * the `sid` of the ID tokens it checks hints against. Time comes from the TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import * as jose from "jose"
import * as Admin from "../src/admin/Admin.js"
import * as Http from "../src/http/Http.js"
import * as Paths from "../src/http/Paths.js"
import * as BasicAuth from "../src/oauth/requests/BasicAuth.js"
import * as Audit from "../src/security/Audit.js"
import * as Session from "../src/security/Session.js"
import * as Jwt from "../src/signing/Jwt.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import * as Memory from "../src/storage/Memory.js"
import { type Answer, Browser, errorOf, setup, signIn, ticketOf, view } from "./browser.js"
import { cb, form, issuer, newApp, TestLayer, token } from "./fixtures.js"
import { redeem } from "./openid/helpers.js"
import { clientRedirect, codeOf, openIdSetup, queryOf } from "./openid.js"

const Audited = Layer.provideMerge(Audit.layer, Memory.auditLayer)
const Layers = (settings: Parameters<typeof TestLayer>[0] = {}) =>
  Layer.merge(TestLayer({ issuer, ...settings }), Audited)

const bye = "https://app.example/bye"

/** An OpenID application with a registered post-logout redirect URI, a signed-in browser and its ID token. */
const signedIn = (b: Browser = new Browser()) =>
  Effect.gen(function* () {
    const { app, user, password, query } = yield* openIdSetup()
    yield* Admin.updateApplication(app.appKey, { postLogoutRedirectUris: [bye] })
    const { appSecret } = yield* Admin.rotateSecret(app.appKey)
    const basic = BasicAuth.encode({ appKey: app.appKey, appSecret })
    yield* TestClock.setTime(1000 * 1000)
    const next = yield* signIn(b, query, user.username, password)
    const consent = yield* b.get(queryOf(next))
    const code = clientRedirect(yield* b.post("authorize", { ...ticketOf(consent), decision: "allow" })).get(
      "code"
    ) as string
    const tokens = JSON.parse((yield* redeem(code, basic)).body as string)
    const idToken = tokens.id_token as string
    return { app, user, password, query, idToken, refreshToken: tokens.refresh_token as string, basic, b }
  })

const logout = (b: Browser, params: Record<string, string>, method: "GET" | "POST" = "GET", headers = {}) =>
  method === "GET"
    ? b.request("logout", "GET", form(params), "", headers)
    : b.request("logout", "POST", "", form(params), { "sec-fetch-site": "same-origin", ...headers })

/** Whether the browser's session is still signed in (the consents page lists, rather than asks to sign in). */
const stillSignedIn = (cookie: string | undefined) =>
  Effect.map(
    new Browser(cookie === undefined ? {} : { cookie }).consents(),
    (a) => a.view._tag === "Consents"
  )

const logouts = Effect.map(
  Effect.flatMap(AuditStore, (s) => s.tail({ limit: 100 })),
  (events) => events.filter((e) => e.type === "logout")
)

const claims = (idToken: string) => jose.decodeJwt(idToken)

describe("ID tokens carry sid", () => {
  it.effect("the session's digest, not its cookie value: the same within a session, another in another", () =>
    Effect.gen(function* () {
      const first = yield* signedIn()
      const sid = claims(first.idToken).sid as string
      const cookieId = (first.b.cookie as string).split("=")[1]?.split(".")[0] as string
      assert.isString(sid)
      assert.notInclude(sid, cookieId)
      assert.notInclude(cookieId, sid)
      assert.strictEqual(sid, yield* Session.sidOf(yield* Effect.promise(() => sha256(cookieId))))
      const other = yield* signedIn()
      assert.notStrictEqual(claims(other.idToken).sid, sid)
    }).pipe(Effect.provide(Layers()))
  )

  it.effect("not an ID token of a refresh, nor the code of an OAuth 2.0 request", () =>
    Effect.gen(function* () {
      const first = yield* signedIn()
      const refreshed = yield* token(
        { grant_type: "refresh_token", refresh_token: first.refreshToken },
        first.basic
      )
      const idToken = JSON.parse(refreshed.body as string).id_token as string
      assert.isString(idToken)
      assert.notProperty(claims(idToken), "sid")
      const { user, password, query } = yield* setup()
      const b = new Browser()
      const back = yield* signIn(b, query, user.username, password)
      const consent = yield* b.get(queryOf(back))
      const code = yield* codeOf(yield* b.post("authorize", { ...ticketOf(consent), decision: "allow" }))
      assert.isNull(code.sid ?? null)
    }).pipe(Effect.provide(Layers()))
  )
})

const sha256 = async (value: string) => {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value))
  return btoa(String.fromCharCode(...new Uint8Array(d)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "")
}

describe("end session endpoint: a hint of this session", () => {
  it.effect("ends the session at once and returns to the registered URI with state; recorded", () =>
    Effect.gen(function* () {
      const { app, user, idToken, b } = yield* signedIn()
      const cookie = b.cookie
      const a = yield* logout(b, { id_token_hint: idToken, post_logout_redirect_uri: bye, state: "st 1" })
      const r = view(a, "Redirect")
      assert.deepStrictEqual([r.status, r.location], [302, `${bye}?state=st%201`])
      assert.match(
        a.setCookie as string,
        /^latchkey_session=; Path=\/oauth2\/oauth2; HttpOnly; SameSite=Lax; Max-Age=0; Secure$/
      )
      assert.isFalse(yield* stillSignedIn(cookie))
      const events = yield* logouts
      assert.deepStrictEqual(
        events.map((e) => [e.appKey, e.userId, e.detail]),
        [[app.appKey, user.userId, "id_token_hint"]]
      )
    }).pipe(Effect.provide(Layers()))
  )

  it.effect("an expired hint is accepted (§2); without post_logout_redirect_uri the signed-out page", () =>
    Effect.gen(function* () {
      const { idToken, b } = yield* signedIn()
      const cookie = b.cookie
      yield* TestClock.adjust("2 hours")
      // The session lives on (renewed by the consents page), the ID token has expired
      assert.isTrue(yield* stillSignedIn(cookie))
      const a = yield* logout(b, { id_token_hint: idToken, ui_locales: "zh-CN" })
      const page = view(a, "SignedOut")
      assert.deepStrictEqual(page.uiLocales, ["zh-CN"])
      assert.isFalse(yield* stillSignedIn(cookie))
    }).pipe(Effect.provide(Layers({ sessionTtl: 3 * 3600 })))
  )

  it.effect("a hint of another session asks first and ends nothing", () =>
    Effect.gen(function* () {
      const mine = yield* signedIn()
      const other = yield* signedIn()
      const a = yield* logout(mine.b, { id_token_hint: other.idToken })
      view(a, "LogoutConfirm")
      assert.isNull(a.setCookie)
      assert.isTrue(yield* stillSignedIn(mine.b.cookie))
      assert.isTrue(yield* stillSignedIn(other.b.cookie))
      assert.deepStrictEqual(yield* logouts, [])
    }).pipe(Effect.provide(Layers()))
  )
})

describe("end session endpoint: the confirmation", () => {
  it.effect("without a hint the user is asked; Sign out (a same-site POST with the token) ends it", () =>
    Effect.gen(function* () {
      const { app, b } = yield* signedIn()
      const cookie = b.cookie
      const params = { client_id: app.appKey, post_logout_redirect_uri: bye, state: "s" }
      const page = view(yield* logout(b, params), "LogoutConfirm")
      assert.deepStrictEqual(
        [page.appName, page.action, page.formTargets],
        [Option.some("Test App"), Paths.oauth.logout, ["'self'", "https://app.example"]]
      )
      assert.deepStrictEqual(page.fields, Object.entries(params))
      assert.isTrue(yield* stillSignedIn(cookie))
      const fields = { ...Object.fromEntries(page.fields), csrf_token: page.csrf }
      // A wrong token, or a post from another site, is refused and ends nothing
      const wrong = errorOf(yield* logout(b, { ...fields, csrf_token: `${page.csrf}x` }, "POST"))
      assert.deepStrictEqual([wrong.status, wrong.problem], [403, { reason: "form_expired" }])
      const cross = yield* logout(b, fields, "POST", { "sec-fetch-site": "cross-site" })
      assert.strictEqual(errorOf(cross).status, 403)
      assert.isTrue(yield* stillSignedIn(cookie))
      const done = view(yield* logout(b, fields, "POST"), "Redirect")
      assert.deepStrictEqual([done.status, done.location], [303, `${bye}?state=s`])
      assert.isFalse(yield* stillSignedIn(cookie))
      assert.deepStrictEqual(
        (yield* logouts).map((e) => e.detail),
        ["confirmed"]
      )
    }).pipe(Effect.provide(Layers()))
  )

  it.effect("without a session nothing is asked: the same answer, however often", () =>
    Effect.gen(function* () {
      const { app, idToken } = yield* signedIn()
      const b = new Browser()
      for (const _ of [1, 2]) {
        const a = yield* logout(b, { id_token_hint: idToken, post_logout_redirect_uri: bye, state: "s" })
        assert.deepStrictEqual([view(a, "Redirect").location, a.setCookie], [`${bye}?state=s`, null])
      }
      view(yield* logout(b, { client_id: app.appKey }), "SignedOut")
      view(yield* logout(b, {}), "SignedOut")
      assert.deepStrictEqual(yield* logouts, [])
    }).pipe(Effect.provide(Layers()))
  )
})

/** The error page of a refused logout request, with nothing ended. */
const refusedWith = (a: Answer, reason: string) => {
  const e = errorOf(a)
  assert.deepStrictEqual([e.status, e.problem.reason, e.error], [400, reason, "invalid_request"])
  return e
}

describe("end session endpoint: requests that cannot be trusted", () => {
  it.effect(
    "a post_logout_redirect_uri not registered for the application is an error page, never a redirect",
    () =>
      Effect.gen(function* () {
        const { app, idToken, b } = yield* signedIn()
        const { app: other } = yield* newApp({ scope: "openid" })
        yield* Admin.updateApplication(other.appKey, {
          postLogoutRedirectUris: ["https://other.example/bye"]
        })
        const cases: ReadonlyArray<Record<string, string>> = [
          { id_token_hint: idToken, post_logout_redirect_uri: `${bye}/` },
          { id_token_hint: idToken, post_logout_redirect_uri: "https://other.example/bye" },
          { client_id: app.appKey, post_logout_redirect_uri: cb },
          { post_logout_redirect_uri: bye }
        ]
        for (const params of cases) {
          const e = refusedWith(yield* logout(b, params), "bad_logout")
          assert.deepStrictEqual(e.received, Option.some(params.post_logout_redirect_uri as string))
        }
        assert.isTrue(yield* stillSignedIn(b.cookie))
        assert.deepStrictEqual(yield* logouts, [])
      }).pipe(Effect.provide(Layers()))
  )

  it.effect(
    "a hint with a bad signature, of another issuer or not a JWT, or a client_id that is not its audience, is refused",
    () =>
      Effect.gen(function* () {
        const { idToken, b } = yield* signedIn()
        const { app: other } = yield* newApp({ scope: "openid" })
        const tampered = `${idToken.slice(0, -4)}${idToken.slice(-4) === "AAAA" ? "BBBB" : "AAAA"}`
        const foreign = yield* Jwt.sign({ ...claims(idToken), iss: "https://evil.example" }, Jwt.idTokenType)
        for (const hint of [tampered, foreign, "not-a-jwt"]) {
          refusedWith(yield* logout(b, { id_token_hint: hint, post_logout_redirect_uri: bye }), "bad_logout")
        }
        refusedWith(yield* logout(b, { id_token_hint: idToken, client_id: other.appKey }), "bad_logout")
        refusedWith(yield* logout(b, { client_id: "no-such-app" }), "unknown_client")
        assert.isTrue(yield* stillSignedIn(b.cookie))
        assert.deepStrictEqual(yield* logouts, [])
      }).pipe(Effect.provide(Layers()))
  )

  it.effect("HEAD checks and ends nothing; another method is 405; a repeated parameter is 400", () =>
    Effect.gen(function* () {
      const { idToken, b } = yield* signedIn()
      const head = yield* b.request(
        "logout",
        "HEAD",
        form({ id_token_hint: idToken, post_logout_redirect_uri: bye })
      )
      assert.deepStrictEqual(view(head, "Head").formTargets, ["'self'", "https://app.example"])
      const put = errorOf(yield* b.request("logout", "PUT", ""))
      assert.deepStrictEqual([put.status, put.headers], [405, { allow: "GET, HEAD, POST" }])
      assert.strictEqual(errorOf(yield* b.request("logout", "GET", "state=a&state=b")).status, 400)
      assert.isTrue(yield* stillSignedIn(b.cookie))
    }).pipe(Effect.provide(Layers()))
  )
})

describe("discovery", () => {
  it.effect("the metadata names the end session endpoint, a page of the router", () =>
    Effect.gen(function* () {
      for (const path of [Paths.oauth.openidConfiguration, Paths.oauth.metadata]) {
        const res = yield* Option.getOrThrow(
          Http.route({ method: "GET", path, query: "", headers: {}, body: "" })
        )
        const doc = JSON.parse(res.body as string) as Record<string, unknown>
        assert.strictEqual(doc.end_session_endpoint, `${issuer}/oauth2/oauth2/logout`)
      }
      assert.include(Paths.pages, Paths.oauth.logout)
    }).pipe(Effect.provide(Layers()))
  )
})
