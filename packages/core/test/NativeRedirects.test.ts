/**
 * Redirect URIs of native applications (RFC 8252 §7): a loopback IP literal registered without a
 * port matches any port (§7.3), a public application may register a private-use scheme in
 * reverse-domain form (§7.1); everything else is still an exact string match.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as Application from "../src/model/Application.js"
import * as Pkce from "../src/model/Pkce.js"
import * as Scope from "../src/model/Scope.js"
import * as Authorize from "../src/oauth/Authorize.js"
import { authorize, newNativeApp, newUser, TestLayer, token } from "./fixtures.js"

const appWith = (redirectUris: ReadonlyArray<string>, isPublic = false): Application.Application => ({
  appKey: "native",
  name: "Native",
  secretDigest: isPublic ? "" : "digest",
  redirectUris,
  scopes: Either.getOrThrow(Scope.parse("read")),
  grantTypes: ["authorization_code", "refresh_token"],
  requirePkce: true,
  accessTokenTtl: null,
  refreshTokenTtl: null,
  createdAt: 0,
  ...(isPublic ? { public: true } : {})
})

const v4 = appWith(["http://127.0.0.1/cb"])
const v6 = appWith(["http://[::1]/cb"])

describe("RFC 8252 §7.3: loopback IP literals registered without a port", () => {
  it("match the same URI with any port, or none", () => {
    for (const uri of [
      "http://127.0.0.1/cb",
      "http://127.0.0.1:1/cb",
      "http://127.0.0.1:8080/cb",
      "http://127.0.0.1:65535/cb"
    ]) {
      assert.isTrue(Application.matchesRedirectUri(v4, uri), uri)
    }
    for (const uri of ["http://[::1]/cb", "http://[::1]:51004/cb"]) {
      assert.isTrue(Application.matchesRedirectUri(v6, uri), uri)
    }
    const withQuery = appWith(["http://127.0.0.1/cb?x=1"])
    assert.isTrue(Application.matchesRedirectUri(withQuery, "http://127.0.0.1:9000/cb?x=1"))
  })

  it("never match a look-alike: another host, path, query, scheme, userinfo, encoding or port", () => {
    for (const uri of [
      "http://127.0.0.1.evil.example:80/cb",
      "http://127.0.0.1.evil.example/cb",
      "http://127.0.0.1:8080/cb/extra",
      "http://127.0.0.1:8080/cb/",
      "http://127.0.0.1:8080/cb?x=1",
      "http://127.0.0.1:8080/cb#x",
      "http://127.0.0.2:8080/cb",
      "http://localhost:8080/cb",
      "https://127.0.0.1:8080/cb",
      "HTTP://127.0.0.1:8080/cb",
      "http://a@127.0.0.1:8080/cb",
      "http://127.0.0.1:8080@evil.example/cb",
      "http://127.0.0.1:8080/CB",
      "http://127.0.0.1:8080/c%62",
      "http://127.0.0.1:8080/%63b",
      "http://127.0.0.1%3A8080/cb",
      "http://127.0.0.1:0/cb",
      "http://127.0.0.1:65536/cb",
      "http://127.0.0.1:99999/cb",
      "http://127.0.0.1:08080/cb",
      "http://127.0.0.1:+80/cb",
      "http://127.0.0.1:/cb",
      "http://127.0.0.1:80:80/cb",
      "http://127.0.0.1:8080",
      "http://2130706433:8080/cb",
      "http://127.1:8080/cb",
      "http://[::1]:8080/cb"
    ]) {
      assert.isFalse(Application.matchesRedirectUri(v4, uri), uri)
    }
    for (const uri of [
      "http://[0:0:0:0:0:0:0:1]:8080/cb",
      "http://[::1]:8080/cb/x",
      "http://[::2]:8080/cb",
      "http://127.0.0.1:8080/cb"
    ]) {
      assert.isFalse(Application.matchesRedirectUri(v6, uri), uri)
    }
  })

  it("stay exact for localhost (RFC 8252 §8.3) and for a registration with a port", () => {
    const localhost = appWith(["http://localhost/cb"])
    assert.isTrue(Application.matchesRedirectUri(localhost, "http://localhost/cb"))
    assert.isFalse(Application.matchesRedirectUri(localhost, "http://localhost:8080/cb"))
    const withPort = appWith(["http://127.0.0.1:9000/cb"])
    assert.isTrue(Application.matchesRedirectUri(withPort, "http://127.0.0.1:9000/cb"))
    assert.isFalse(Application.matchesRedirectUri(withPort, "http://127.0.0.1:9001/cb"))
    assert.isFalse(Application.matchesRedirectUri(withPort, "http://127.0.0.1/cb"))
    const port80 = appWith(["http://127.0.0.1:80/cb"])
    assert.isFalse(Application.matchesRedirectUri(port80, "http://127.0.0.1:8080/cb"))
    const expanded = appWith(["http://[0:0:0:0:0:0:0:1]/cb"])
    assert.isFalse(Application.matchesRedirectUri(expanded, "http://[0:0:0:0:0:0:0:1]:8080/cb"))
  })

  it("property: a matched URI always has the registered scheme, host, path and query", () => {
    const segment = fc.stringMatching(/^[a-z0-9%._~-]{0,8}$/)
    const registered = fc
      .tuple(fc.constantFrom("http://127.0.0.1", "http://[::1]"), fc.array(segment, { maxLength: 3 }))
      .map(([host, parts]) => `${host}/${parts.join("/")}`)
    const candidate = fc.oneof(
      fc.tuple(registered, fc.integer({ min: 0, max: 70000 })).map(([r, port]) => {
        const host = r.startsWith("http://[") ? "http://[::1]" : "http://127.0.0.1"
        return `${host}:${port}${r.slice(host.length)}`
      }),
      fc.webUrl({ withQueryParameters: true }),
      fc.string({ unit: fc.constantFrom(..."htp:/[]1.027:8%a@?#=x") })
    )
    fc.assert(
      fc.property(registered, candidate, (r, uri) => {
        if (!Application.matchesRedirectUri(appWith([r]), uri)) return true
        const a = new URL(r)
        const b = new URL(uri)
        return (
          a.protocol === b.protocol &&
          a.hostname === b.hostname &&
          a.pathname === b.pathname &&
          a.search === b.search &&
          b.username === "" &&
          uri.slice(uri.indexOf("/", 7)) === r.slice(r.indexOf("/", 7))
        )
      }),
      { numRuns: 2000 }
    )
  })

  /** A code for `sent`, from a confidential application registered with `registered`, and its Basic credentials. */
  const loopbackCode = (registered: string, sent: string) =>
    Effect.gen(function* () {
      const { app, appSecret } = yield* Admin.createApplication({
        name: "CLI",
        redirectUris: [registered],
        scope: "read"
      })
      const { user } = yield* newUser()
      const location = yield* authorize(
        { response_type: "code", client_id: app.appKey, redirect_uri: sent, state: "s" },
        user.userId
      )
      assert.isTrue(location.startsWith(`${sent}?code=`), location)
      const code = new URL(location).searchParams.get("code") ?? ""
      const exchange = (redirectUri: string) =>
        token(
          { grant_type: "authorization_code", code, redirect_uri: redirectUri },
          `Basic ${btoa(`${app.appKey}:${appSecret}`)}`
        )
      return exchange
    })

  it.effect(
    "authorize redirects to the URI sent, with its port; the token request must send that same URI",
    () =>
      Effect.gen(function* () {
        const exchange = yield* loopbackCode("http://127.0.0.1/cb", "http://127.0.0.1:49152/cb")
        for (const other of ["http://127.0.0.1/cb", "http://127.0.0.1:49153/cb"]) {
          const r = yield* exchange(other)
          assert.deepStrictEqual([r.status, r.json?.error], [400, "invalid_grant"], other)
        }
        const same = yield* exchange("http://127.0.0.1:49152/cb")
        assert.strictEqual(same.status, 200, JSON.stringify(same.json))
        const sameV6 = yield* loopbackCode("http://[::1]/cb", "http://[::1]:8400/cb")
        const r = yield* sameV6("http://[::1]:8400/cb")
        assert.strictEqual(r.status, 200, JSON.stringify(r.json))
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a look-alike answers the error page, never a redirect", () =>
    Effect.gen(function* () {
      const { app } = yield* Admin.createApplication({
        name: "CLI",
        redirectUris: ["http://127.0.0.1/cb"],
        scope: "read"
      })
      const e = yield* Effect.flip(
        Authorize.validate(
          new URLSearchParams({
            response_type: "code",
            client_id: app.appKey,
            redirect_uri: "http://127.0.0.1.evil.example:8080/cb"
          }).toString()
        )
      )
      assert.strictEqual(e._tag, "ErrorPage")
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("RFC 8252 §7.1: private-use URI schemes", () => {
  const publicOwner = { public: true }

  it("a public application may register one in reverse-domain form, scheme:/path", () => {
    for (const uri of [
      "com.example.app:/cb",
      "io.github.user-app:/oauth2redirect?x=1",
      "com.example.app:/"
    ]) {
      assert.isTrue(Either.isRight(Application.validateRedirectUri(uri, publicOwner)), uri)
    }
  })

  it("refuses single words, web schemes, upper case, an authority, a fragment, and any for a confidential application", () => {
    for (const uri of [
      "myapp:/cb",
      "javascript:alert(1)",
      "data:text/html,x",
      "file:///etc/passwd",
      "http.evil.example:/cb",
      "https.example:/cb",
      "javascript.example:/cb",
      "Com.Example.App:/cb",
      "com.example.app://cb",
      "com.example.app://evil.example/cb",
      "com.example.app:cb",
      "com.example.app:/cb#x",
      "com..example:/cb",
      "com.example.:/cb",
      ".com.example:/cb",
      "1com.example:/cb",
      "com.exa_mple:/cb",
      "com.example.app:/c b"
    ]) {
      assert.isTrue(Either.isLeft(Application.validateRedirectUri(uri, publicOwner)), uri)
    }
    const confidential = Application.validateRedirectUri("com.example.app:/cb")
    assert.isTrue(Either.isLeft(confidential))
    if (Either.isLeft(confidential)) assert.include(confidential.left.description, "public applications")
    const offLoopback = Application.validateRedirectUri("http://app.example/cb")
    assert.deepStrictEqual(
      Either.isLeft(offLoopback) && offLoopback.left.description,
      "redirect URI must use https (http only for 127.0.0.1, [::1] or localhost)"
    )
  })

  it("match exactly, and only on a public application's row", () => {
    const app = appWith(["com.example.app:/cb"], true)
    assert.isTrue(Application.matchesRedirectUri(app, "com.example.app:/cb"))
    for (const uri of [
      "com.example.app:/cb/",
      "com.example.app:/CB",
      "com.example.apps:/cb",
      "com.example.app:/cb?x"
    ]) {
      assert.isFalse(Application.matchesRedirectUri(app, uri), uri)
    }
    assert.isFalse(
      Application.matchesRedirectUri(appWith(["com.example.app:/cb"], false), "com.example.app:/cb")
    )
  })

  it.effect(
    "create and update refuse one for a confidential application with a 400 naming redirect_uris",
    () =>
      Effect.gen(function* () {
        const refused = yield* Effect.flip(
          Admin.createApplication({ name: "Web", redirectUris: ["com.example.app:/cb"] })
        )
        assert.strictEqual(refused._tag, "InvalidField")
        if (refused._tag === "InvalidField") assert.strictEqual(refused.field, "redirect_uris")
        const { app: web } = yield* Admin.createApplication({
          name: "Web",
          redirectUris: ["https://w.example/cb"]
        })
        const patched = yield* Effect.flip(
          Admin.updateApplication(web.appKey, { redirectUris: ["com.example.app:/cb"] })
        )
        assert.strictEqual(patched._tag, "InvalidField")
        const { app: native } = yield* Admin.createApplication({
          name: "Native",
          redirectUris: ["com.example.app:/cb"],
          public: true
        })
        assert.deepStrictEqual([...native.redirectUris], ["com.example.app:/cb"])
        const updated = yield* Admin.updateApplication(native.appKey, {
          redirectUris: ["com.example.app:/cb", "com.example.app:/other"]
        })
        assert.strictEqual(updated.app.redirectUris.length, 2)
        const confidential = yield* Effect.flip(Admin.updateApplication(native.appKey, { public: false }))
        assert.strictEqual(confidential._tag, "InvalidField")
        if (confidential._tag === "InvalidField") assert.strictEqual(confidential.field, "redirect_uris")
        assert.isTrue((yield* Admin.findApplication(native.appKey)).public)
        const both = yield* Admin.updateApplication(native.appKey, {
          public: false,
          redirectUris: ["https://w.example/cb"]
        })
        assert.isFalse(Application.isPublic(both.app))
        assert.isNotNull(both.appSecret)
        const becomesPublic = yield* Admin.updateApplication(web.appKey, {
          public: true,
          grantTypes: ["authorization_code"],
          redirectUris: ["com.example.web:/cb"]
        })
        assert.isTrue(Application.isPublic(becomesPublic.app))
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("the code is delivered to it with a Location the browser hands to the app", () =>
    Effect.gen(function* () {
      const { app } = yield* newNativeApp()
      const { user } = yield* newUser()
      const verifier = "v".repeat(50)
      const challenge = yield* Pkce.s256(verifier)
      const location = yield* authorize(
        {
          response_type: "code",
          client_id: app.appKey,
          redirect_uri: "com.example.app:/cb",
          state: "s",
          code_challenge: challenge,
          code_challenge_method: "S256"
        },
        user.userId
      )
      assert.match(location, /^com\.example\.app:\/cb\?code=[A-Za-z0-9_-]+&state=s&iss=/)
      const code = new URL(location).searchParams.get("code") ?? ""
      const r = yield* token({
        grant_type: "authorization_code",
        code,
        redirect_uri: "com.example.app:/cb",
        client_id: app.appKey,
        code_verifier: verifier
      })
      assert.strictEqual(r.status, 200, JSON.stringify(r.json))
    }).pipe(Effect.provide(TestLayer()))
  )
})
