import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Browser, createUser, forms, originOf, startServer, type TestServer } from "./helpers.js"

let s: TestServer

beforeAll(async () => {
  s = await startServer()
})
afterAll(() => s.close())

const accountUrl = (query = "") => `${s.base}/oauth2/oauth2/account${query}`

/** The form of a page whose hidden `action` is `action`. */
const formFor = (html: string, action: string) => {
  const found = forms(html).find((f) => f.fields.action === action)
  if (found === undefined) throw new Error(`no ${action} form: ${html.slice(0, 300)}`)
  return found
}

/** A browser signed in on the account page. */
const signedIn = async (user: { username: string; password: string }, query = "", headers = {}) => {
  const b = new Browser(headers)
  const page = await b.get(accountUrl(query))
  const form = formFor(await page.text(), "signin")
  const r = await b.post(originOf(s) + form.action, { ...form.fields, ...user })
  assert.strictEqual(r.status, 303)
  return b
}

describe("account page over HTTP", () => {
  it("signed out: the sign-in form, headed for the account, never framed", async () => {
    const page = await new Browser().get(accountUrl())
    assert.strictEqual(page.status, 200)
    assert.include(await page.text(), "<h1>Sign in to manage your account</h1>")
    assert.include(page.headers.get("content-security-policy") as string, "frame-ancestors 'none'")
    assert.include(page.headers.get("content-security-policy") as string, "form-action 'self'")
    assert.strictEqual(page.headers.get("cache-control"), "no-store")
  })

  it("signed in: the sections in order, this device marked, in English or Chinese", async () => {
    const user = await createUser(s)
    const b = await signedIn(user)
    await signedIn(user)
    const html = await (await b.get(accountUrl())).text()
    const order = ["password-heading", "sessions-heading", "applications-heading"].map((id) =>
      html.indexOf(id)
    )
    assert.isTrue(
      order.every((at, i) => at > 0 && (i === 0 || at > (order[i - 1] as number))),
      String(order)
    )
    assert.include(html, '<span class="badge">This device</span>')
    assert.include(html, 'autocomplete="current-password"')
    assert.include(html, 'href="/oauth2/oauth2/consents"')
    assert.strictEqual(
      forms(html).filter((f) => f.fields.action === "end_session").length,
      1,
      "the other session"
    )
    formFor(html, "end_others")
    const zh = await (await b.get(accountUrl("?ui_locales=zh-CN"))).text()
    assert.include(zh, '<html lang="zh-CN">')
    assert.include(zh, "<h1>你的账号</h1>")
    assert.include(zh, "当前设备")
  })

  it("a wrong current password shows the form again, 400, with the problem announced", async () => {
    const user = await createUser(s)
    const b = await signedIn(user)
    const form = formFor(await (await b.get(accountUrl())).text(), "password")
    const r = await b.post(originOf(s) + form.action, {
      ...form.fields,
      current_password: "not the password",
      new_password: "another passphrase",
      confirm_password: "another passphrase"
    })
    assert.strictEqual(r.status, 400)
    const html = await r.text()
    assert.include(html, '<div class="alert" role="alert" id="password-error">')
    assert.include(html, "Your current password is incorrect.")
    assert.include(html, 'aria-invalid="true"')
  })

  it("trusted devices: each listed with its label and Forget, this browser marked; Forget ends one, in English or Chinese", async () => {
    const user = await createUser(s)
    const firefox = { "user-agent": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0" }
    const b = await signedIn(user, "", firefox)
    await signedIn(user, "", { "user-agent": "curl/8.5.0" })
    const html = await (await b.get(accountUrl())).text()
    assert.include(html, "<strong>Firefox on Linux</strong>")
    assert.include(html, "<strong>A browser</strong>")
    assert.include(html, '<span class="badge">This browser</span>')
    assert.include(html, "Trusted since ")
    assert.include(html, "Last sign-in ")
    const forgets = forms(html).filter((f) => f.fields.action === "forget_device")
    assert.strictEqual(forgets.length, 2)
    const zh = await (await b.get(accountUrl("?ui_locales=zh-CN"))).text()
    assert.include(zh, "<strong>Linux 上的 Firefox</strong>")
    assert.include(zh, "<strong>某个浏览器</strong>")
    assert.include(zh, '<span class="badge">此浏览器</span>')
    assert.include(zh, "自 ")
    // The other browser's Forget: the one in its own item
    const item = html.split('<li class="app">').find((li) => li.includes("<strong>A browser</strong>")) ?? ""
    const device = formFor(item, "forget_device").fields.device ?? ""
    const fresh = formFor(await (await b.get(accountUrl())).text(), "forget_device")
    const posted = await b.post(originOf(s) + fresh.action, { ...fresh.fields, device })
    assert.strictEqual(posted.status, 303)
    const after = await (await b.get(originOf(s) + (posted.headers.get("location") as string))).text()
    assert.include(after, "That browser is not trusted any more.")
    assert.strictEqual(forms(after).filter((f) => f.fields.action === "forget_device").length, 1)
    assert.include(after, "<strong>Firefox on Linux</strong>")
  })
})
