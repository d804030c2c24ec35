/**
 * The end session endpoint through the router: the question page (in the reader's language, the
 * request's parameters escaped as hidden fields, a CSP whose form-action allows the redirect that
 * follows), its form ending the session (the cookie removed), the signed-out page, and the error
 * page (HTML, or JSON for a client that asks for it).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Admin } from "@latchkey/core"
import {
  authorizeAndAllow,
  Browser,
  createApp,
  createUser,
  forms,
  originOf,
  startServer,
  type TestServer
} from "./helpers.js"

let s: TestServer
let app: { appKey: string; appSecret: string; redirectUri: string }
const bye = "https://app.example/bye"

beforeAll(async () => {
  s = await startServer()
  app = await createApp(s)
  await s.runtime.runPromise(Admin.updateApplication(app.appKey, { postLogoutRedirectUris: [bye] }))
})
afterAll(() => s.close())

const entities: Record<string, string> = {
  "&quot;": '"',
  "&lt;": "<",
  "&gt;": ">",
  "&#39;": "'",
  "&amp;": "&"
}
const unescaped = (v: string) => v.replace(/&(?:quot|lt|gt|#39|amp);/g, (e) => entities[e] as string)

const logoutUrl = (params: Record<string, string>) =>
  `${s.base}/oauth2/oauth2/logout?${new URLSearchParams(params).toString()}`

const signedIn = async () => {
  const b = new Browser()
  const user = await createUser(s)
  await authorizeAndAllow(
    s,
    b,
    { response_type: "code", client_id: app.appKey, redirect_uri: app.redirectUri, state: "x" },
    user
  )
  assert.isTrue(b.cookies.has("latchkey_session"))
  return b
}

describe("the end session endpoint's pages", () => {
  it("asks in the reader's language, and its form ends the session and returns with state", async () => {
    const b = await signedIn()
    const state = `"><script>1</script>`
    const res = await b.get(
      logoutUrl({ client_id: app.appKey, post_logout_redirect_uri: bye, state, ui_locales: "zh-CN" })
    )
    const html = await res.text()
    assert.strictEqual(res.status, 200)
    assert.include(html, '<html lang="zh-CN">')
    assert.include(html, "<h1>退出登录？</h1>")
    assert.notInclude(html, "<script>")
    assert.include(
      res.headers.get("content-security-policy") as string,
      "form-action 'self' https://app.example"
    )
    const form = forms(html)[0] as { action: string; fields: Record<string, string> }
    // The hidden fields as the browser posts them: the escaped text read back
    const fields = Object.fromEntries(Object.entries(form.fields).map(([k, v]) => [k, unescaped(v)]))
    assert.strictEqual(fields.state, state)
    const done = await b.post(originOf(s) + form.action, fields, { "sec-fetch-site": "same-origin" })
    assert.strictEqual(done.status, 303)
    assert.strictEqual(done.headers.get("location"), `${bye}?state=${encodeURIComponent(state)}`)
    assert.match(
      b.setCookieHeaders.at(-1) as string,
      /^latchkey_session=; Path=\/oauth2\/oauth2; HttpOnly; SameSite=Lax; Max-Age=0/
    )
    assert.isFalse(b.cookies.has("latchkey_session"))
  })

  it("without a session: the signed-out page; an unregistered URI: the error page, or JSON", async () => {
    const b = new Browser({ "accept-language": "en" })
    const out = await b.get(logoutUrl({ client_id: app.appKey }))
    assert.strictEqual(out.status, 200)
    assert.include(await out.text(), "<h1>You have signed out</h1>")
    const bad = await b.get(logoutUrl({ client_id: app.appKey, post_logout_redirect_uri: `${bye}x` }))
    assert.strictEqual(bad.status, 400)
    assert.include(await bad.text(), "This sign-out link can&#39;t be used")
    const json = await b.get(logoutUrl({ post_logout_redirect_uri: bye }), {
      headers: { accept: "application/json" }
    })
    assert.strictEqual(json.status, 400)
    assert.strictEqual(((await json.json()) as { error: string }).error, "invalid_request")
  })
})
