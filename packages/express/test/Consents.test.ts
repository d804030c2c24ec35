import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import {
  authorizeAndAllow,
  authorizeUrl,
  Browser,
  codeOf,
  createApp,
  createUser,
  forms,
  originOf,
  startServer,
  type TestServer,
  tokenRequest
} from "./helpers.js"

let s: TestServer
let app: { appKey: string; appSecret: string; redirectUri: string }

beforeAll(async () => {
  s = await startServer()
  app = await createApp(s, { name: "Acme Notes" })
})
afterAll(() => s.close())

const consentsUrl = () => `${s.base}/oauth2/oauth2/consents`

const params = { response_type: "code", client_id: "", redirect_uri: "https://app.example/cb", state: "c" }

/** The form of a page whose hidden `action` is `action` (and `app_key`, when given). */
const formFor = (html: string, action: string, appKey?: string) => {
  const found = forms(html).find(
    (f) => f.fields.action === action && (appKey === undefined || f.fields.app_key === appKey)
  )
  if (found === undefined) throw new Error(`no ${action} form: ${html.slice(0, 300)}`)
  return found
}

describe("consents page over HTTP", () => {
  it("signs in on the page, lists the application, withdraws it: its refresh token is refused and consent is asked again", async () => {
    const user = await createUser(s)
    const b = new Browser()
    const location = await authorizeAndAllow(s, b, { ...params, client_id: app.appKey }, user)
    const tokens = (await (
      await tokenRequest(s, app, {
        grant_type: "authorization_code",
        code: codeOf(location),
        redirect_uri: app.redirectUri
      })
    ).json()) as { refresh_token: string }
    // a second browser signs in on the consents page itself
    const c = new Browser()
    const signedOut = await c.get(consentsUrl())
    assert.strictEqual(signedOut.status, 200)
    const signInHtml = await signedOut.text()
    assert.include(signInHtml, "<h1>Sign in to manage authorised applications</h1>")
    const signInForm = formFor(signInHtml, "signin")
    const signedIn = await c.post(originOf(s) + signInForm.action, { ...signInForm.fields, ...user })
    assert.strictEqual(signedIn.status, 303)
    assert.strictEqual(signedIn.headers.get("location"), "/oauth2/oauth2/consents")
    const list = await c.get(consentsUrl())
    const html = await list.text()
    assert.include(html, `<h2 id="app-0">Acme Notes</h2>`)
    assert.include(html, "Read your profile")
    assert.include(html, "See your email address")
    assert.match(html, /Allowed on \w+ \d{1,2}, \d{4}/)
    const withdraw = formFor(html, "withdraw", app.appKey)
    const done = await c.post(originOf(s) + withdraw.action, withdraw.fields)
    assert.strictEqual(done.status, 303)
    const back = done.headers.get("location") as string
    assert.match(back, /^\/oauth2\/oauth2\/consents\?withdrawn=/)
    const confirmed = await (await c.get(originOf(s) + back)).text()
    assert.include(confirmed, "<strong>Acme Notes</strong> can no longer access your account.")
    assert.include(confirmed, "You have not authorised any application.")
    // the application's refresh token is refused
    const refreshed = await tokenRequest(s, app, {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token
    })
    assert.strictEqual(refreshed.status, 400)
    assert.strictEqual(((await refreshed.json()) as { error: string }).error, "invalid_grant")
    // the first browser, still signed in, is asked for consent again
    const again = await b.get(authorizeUrl(s, { ...params, client_id: app.appKey }))
    assert.strictEqual(again.status, 200)
    assert.include(await again.text(), ">Allow</button>")
  })

  it("sends the pages' security headers and refuses cross-site posts", async () => {
    const user = await createUser(s)
    const b = new Browser()
    await authorizeAndAllow(s, b, { ...params, client_id: app.appKey }, user)
    const res = await b.get(consentsUrl())
    assert.strictEqual(res.status, 200)
    assert.strictEqual(res.headers.get("x-frame-options"), "DENY")
    const csp = res.headers.get("content-security-policy") ?? ""
    assert.include(csp, "default-src 'none'")
    assert.include(csp, "form-action 'self'")
    assert.include(csp, "frame-ancestors 'none'")
    assert.notInclude(csp, "unsafe-inline")
    assert.strictEqual(res.headers.get("cache-control"), "no-store")
    assert.strictEqual(res.headers.get("referrer-policy"), "no-referrer")
    const withdraw = formFor(await res.text(), "withdraw", app.appKey)
    const cross = await b.post(originOf(s) + withdraw.action, withdraw.fields, {
      origin: "https://evil.example"
    })
    assert.strictEqual(cross.status, 403)
    assert.include(await cross.text(), "Back to your authorised applications")
    const still = await b.get(consentsUrl())
    assert.include(await still.text(), "Acme Notes")
  })

  it("is written in the language of ui_locales, and keeps it across Sign out", async () => {
    const user = await createUser(s)
    const b = new Browser({ "accept-language": "en" })
    await authorizeAndAllow(s, b, { ...params, client_id: app.appKey }, user)
    const res = await b.get(`${consentsUrl()}?ui_locales=zh-CN&client_type=Mobile`)
    const html = await res.text()
    assert.include(html, '<html lang="zh-CN">')
    assert.include(html, 'class="layout-mobile"')
    assert.include(html, "<h1>已授权的应用</h1>")
    const signOut = formFor(html, "signout")
    assert.strictEqual(signOut.action, "/oauth2/oauth2/consents?client_type=Mobile&ui_locales=zh-CN")
    const out = await b.post(originOf(s) + signOut.action, signOut.fields)
    assert.strictEqual(out.status, 303)
    const after = await (await b.get(originOf(s) + (out.headers.get("location") as string))).text()
    assert.include(after, "<h1>登录以管理已授权的应用</h1>")
  })
})
