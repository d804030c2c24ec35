import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Throttle } from "@latchkey/core"
import {
  authorizeAndAllow,
  authorizeUrl,
  Browser,
  basic,
  createApp,
  createUser,
  forms,
  originOf,
  postForm,
  signIn,
  startServer,
  type TestServer,
  tokenRequest
} from "./helpers.js"

let s: TestServer
let app: { appKey: string; appSecret: string; redirectUri: string }

beforeAll(async () => {
  s = await startServer()
  app = await createApp(s)
})
afterAll(() => s.close())

const assertPageHeaders = (res: Response) => {
  assert.strictEqual(res.headers.get("x-frame-options"), "DENY")
  const csp = res.headers.get("content-security-policy") ?? ""
  assert.include(csp, "frame-ancestors 'none'")
  assert.include(csp, "default-src 'none'")
  assert.notInclude(csp, "unsafe-inline")
  assert.strictEqual(res.headers.get("referrer-policy"), "no-referrer")
  assert.strictEqual(res.headers.get("cache-control"), "no-store")
  assert.isNull(res.headers.get("access-control-allow-origin"))
}

const codeParams = (extra: Record<string, string> = {}) => ({
  response_type: "code",
  client_id: app.appKey,
  redirect_uri: app.redirectUri,
  state: "s-123",
  ...extra
})

describe("authorize validation", () => {
  it("shows an error page, never a redirect, for an unknown client or redirect URI", async () => {
    for (const params of [
      { response_type: "code", client_id: "nope", redirect_uri: app.redirectUri },
      { response_type: "code", client_id: app.appKey, redirect_uri: "https://evil.example/cb" },
      { response_type: "code", client_id: app.appKey, redirect_uri: `${app.redirectUri}/` },
      { response_type: "code", client_id: app.appKey },
      { response_type: "code", client_id: app.appKey, redirect_uri: "javascript:alert(1)//" }
    ]) {
      const res = await new Browser().get(authorizeUrl(s, params))
      assert.strictEqual(res.status, 400)
      assert.isNull(res.headers.get("location"))
      assert.strictEqual(res.headers.get("content-type"), "text/html; charset=utf-8")
      assertPageHeaders(res)
      assert.include(await res.text(), "invalid_request")
    }
  })

  it("answers JSON when the client asks for JSON", async () => {
    const res = await fetch(
      authorizeUrl(s, { response_type: "code", client_id: "nope", redirect_uri: app.redirectUri }),
      {
        headers: { accept: "application/json" },
        redirect: "manual"
      }
    )
    assert.strictEqual(res.status, 400)
    assert.strictEqual(res.headers.get("content-type"), "application/json; charset=utf-8")
    assert.strictEqual(((await res.json()) as { error: string }).error, "invalid_request")
  })

  it("escapes every reflected value", async () => {
    const res = await new Browser().get(
      `${s.base}/oauth2/oauth2/authorize?response_type=code&client_id=${encodeURIComponent("<script>alert(1)</script>")}&redirect_uri=${encodeURIComponent('"><svg onload=alert(1)>')}`
    )
    const html = await res.text()
    assert.notInclude(html, "<script>alert")
    assert.notInclude(html, "<svg onload")
  })

  it("redirects other errors to the client with error, state and iss", async () => {
    const res = await new Browser().get(authorizeUrl(s, codeParams({ scope: "bogus" })))
    assert.strictEqual(res.status, 302)
    const location = new URL(res.headers.get("location") as string)
    assert.strictEqual(location.origin + location.pathname, app.redirectUri)
    assert.strictEqual(location.searchParams.get("error"), "invalid_scope")
    assert.strictEqual(location.searchParams.get("state"), "s-123")
    assert.strictEqual(location.searchParams.get("iss"), s.issuer)
    assert.strictEqual(res.headers.get("cache-control"), "no-store")
    const type = await new Browser().get(authorizeUrl(s, codeParams({ response_type: "foo" })))
    assert.strictEqual(
      new URL(type.headers.get("location") as string).searchParams.get("error"),
      "unsupported_response_type"
    )
    const clientType = await new Browser().get(authorizeUrl(s, codeParams({ client_type: "Desktop" })))
    assert.strictEqual(
      new URL(clientType.headers.get("location") as string).searchParams.get("error"),
      "invalid_request"
    )
  })

  it("sends implicit errors in the fragment", async () => {
    const res = await new Browser().get(
      authorizeUrl(s, codeParams({ response_type: "token", scope: "bogus" }))
    )
    const location = res.headers.get("location") as string
    assert.match(location, /^https:\/\/app\.example\/cb#error=invalid_scope&/)
    assert.include(location, "state=s-123")
    assert.include(location, `iss=${encodeURIComponent(s.issuer)}`)
  })

  it("answers unauthorized_client for an application without implicit", async () => {
    const codeOnly = await createApp(s, { grantTypes: ["authorization_code"] })
    const res = await new Browser().get(
      authorizeUrl(s, {
        response_type: "token",
        client_id: codeOnly.appKey,
        redirect_uri: codeOnly.redirectUri,
        state: "q"
      })
    )
    assert.match(res.headers.get("location") as string, /#error=unauthorized_client&/)
  })

  it("never mints a code or opens a session on HEAD", async () => {
    const user = await createUser(s)
    const browser = new Browser()
    await authorizeAndAllow(s, browser, codeParams(), user)
    const before = browser.setCookieHeaders.length
    const head = await browser.get(authorizeUrl(s, codeParams()), { method: "HEAD" })
    assert.strictEqual(head.status, 200)
    assert.isNull(head.headers.get("location"))
    assert.strictEqual(browser.setCookieHeaders.length, before)
    assertPageHeaders(head)
  })

  it("sends no CORS headers", async () => {
    const res = await fetch(authorizeUrl(s, codeParams()), {
      method: "OPTIONS",
      headers: { origin: "https://evil.example" }
    })
    assert.isNull(res.headers.get("access-control-allow-origin"))
    const get = await new Browser({ origin: "https://evil.example" }).get(authorizeUrl(s, codeParams()))
    assert.isNull(get.headers.get("access-control-allow-origin"))
  })
})

describe("sign-in and consent pages", () => {
  it("shows a login page with labelled fields, a CSRF token and the security headers", async () => {
    const browser = new Browser()
    const res = await browser.get(authorizeUrl(s, codeParams()))
    assert.strictEqual(res.status, 200)
    assertPageHeaders(res)
    const csp = res.headers.get("content-security-policy") as string
    assert.include(csp, "form-action 'self' https://app.example")
    const html = await res.text()
    assert.include(html, '<label for="username">Username</label>')
    assert.include(html, '<label for="password">Password</label>')
    assert.include(html, ">Sign in</button>")
    assert.include(html, "Acme Notes")
    assert.include(html, 'class="layout-pc"')
    assert.notMatch(html, /(src|href)="https?:/)
    const form = forms(html)[0]
    assert.isDefined(form)
    assert.strictEqual(form?.action, "/oauth2/oauth2/login")
    assert.isString(form?.fields.csrf_token)
    assert.notInclude(html, "response_type")
    const cookie = browser.setCookieHeaders[0] as string
    assert.match(
      cookie,
      /^latchkey_session=[^;]+; Path=\/oauth2\/oauth2; HttpOnly; SameSite=Lax; Max-Age=\d+$/
    )
  })

  it("uses the mobile-first layout for client_type=Mobile", async () => {
    const res = await new Browser().get(authorizeUrl(s, codeParams({ client_type: "Mobile" })))
    assert.include(await res.text(), 'class="layout-mobile"')
  })

  it("signs in with a new session id, then shows consent, then Allow redirects with code, state and iss (303)", async () => {
    const user = await createUser(s)
    const browser = new Browser()
    const login = await signIn(s, browser, authorizeUrl(s, codeParams({ scope: "profile" })), user)
    assert.strictEqual(login.status, 303)
    const [first, second] = browser.setCookieHeaders
    assert.notStrictEqual(first?.split(";")[0], second?.split(";")[0])
    const page = await browser.get(originOf(s) + (login.headers.get("location") as string))
    assert.strictEqual(page.status, 200)
    assertPageHeaders(page)
    const html = await page.text()
    assert.include(html, ">Allow</button>")
    assert.include(html, ">Deny</button>")
    assert.include(html, "Acme Notes")
    assert.include(html, "Read your profile")
    assert.include(html, user.username)
    const consent = forms(html).find((f) => f.fields.switch_account === undefined)
    const allowed = await browser.post(originOf(s) + consent?.action, {
      ...consent?.fields,
      decision: "allow"
    })
    assert.strictEqual(allowed.status, 303)
    const location = new URL(allowed.headers.get("location") as string)
    assert.isString(location.searchParams.get("code"))
    assert.strictEqual(location.searchParams.get("state"), "s-123")
    assert.strictEqual(location.searchParams.get("iss"), s.issuer)
    // L4: the same consent form cannot be replayed
    const replay = await browser.post(originOf(s) + consent?.action, {
      ...consent?.fields,
      decision: "allow"
    })
    assert.strictEqual(replay.status, 403)
    assert.isNull(replay.headers.get("location"))
  })

  it("shows the same inline error for an unknown user and a wrong password", async () => {
    const user = await createUser(s)
    const wrong = await signIn(s, new Browser(), authorizeUrl(s, codeParams()), {
      ...user,
      password: "not the password"
    })
    const unknown = await signIn(s, new Browser(), authorizeUrl(s, codeParams()), {
      username: "ghost",
      password: "whatever1"
    })
    assert.strictEqual(wrong.status, 400)
    assert.strictEqual(unknown.status, 400)
    const a = await wrong.text()
    const b = await unknown.text()
    assert.include(a, 'role="alert"')
    assert.include(a, "Username or password is incorrect.")
    assert.include(b, "Username or password is incorrect.")
    assert.include(a, `value="${user.username}"`)
  })

  it("refuses a login POST without a CSRF token, with another session's token, or cross-site", async () => {
    const user = await createUser(s)
    const a = new Browser()
    const pageA = await a.get(authorizeUrl(s, codeParams()))
    const formA = forms(await pageA.text())[0]
    const noToken = await a.post(`${originOf(s)}/oauth2/oauth2/login`, {
      txn: formA?.fields.txn ?? "",
      ...user
    })
    assert.strictEqual(noToken.status, 403)
    assertPageHeaders(noToken)
    const b = new Browser()
    await b.get(authorizeUrl(s, codeParams()))
    const otherSession = await b.post(`${originOf(s)}/oauth2/oauth2/login`, { ...formA?.fields, ...user })
    assert.strictEqual(otherSession.status, 403)
    const c = new Browser()
    const pageC = await c.get(authorizeUrl(s, codeParams()))
    const formC = forms(await pageC.text())[0]
    const crossSite = await c.post(
      `${originOf(s)}/oauth2/oauth2/login`,
      { ...formC?.fields, ...user },
      {
        origin: "https://evil.example"
      }
    )
    assert.strictEqual(crossSite.status, 403)
    const fetchMeta = await c.post(
      `${originOf(s)}/oauth2/oauth2/login`,
      { ...formC?.fields, ...user },
      {
        "sec-fetch-site": "cross-site"
      }
    )
    assert.strictEqual(fetchMeta.status, 403)
    const noCookie = await new Browser().post(`${originOf(s)}/oauth2/oauth2/login`, {
      ...formC?.fields,
      ...user
    })
    assert.strictEqual(noCookie.status, 403)
  })

  it("accepts a same-origin post with Origin: null (Referrer-Policy no-referrer)", async () => {
    const user = await createUser(s)
    const browser = new Browser()
    const page = await browser.get(authorizeUrl(s, codeParams()))
    const form = forms(await page.text())[0]
    const res = await browser.post(
      `${originOf(s)}/oauth2/oauth2/login`,
      { ...form?.fields, ...user },
      {
        origin: "null",
        "sec-fetch-site": "same-origin"
      }
    )
    assert.strictEqual(res.status, 303)
  })

  it("Deny redirects with access_denied, state and iss", async () => {
    const user = await createUser(s)
    const browser = new Browser()
    const login = await signIn(s, browser, authorizeUrl(s, codeParams()), user)
    const page = await browser.get(originOf(s) + (login.headers.get("location") as string))
    const consent = forms(await page.text()).find((f) => f.fields.switch_account === undefined)
    const denied = await browser.post(originOf(s) + consent?.action, { ...consent?.fields, decision: "deny" })
    assert.strictEqual(denied.status, 303)
    const location = new URL(denied.headers.get("location") as string)
    assert.strictEqual(location.searchParams.get("error"), "access_denied")
    assert.strictEqual(location.searchParams.get("state"), "s-123")
    assert.strictEqual(location.searchParams.get("iss"), s.issuer)
    assert.isNull(location.searchParams.get("code"))
  })

  it("ignores tampered hidden fields: the stored request decides", async () => {
    const user = await createUser(s)
    const browser = new Browser()
    const login = await signIn(s, browser, authorizeUrl(s, codeParams({ scope: "profile" })), user)
    const page = await browser.get(originOf(s) + (login.headers.get("location") as string))
    const consent = forms(await page.text()).find((f) => f.fields.switch_account === undefined)
    const allowed = await browser.post(originOf(s) + consent?.action, {
      ...consent?.fields,
      decision: "allow",
      scope: "email,profile",
      redirect_uri: "https://evil.example/cb",
      client_id: "other"
    })
    const location = new URL(allowed.headers.get("location") as string)
    assert.strictEqual(location.origin, "https://app.example")
    const tokens = await tokenRequest(s, app, {
      grant_type: "authorization_code",
      code: location.searchParams.get("code") as string,
      redirect_uri: app.redirectUri
    })
    assert.strictEqual(((await tokens.json()) as { scope: string }).scope, "profile")
  })

  it("refuses a consent POST without a token or cross-site", async () => {
    const user = await createUser(s)
    const browser = new Browser()
    const login = await signIn(s, browser, authorizeUrl(s, codeParams()), user)
    const page = await browser.get(originOf(s) + (login.headers.get("location") as string))
    const consent = forms(await page.text()).find((f) => f.fields.switch_account === undefined)
    const noToken = await browser.post(originOf(s) + consent?.action, {
      txn: consent?.fields.txn ?? "",
      decision: "allow"
    })
    assert.strictEqual(noToken.status, 403)
    assert.isNull(noToken.headers.get("location"))
    const crossSite = await browser.post(
      originOf(s) + consent?.action,
      { ...consent?.fields, decision: "allow" },
      {
        origin: "https://evil.example"
      }
    )
    assert.strictEqual(crossSite.status, 403)
  })

  it("remembers consent: the next authorization skips the page (302)", async () => {
    const user = await createUser(s)
    const browser = new Browser()
    await authorizeAndAllow(s, browser, codeParams(), user)
    const again = await browser.get(authorizeUrl(s, codeParams({ state: "second" })))
    assert.strictEqual(again.status, 302)
    const location = new URL(again.headers.get("location") as string)
    assert.isString(location.searchParams.get("code"))
    assert.strictEqual(location.searchParams.get("state"), "second")
    // a narrower request is covered too; an unregistered redirect URI still gets the error page
    const narrower = await browser.get(authorizeUrl(s, codeParams({ scope: "email" })))
    assert.strictEqual(narrower.status, 302)
    const evil = await browser.get(authorizeUrl(s, codeParams({ redirect_uri: "https://evil.example/cb" })))
    assert.strictEqual(evil.status, 400)
    assert.isNull(evil.headers.get("location"))
  })

  it("lets the user switch account from the consent page", async () => {
    const user = await createUser(s)
    const browser = new Browser()
    const login = await signIn(s, browser, authorizeUrl(s, codeParams()), user)
    const page = await browser.get(originOf(s) + (login.headers.get("location") as string))
    const switcher = forms(await page.text()).find((f) => f.fields.switch_account !== undefined)
    const res = await browser.post(originOf(s) + switcher?.action, { ...switcher?.fields })
    assert.strictEqual(res.status, 303)
    const next = await browser.get(originOf(s) + (res.headers.get("location") as string))
    assert.include(await next.text(), ">Sign in</button>")
  })

  it("delivers implicit tokens in the fragment, without a refresh token", async () => {
    const user = await createUser(s)
    const location = await authorizeAndAllow(s, new Browser(), codeParams({ response_type: "token" }), user)
    assert.match(location, /^https:\/\/app\.example\/cb#access_token=/)
    assert.notInclude(location, "?")
    const fragment = new URLSearchParams(location.split("#")[1])
    assert.strictEqual(fragment.get("token_type"), "Bearer")
    assert.strictEqual(fragment.get("expires_in"), "3600")
    assert.strictEqual(fragment.get("scope"), "email,profile")
    assert.strictEqual(fragment.get("state"), "s-123")
    assert.strictEqual(fragment.get("iss"), s.issuer)
    assert.isNull(fragment.get("refresh_token"))
    const me = await fetch(`${s.base}/api/me`, {
      headers: { authorization: `Bearer ${fragment.get("access_token")}` }
    })
    assert.strictEqual(me.status, 200)
  })

  it("answers 405 to other methods on the pages", async () => {
    const res = await fetch(`${s.base}/oauth2/oauth2/login`, { redirect: "manual" })
    assert.strictEqual(res.status, 405)
    assert.strictEqual(res.headers.get("allow"), "POST")
    const put = await fetch(authorizeUrl(s, codeParams()), { method: "PUT" })
    assert.strictEqual(put.status, 405)
  })

  it("refuses a page form that is not urlencoded or repeats a field", async () => {
    const browser = new Browser()
    const page = await browser.get(authorizeUrl(s, codeParams()))
    const form = forms(await page.text())[0]
    const json = await fetch(`${originOf(s)}/oauth2/oauth2/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(form?.fields)
    })
    assert.strictEqual(json.status, 400)
    const repeated = await postForm(`${originOf(s)}/oauth2/oauth2/login`, "txn=a&txn=b")
    assert.strictEqual(repeated.status, 400)
  })
})

describe("sign-in throttling", () => {
  it("answers 429 with Retry-After once too many sign-ins failed; the password grant keeps its own budget per application", async () => {
    const t = await startServer({
      throttle: {
        ...Throttle.defaultPolicy,
        freeFailures: 2,
        addressFreeFailures: 50,
        baseLockout: 60,
        maxLockout: 60,
        window: 600
      }
    })
    try {
      const a = await createApp(t)
      const user = await createUser(t)
      const url = authorizeUrl(t, { response_type: "code", client_id: a.appKey, redirect_uri: a.redirectUri })
      for (const wrong of ["wrong-1-password", "wrong-2-password", "wrong-3-password"]) {
        const res = await signIn(t, new Browser(), url, { ...user, password: wrong })
        assert.strictEqual(res.status, 400)
      }
      const limited = await signIn(t, new Browser(), url, user)
      assert.strictEqual(limited.status, 429)
      assert.isNotNull(limited.headers.get("retry-after"))
      assert.include(await limited.text(), "Too many attempts")
      // failures on the page cannot refuse the application's password grant
      const grant = await tokenRequest(t, a, { grant_type: "password", ...user })
      assert.strictEqual(grant.status, 200)
      for (const wrong of ["wrong-4-password", "wrong-5-password", "wrong-6-password"]) {
        const res = await tokenRequest(t, a, {
          grant_type: "password",
          username: user.username,
          password: wrong
        })
        assert.strictEqual(res.status, 400)
      }
      const limitedGrant = await tokenRequest(t, a, { grant_type: "password", ...user })
      assert.strictEqual(limitedGrant.status, 429)
      assert.isNotNull(limitedGrant.headers.get("retry-after"))
    } finally {
      await t.close()
    }
  })
})

describe("under an https issuer", () => {
  it("marks the session cookie Secure and sends HSTS", async () => {
    const t = await startServer({ issuer: "https://auth.example" })
    try {
      const a = await createApp(t)
      const browser = new Browser()
      const res = await browser.get(
        authorizeUrl(t, { response_type: "code", client_id: a.appKey, redirect_uri: a.redirectUri })
      )
      assert.strictEqual(res.status, 200)
      assert.match(browser.setCookieHeaders[0] as string, /; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/)
      assert.match(res.headers.get("strict-transport-security") as string, /^max-age=31536000/)
    } finally {
      await t.close()
    }
  })

  it("sends no HSTS under an http issuer", async () => {
    const res = await new Browser().get(authorizeUrl(s, codeParams()))
    assert.isNull(res.headers.get("strict-transport-security"))
    assert.notInclude(res.headers.get("set-cookie") ?? "", "Secure")
  })
})

describe("mounted under a path prefix", () => {
  it("serves every endpoint and page below the prefix", async () => {
    const t = await startServer({ prefix: "/auth" })
    try {
      const a = await createApp(t)
      const user = await createUser(t)
      const metadata = await fetch(`${t.base}/.well-known/oauth-authorization-server`)
      const doc = (await metadata.json()) as Record<string, string>
      assert.strictEqual(doc.issuer, t.issuer)
      assert.strictEqual(doc.token_endpoint, `${t.issuer}/oauth2/oauth2/token`)
      const browser = new Browser()
      const page = await browser.get(
        authorizeUrl(t, { response_type: "code", client_id: a.appKey, redirect_uri: a.redirectUri })
      )
      assert.strictEqual(forms(await page.text())[0]?.action, "/auth/oauth2/oauth2/login")
      assert.match(browser.setCookieHeaders[0] as string, /Path=\/auth\/oauth2\/oauth2;/)
      const location = await authorizeAndAllow(
        t,
        new Browser(),
        { response_type: "code", client_id: a.appKey, redirect_uri: a.redirectUri },
        user
      )
      const res = await tokenRequest(t, a, {
        grant_type: "authorization_code",
        code: new URL(location).searchParams.get("code") as string,
        redirect_uri: a.redirectUri
      })
      assert.strictEqual(res.status, 200)
      const root = await postForm(
        `${originOf(t)}/oauth2/oauth2/token`,
        { grant_type: "client_credentials" },
        {
          authorization: basic(a.appKey, a.appSecret)
        }
      )
      assert.strictEqual(root.status, 404)
    } finally {
      await t.close()
    }
  })
})
