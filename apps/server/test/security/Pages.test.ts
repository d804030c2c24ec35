/**
 * docs/security.md: catalogue rows L1–L10 and checklist U1–U9: the sign-in and
 * consent pages — CSRF bound to the session and the pending authorization,
 * cross-site posts refused, session fixation, cookie attributes, framing and
 * caching headers, escaping, 303 after a POST, no user enumeration, one
 * throttle budget with the password grant, and Deny; and the same defences on
 * the consents page, where a user withdraws what they allowed.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Accounts, Admin } from "@latchkey/core"
import { ScryptHasher } from "@latchkey/node"
import { ManagedRuntime } from "effect"
import { pino } from "pino"
import * as App from "../../src/App.js"
import * as Env from "../../src/Env.js"
import * as Services from "../../src/Services.js"
import { launchChromium } from "../chromium.js"
import { Browser, formOf, tempDir } from "../helpers.js"
import {
  assertErrorPage,
  assertRedirect,
  assertRedirectError,
  authorizePath,
  authorizeUrl,
  get,
  signIn
} from "./browse.js"
import { type Client, cb, post, read, type Stack, startStack, token } from "./harness.js"

const loginPath = "/oauth2/oauth2/login"
const consentsPath = "/oauth2/oauth2/consents"

let s: Stack

/** A second App whose issuer is https (served over plain http on 127.0.0.1, as behind a TLS proxy). */
interface HttpsApp {
  readonly base: string
  readonly appKey: string
  readonly close: () => Promise<void>
}
let secure: HttpsApp

const startHttpsApp = async (): Promise<HttpsApp> => {
  const { dir, cleanup } = tempDir()
  const issuer = "https://login.example"
  const env = Env.read({ LATCHKEY_DB: join(dir, "https.sqlite"), PORT: "0" })
  const log = pino({ level: "silent" })
  const runtime = ManagedRuntime.make(
    Services.layer(env, issuer, log, { hasher: ScryptHasher.layer({ N: 1024, r: 8, p: 1 }) })
  )
  await runtime.runtime()
  const server = createServer(App.make({ runtime, issuer, log, scopeDescriptions: {}, trustProxy: false }))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { app } = await runtime.runPromise(
    Admin.createApplication({ name: "Secure Notes", redirectUris: [cb], scope: "read" })
  )
  await runtime.runPromise(Accounts.createUser("alice", "alice-https-password"))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    appKey: app.appKey,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await runtime.dispose()
      cleanup()
    }
  }
}

beforeAll(async () => {
  // small limits for the shared-budget rows; the address budget stays out of the way
  s = await startStack({
    throttle: { freeFailures: 3, addressFreeFailures: 1000, baseLockout: 300, maxLockout: 300 }
  })
  secure = await startHttpsApp()
})

afterAll(async () => {
  await s?.close()
  await secure?.close()
})

/** A fresh application, so alice has never consented to it. */
const freshClient = (name = "Fresh App"): Promise<Client> => s.client({ name })

/** A browser signed in as alice and looking at the consent page of `url`; returns the consent form. */
const atConsent = async (url: string, browser = new Browser()) => {
  const signedIn = await signIn(s, browser, url)
  assert.strictEqual(signedIn.status, 303)
  const page = await browser.fetch(s.base + (signedIn.headers.get("location") as string))
  assert.strictEqual(page.status, 200)
  const html = await page.text()
  return { browser, page, html, form: formOf(html) }
}

/** Another consent page in the same session (a second tab). */
const consentAgain = async (browser: Browser, url: string) => {
  const page = await browser.fetch(url)
  assert.strictEqual(page.status, 200)
  return formOf(await page.text())
}

/** Whether alice has consented to `client` (a valid request would then go straight back). */
const consented = async (browser: Browser, client: Client): Promise<boolean> => {
  const res = await browser.fetch(authorizeUrl(s, { response_type: "code" }, client))
  return res.status === 302
}

const assertForbidden = async (res: Response) => {
  const html = await assertErrorPage(res, "access_denied", 403)
  assert.include(html, "This form has expired")
}

/** The hardening headers of every page (docs/security.md, the pages' defences). */
const assertPageHeaders = (res: Response) => {
  assert.strictEqual(res.headers.get("x-frame-options"), "DENY")
  assert.include(res.headers.get("content-security-policy") ?? "", "frame-ancestors 'none'")
  assert.strictEqual(res.headers.get("referrer-policy"), "no-referrer")
  assert.include(res.headers.get("cache-control") ?? "", "no-store")
}

/** The session cookie set by a response: value and attributes. */
const sessionCookie = (res: Response) => {
  const line = res.headers.getSetCookie().find((c) => c.startsWith("latchkey_session=")) ?? ""
  const [pair, ...attrs] = line.split(";").map((p) => p.trim())
  return { value: (pair ?? "").slice("latchkey_session=".length), attrs: attrs.map((a) => a.toLowerCase()) }
}

/** Login, consent and three error pages (400, 403, 405). */
const everyPage = async (): Promise<ReadonlyArray<readonly [string, Response, string]>> => {
  const client = await freshClient("Header Check")
  const login = await get(authorizeUrl(s, { response_type: "code" }, client))
  const { page: consent } = await atConsent(authorizeUrl(s, { response_type: "code" }, client))
  const bad = await get(authorizeUrl(s, { response_type: "code", redirect_uri: "https://evil.example/" }))
  const forbidden = await fetch(s.base + loginPath, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "txn=x&csrf_token=y",
    redirect: "manual"
  })
  const method = await get(s.base + loginPath)
  const consentsSignedOut = await get(s.base + consentsPath)
  const consentsSignedIn = await (
    await atConsent(authorizeUrl(s, { response_type: "code" }, client))
  ).browser.fetch(s.base + consentsPath)
  const pages: Array<readonly [string, Response, string]> = []
  for (const [name, res] of [
    ["login", login],
    ["consent", consent],
    ["error 400", bad],
    ["error 403", forbidden],
    ["error 405", method],
    ["consents, signed out", consentsSignedOut],
    ["consents, signed in", consentsSignedIn]
  ] as const) {
    pages.push([name, res, consent === res ? "" : await res.text()])
  }
  return pages
}

describe("L — login and consent pages (docs/security.md, catalogue L)", () => {
  it("L1: login POST without a CSRF token, with a wrong one, or with another session's → 403, not signed in", async () => {
    const url = authorizeUrl(s, { response_type: "code", state: "l1" })
    const mine = new Browser()
    const form = formOf(await (await mine.fetch(url)).text())
    const creds = { username: s.alice.username, password: s.alice.password }
    await assertForbidden(
      await mine.postForm(s.base + loginPath, { txn: form.fields.txn as string, ...creds })
    )
    await assertForbidden(
      await mine.postForm(s.base + loginPath, { ...form.fields, csrf_token: "A".repeat(43), ...creds })
    )
    const other = new Browser()
    const theirs = formOf(await (await other.fetch(url)).text())
    await assertForbidden(await mine.postForm(s.base + loginPath, { ...theirs.fields, ...creds }))
    // no cookie at all
    await assertForbidden(await new Browser().postForm(s.base + loginPath, { ...form.fields, ...creds }))
    // still signed out: the authorize page is the sign-in page again
    const after = await mine.fetch(url)
    assert.strictEqual(after.status, 200)
    assert.include(await after.text(), "Sign in</h1>")
  })

  it("L2: consent POST without a token, with another pending request's token, or from a cross-site Origin → 403, no code", async () => {
    const client = await freshClient("L2 App")
    const url = authorizeUrl(s, { response_type: "code", state: "l2" }, client)
    const { browser, form } = await atConsent(url)
    const second = await consentAgain(browser, url)
    const allow = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      browser.fetch(s.base + form.action, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams({ ...fields, decision: "allow" }).toString()
      })
    await assertForbidden(await allow({ txn: form.fields.txn as string }))
    await assertForbidden(
      await allow({ txn: form.fields.txn as string, csrf_token: second.fields.csrf_token as string })
    )
    await assertForbidden(await allow(second.fields, { origin: "https://evil.example" }))
    const third = await consentAgain(browser, url)
    await assertForbidden(await allow(third.fields, { "sec-fetch-site": "cross-site" }))
    assert.isFalse(await consented(browser, client))
  })

  it("L3: tampered hidden fields (scope, client_id, redirect_uri, response_type, state) are ignored — the stored request is used", async () => {
    const client = await freshClient("L3 App")
    const { browser, form } = await atConsent(
      authorizeUrl(s, { response_type: "code", scope: "read", state: "l3" }, client)
    )
    const res = await browser.postForm(s.base + form.action, {
      ...form.fields,
      decision: "allow",
      scope: "read,write,admin",
      client_id: s.B.appKey,
      redirect_uri: "https://evil.example/cb",
      response_type: "token",
      state: "evil"
    })
    const p = assertRedirect(res, { status: 303 })
    assert.strictEqual(p.get("state"), "l3")
    const redeemed = await read(
      await token(
        s,
        { grant_type: "authorization_code", code: p.get("code") as string, redirect_uri: cb },
        client
      )
    )
    assert.strictEqual(redeemed.status, 200)
    assert.strictEqual(redeemed.body.scope, "read")
  })

  it("L4: the same consent POST replayed → the second is 403 (one code only)", async () => {
    const client = await freshClient("L4 App")
    const { browser, form } = await atConsent(authorizeUrl(s, { response_type: "code", state: "l4" }, client))
    const fields = { ...form.fields, decision: "allow" }
    assertRedirect(await browser.postForm(s.base + form.action, fields), { status: 303 })
    await assertForbidden(await browser.postForm(s.base + form.action, fields))
  })

  it("L5: login, consent and error pages send X-Frame-Options DENY, CSP frame-ancestors 'none', Cache-Control no-store, Referrer-Policy no-referrer", async () => {
    for (const [name, res] of await everyPage()) {
      try {
        assertPageHeaders(res)
      } catch (e) {
        throw new Error(`${name}: ${String(e)}`)
      }
    }
  })

  it("L6: a successful sign-in answers 303 (never 307/308), to a same-origin path", async () => {
    const res = await signIn(s, new Browser(), authorizeUrl(s, { response_type: "code", state: "l6" }))
    assert.strictEqual(res.status, 303)
    assert.notInclude([307, 308], res.status)
    assert.isTrue((res.headers.get("location") ?? "").startsWith(`${authorizePath}?`))
  })

  it("L7 (Secure only under an https issuer, docs/security.md): the session cookie changes at sign-in, is HttpOnly and SameSite=Lax; the old id is dead", async () => {
    const browser = new Browser()
    const url = authorizeUrl(s, { response_type: "code", state: "l7" })
    const page = await browser.fetch(url)
    const before = sessionCookie(page)
    assert.isNotEmpty(before.value)
    const form = formOf(await page.text())
    const res = await browser.postForm(s.base + form.action, { ...form.fields, ...s.alice })
    const after = sessionCookie(res)
    assert.isNotEmpty(after.value)
    assert.notStrictEqual(after.value, before.value)
    assert.notStrictEqual(after.value.split(".")[0], before.value.split(".")[0])
    for (const c of [before, after]) {
      assert.include(c.attrs, "httponly")
      assert.include(c.attrs, "samesite=lax")
      assert.notInclude(c.attrs, "secure")
    }
    // the pre-login cookie (a fixated session) is not signed in
    const fixated = new Browser()
    fixated.cookies.set("latchkey_session", before.value)
    const again = await fixated.fetch(url)
    assert.include(await again.text(), "Sign in</h1>")
  })

  it("L8: next=https://evil.example, //evil.example, /\\evil.example, javascript: (query or form) → stays on-origin", async () => {
    for (const next of ["https://evil.example", "//evil.example", "/\\evil.example", "javascript:alert(1)"]) {
      const browser = new Browser()
      const url = authorizeUrl(s, { response_type: "code", state: "l8", next })
      const res = await signIn(s, browser, url, s.alice, { next, return_to: next })
      assert.strictEqual(res.status, 303)
      const location = res.headers.get("location") ?? ""
      assert.isTrue(location.startsWith(`${authorizePath}?`), location)
      assert.strictEqual(new URL(location, s.base).origin, s.base)
      const back = await browser.fetch(s.base + location)
      // alice may have consented already (302) or sees the consent page (200); never elsewhere
      if (back.status === 302) assertRedirect(back)
      else assert.strictEqual(back.status, 200)
    }
  })

  it("L9: wrong password and unknown user get the same status and page; both count against the username", async () => {
    await s.runtime.runPromise(Accounts.createUser("dave", "dave-correct-password"))
    const attempt = async (username: string, password: string) => {
      const res = await signIn(s, new Browser(), authorizeUrl(s, { response_type: "code" }), {
        username,
        password
      })
      const html = (await res.text())
        .replace(/name="(txn|csrf_token)" value="[^"]*"/g, 'name="$1" value=""')
        .replace(/ value="[^"]*" aria-invalid/, ' value="" aria-invalid')
      return { status: res.status, location: res.headers.get("location"), html }
    }
    const wrong = await attempt("dave", "not-daves-password")
    const unknown = await attempt("nobody-l9", "not-daves-password")
    assert.strictEqual(wrong.status, 400)
    assert.strictEqual(unknown.status, wrong.status)
    assert.isNull(wrong.location)
    assert.isNull(unknown.location)
    assert.include(wrong.html, "Username or password is incorrect.")
    assert.strictEqual(unknown.html, wrong.html)
  })

  it("L9/B5: the sign-in page locks after its budget (3 failures) and then refuses the right password; the password grant keeps its own budget", async () => {
    await s.runtime.runPromise(Accounts.createUser("erin", "erin-correct-password"))
    const page = (password: string) =>
      signIn(s, new Browser(), authorizeUrl(s, { response_type: "code" }), { username: "erin", password })
    const grant = (password: string) => token(s, { grant_type: "password", username: "erin", password })
    for (const pw of ["wrong-1", "wrong-2", "wrong-3"]) assert.strictEqual((await page(pw)).status, 400)
    // the 4th failure (the budget is 3) starts the lockout
    assert.strictEqual((await page("wrong-4")).status, 400)
    const lockedPage = await page("erin-correct-password")
    await assertErrorPage(lockedPage, "temporarily_unavailable", 429)
    assert.isNotNull(lockedPage.headers.get("retry-after"))
    assertPageHeaders(lockedPage)
    // failures on the page do not refuse the application's password grant
    assert.strictEqual((await read(await grant("erin-correct-password"))).status, 200)
    for (const pw of ["wrong-5", "wrong-6", "wrong-7", "wrong-8"]) {
      assert.strictEqual((await read(await grant(pw))).body.error, "invalid_grant")
    }
    const locked = await read(await grant("erin-correct-password"))
    assert.strictEqual(locked.status, 429)
    assert.strictEqual(locked.body.error, "temporarily_unavailable")
    assert.isNotNull(locked.res.headers.get("retry-after"))
  })

  it("L10: Deny → 303 redirect-err access_denied with state to the validated redirect_uri; no code, no consent", async () => {
    const client = await freshClient("L10 App")
    const url = authorizeUrl(s, { response_type: "code", state: "l10 &x" }, client)
    const { browser, form } = await atConsent(url)
    const denied = await browser.postForm(s.base + form.action, { ...form.fields, decision: "deny" })
    assertRedirectError(denied, "access_denied", { status: 303, state: "l10 &x", issuer: s.base })
    assert.isFalse(await consented(browser, client))
    // implicit: Deny goes in the fragment
    const implicit = await consentAgain(
      browser,
      authorizeUrl(s, { response_type: "token", state: "l10i" }, client)
    )
    const deniedImplicit = await browser.postForm(s.base + form.action, {
      ...implicit.fields,
      decision: "deny"
    })
    assertRedirectError(deniedImplicit, "access_denied", { status: 303, fragment: true, state: "l10i" })
  })
})

describe("U — CSRF, clickjacking and headers (docs/security.md, checklist U)", () => {
  it("U1: the consent token is bound to the session and the pending request; foreign Origin → 403 on consent and sign-in", async () => {
    const client = await freshClient("U1 App")
    const url = authorizeUrl(s, { response_type: "code", state: "u1" }, client)
    const { browser, form } = await atConsent(url)
    // another session's valid consent form
    const { browser: other, form: otherForm } = await atConsent(url)
    await assertForbidden(
      await browser.postForm(s.base + form.action, { ...otherForm.fields, decision: "allow" })
    )
    // a sign-in form (another browser's) does not continue this consent
    const login = formOf(await (await new Browser().fetch(url)).text())
    await assertForbidden(
      await browser.postForm(s.base + form.action, { ...login.fields, decision: "allow" })
    )
    // a foreign Origin on the sign-in form
    const anon = new Browser()
    const signInForm = formOf(await (await anon.fetch(url)).text())
    await assertForbidden(
      await anon.fetch(s.base + loginPath, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example" },
        body: new URLSearchParams({ ...signInForm.fields, ...s.alice }).toString()
      })
    )
    assert.isFalse(await consented(browser, client))
    // the right session with its own form (and Origin: null, as sent under no-referrer) succeeds
    const ok = await browser.fetch(s.base + form.action, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "null" },
      body: new URLSearchParams({ ...form.fields, decision: "allow" }).toString()
    })
    assertRedirect(ok, { status: 303 })
    assert.isTrue(await consented(other, client))
  })

  it("U2: state=a%26code%3Devil%23x comes back byte-for-byte with exactly one code=, on success and on error redirects", async () => {
    const client = await freshClient("U2 App")
    const q = (extra: string) =>
      authorizeUrl(
        s,
        `client_id=${client.appKey}&redirect_uri=${encodeURIComponent(cb)}&state=a%26code%3Devil%23x&${extra}`
      )
    const { browser, form } = await atConsent(q("response_type=code"))
    const ok = await browser.postForm(s.base + form.action, { ...form.fields, decision: "allow" })
    const location = ok.headers.get("location") ?? ""
    assert.include(location, "state=a%26code%3Devil%23x")
    assert.strictEqual(location.match(/[?&]code=/g)?.length, 1)
    assert.strictEqual(assertRedirect(ok, { status: 303 }).get("state"), "a&code=evil#x")
    const err = await get(q("response_type=code&scope=bogus"))
    assert.include(err.headers.get("location") ?? "", "state=a%26code%3Devil%23x")
    assert.notInclude(err.headers.get("location") ?? "", "code=")
    const again = await browser.fetch(q("response_type=code"))
    assert.include(again.headers.get("location") ?? "", "state=a%26code%3Devil%23x")
  })

  it("U3: authorize, login, consent and error pages send X-Frame-Options DENY and CSP frame-ancestors 'none'", async () => {
    for (const [name, res] of await everyPage()) {
      assert.strictEqual(res.headers.get("x-frame-options"), "DENY", name)
      assert.match(
        res.headers.get("content-security-policy") ?? "",
        /(^|;\s*)frame-ancestors 'none'(;|$)/,
        name
      )
    }
  })

  it("U3: Chromium refuses to render the sign-in page in an iframe from another origin", async () => {
    const target = authorizeUrl(s, { response_type: "code", state: "u3" })
    const framer: Server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      res.end(
        `<!doctype html><title>Framer</title><p id="m">framer</p>` +
          `<iframe id="victim" src="${target.replace(/&/g, "&amp;")}"></iframe>` +
          `<iframe id="control" src="${s.base}/healthz"></iframe>`
      )
    })
    await new Promise<void>((resolve) => framer.listen(0, "127.0.0.1", resolve))
    const browser = await launchChromium({ timeout: 10_000 })
    try {
      const page = await browser.newPage()
      const served = page.waitForResponse((r) => r.url().includes(authorizePath), { timeout: 5_000 })
      await page.goto(`http://127.0.0.1:${(framer.address() as AddressInfo).port}/`, { timeout: 5_000 })
      // the server did answer the framed request; the browser then blocked it
      const response = await served
      assert.strictEqual(response.status(), 200)
      assert.strictEqual(response.headers()["x-frame-options"], "DENY")
      // The page's load event waits for every frame, the refused one's error page included
      await page.waitForLoadState("load")
      const contents = await Promise.all(page.frames().map((f) => f.content().catch(() => "")))
      assert.isTrue(
        contents.some((c) => c.includes('"status":"ok"')),
        "control iframe from the same server renders"
      )
      assert.isFalse(
        contents.some((c) => c.includes("Sign in</h1>")),
        "the sign-in page must not render in a frame"
      )
    } finally {
      await browser.close()
      framer.closeAllConnections()
      await new Promise<void>((resolve) => framer.close(() => resolve()))
    }
  }, 20_000)

  it("U4: sign-in, Allow, Deny and switch-account POSTs answer 303, never 307/308", async () => {
    const client = await freshClient("U4 App")
    const url = authorizeUrl(s, { response_type: "code" }, client)
    const browser = new Browser()
    const signedIn = await signIn(s, browser, url)
    assert.strictEqual(signedIn.status, 303)
    const html = await (await browser.fetch(s.base + (signedIn.headers.get("location") as string))).text()
    const switchForm = formOf(html, false)
    assert.strictEqual(switchForm.fields.switch_account, "1")
    const deny = formOf(await (await browser.fetch(url)).text())
    assert.strictEqual(
      (await browser.postForm(s.base + deny.action, { ...deny.fields, decision: "deny" })).status,
      303
    )
    const allow = formOf(await (await browser.fetch(url)).text())
    assert.strictEqual(
      (await browser.postForm(s.base + allow.action, { ...allow.fields, decision: "allow" })).status,
      303
    )
    const switched = await browser.postForm(s.base + switchForm.action, switchForm.fields)
    assert.strictEqual(switched.status, 303)
  })

  it("U5: Referrer-Policy no-referrer, and no off-origin src/href on login, consent and error pages", async () => {
    for (const [name, res, body] of await everyPage()) {
      assert.strictEqual(res.headers.get("referrer-policy"), "no-referrer", name)
      const html = body === "" ? "" : body
      assert.notMatch(html, /\s(src|href|action)="(https?:)?\/\//i, name)
      assert.include(res.headers.get("content-security-policy") ?? "", "default-src 'none'", name)
    }
    const { html } = await atConsent(authorizeUrl(s, { response_type: "code" }, await freshClient("U5 App")))
    assert.notMatch(html, /\s(src|href)="(https?:)?\/\//i)
    assert.include(html, '<meta name="referrer" content="no-referrer">')
  })

  it("U6: OPTIONS on authorize and login with Origin: https://evil → no Access-Control-Allow-Origin", async () => {
    for (const path of [authorizePath, loginPath]) {
      const res = await fetch(`${s.base}${path}`, {
        method: "OPTIONS",
        headers: { origin: "https://evil", "access-control-request-method": "POST" },
        redirect: "manual"
      })
      assert.isNull(res.headers.get("access-control-allow-origin"), path)
      assert.notStrictEqual(res.status, 204)
    }
  })

  it("U7: the consent page names the application and every scope with its description; remembered consent + unregistered redirect_uri → err-page", async () => {
    const client = await s.client({ name: "Acme Notes U7" })
    const { browser, form, html } = await atConsent(
      authorizeUrl(s, { response_type: "code", scope: "read,write" }, client)
    )
    assert.include(html, "Acme Notes U7")
    for (const text of [
      "read",
      "write",
      "Read your data",
      "Change your data",
      "Allow</button>",
      "Deny</button>"
    ])
      assert.include(html, text)
    assertRedirect(await browser.postForm(s.base + form.action, { ...form.fields, decision: "allow" }), {
      status: 303
    })
    assert.isTrue(await consented(browser, client))
    await assertErrorPage(
      await browser.fetch(
        authorizeUrl(s, { response_type: "code", redirect_uri: "https://evil.example/cb" }, client)
      )
    )
  })

  it("U8: the session id is regenerated at sign-in; cookie HttpOnly, SameSite=Lax, and Secure when the issuer is https; pages no-store", async () => {
    const browser = new Browser()
    const url = `${secure.base}${authorizePath}?${new URLSearchParams({
      client_id: secure.appKey,
      redirect_uri: cb,
      response_type: "code",
      state: "u8"
    })}`
    const page = await browser.fetch(url)
    assert.strictEqual(page.status, 200)
    assertPageHeaders(page)
    const before = sessionCookie(page)
    const form = formOf(await page.text())
    const signedIn = await browser.postForm(secure.base + form.action, {
      ...form.fields,
      username: "alice",
      password: "alice-https-password"
    })
    assert.strictEqual(signedIn.status, 303)
    const after = sessionCookie(signedIn)
    assert.notStrictEqual(after.value, before.value)
    for (const c of [before, after]) {
      assert.include(c.attrs, "httponly")
      assert.include(c.attrs, "samesite=lax")
      assert.include(c.attrs, "secure")
      assert.include(c.attrs, "path=/oauth2/oauth2")
    }
    assert.isNotNull(page.headers.get("strict-transport-security"))
    const consent = await browser.fetch(secure.base + (signedIn.headers.get("location") as string))
    assert.strictEqual(consent.status, 200)
    assertPageHeaders(consent)
  })

  it("U9: every reflected value is HTML-escaped: application name, username, error description", async () => {
    const evilName = `<img src=x onerror=alert(1)>"'`
    const client = await s.client({ name: evilName })
    const url = authorizeUrl(s, { response_type: "code" }, client)
    const login = await (await get(url)).text()
    assert.notInclude(login, "<img src=x")
    assert.include(login, "&lt;img src=x onerror=alert(1)&gt;&quot;&#39;")
    const evilUser = `"><script>alert(1)</script>`
    const failed = await signIn(s, new Browser(), url, { username: evilUser, password: "wrong-password" })
    const failedHtml = await failed.text()
    assert.strictEqual(failed.status, 400)
    assert.notInclude(failedHtml, "<script>alert(1)")
    assert.include(failedHtml, 'value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"')
    const { html: consentHtml } = await atConsent(url)
    assert.notInclude(consentHtml, "<img src=x")
    assert.include(consentHtml, "&lt;img src=x onerror=alert(1)&gt;")
    const evil = encodeURIComponent("<script>alert(1)</script>")
    const errorHtml = await assertErrorPage(
      await get(authorizeUrl(s, `client_id=${evil}&${evil}=1&${evil}=2`))
    )
    assert.notInclude(errorHtml, "<script>alert(1)")
    assert.include(errorHtml, "&lt;script&gt;alert(1)&lt;/script&gt;")
  })
})

describe("the consents page (docs/pages.md): the pages' defences, and Withdraw revokes", () => {
  /** alice signed in, with consent given to a fresh client; returns her browser and the client. */
  const consentedTo = async (name: string) => {
    const client = await freshClient(name)
    const { browser, form } = await atConsent(authorizeUrl(s, { response_type: "code" }, client))
    const allowed = await browser.postForm(s.base + form.action, { ...form.fields, decision: "allow" })
    return { browser, client, code: assertRedirect(allowed, { status: 303 }).get("code") as string }
  }
  /** The Withdraw form of `client` on the consents page. */
  const withdrawForm = async (browser: Browser, client: Client) => {
    const html = await (await browser.fetch(s.base + consentsPath)).text()
    for (const m of html.matchAll(/<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)) {
      const fields = Object.fromEntries(
        [...(m[2] as string).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((i) => [
          i[1] as string,
          (i[2] as string).replace(/&amp;/g, "&")
        ])
      )
      if (fields.app_key === client.appKey) return { action: (m[1] as string).replace(/&amp;/g, "&"), fields }
    }
    throw new Error(`no Withdraw form for ${client.appKey}`)
  }

  it("a withdraw POST without a token, with another session's form, or cross-site → 403 and the consent stays", async () => {
    const { browser, client } = await consentedTo("Withdraw CSRF App")
    const form = await withdrawForm(browser, client)
    const post = (b: Browser, fields: Record<string, string>, headers: Record<string, string> = {}) =>
      b.fetch(s.base + form.action, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams(fields).toString()
      })
    await assertForbidden(await post(browser, { action: "withdraw", app_key: client.appKey }))
    await assertForbidden(await post(new Browser(), form.fields))
    await assertForbidden(
      await post(browser, (await withdrawForm(browser, client)).fields, { origin: "https://evil.example" })
    )
    await assertForbidden(
      await post(browser, (await withdrawForm(browser, client)).fields, { "sec-fetch-site": "cross-site" })
    )
    // a consents page ticket does not continue the authorize flow (nor the sign-in form)
    const ticket = (await withdrawForm(browser, client)).fields
    await assertForbidden(await browser.postForm(s.base + authorizePath, { ...ticket, decision: "allow" }))
    const another = (await withdrawForm(browser, client)).fields
    await assertForbidden(await browser.postForm(s.base + loginPath, { ...another, switch_account: "1" }))
    assert.isTrue(await consented(browser, client))
  })

  it("Withdraw (303 back to the page) revokes the application's tokens for alice; the next authorization asks for consent", async () => {
    const { browser, client, code } = await consentedTo("Withdraw Revokes App")
    const issued = await read(
      await token(s, { grant_type: "authorization_code", code, redirect_uri: cb }, client)
    )
    assert.strictEqual(issued.status, 200)
    const form = await withdrawForm(browser, client)
    const done = await browser.postForm(s.base + form.action, form.fields)
    assert.strictEqual(done.status, 303)
    assert.isTrue((done.headers.get("location") ?? "").startsWith(`${consentsPath}?withdrawn=`))
    const refreshed = await read(
      await token(
        s,
        { grant_type: "refresh_token", refresh_token: issued.body.refresh_token as string },
        client
      )
    )
    assert.deepStrictEqual([refreshed.status, refreshed.body.error], [400, "invalid_grant"])
    const introspected = await read(
      await post(
        s,
        "/oauth2/oauth2/introspect",
        { token: issued.body.access_token as string },
        {
          authorization: client.basic
        }
      )
    )
    assert.strictEqual(introspected.body.active, false)
    assert.isFalse(await consented(browser, client))
  })

  it("escapes the application's name on the consents page", async () => {
    const { browser } = await consentedTo(`<img src=x onerror=alert(1)>"'`)
    const html = await (await browser.fetch(s.base + consentsPath)).text()
    assert.notInclude(html, "<img src=x")
    assert.include(html, "&lt;img src=x onerror=alert(1)&gt;&quot;&#39;")
  })
})
