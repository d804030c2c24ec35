import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import {
  authorizeUrl,
  Browser,
  createApp,
  createUser,
  forms,
  originOf,
  signIn,
  startServer,
  type TestServer
} from "./helpers.js"

let s: TestServer
let app: { appKey: string; appSecret: string; redirectUri: string }

beforeAll(async () => {
  s = await startServer({
    router: {
      productName: "Acme ID",
      scopeDescriptions: {
        profile: { en: "Read your profile", "zh-CN": "读取你的资料" },
        email: "See your email address",
        notes: { en: "Read your notes" },
        photos: { fr: "Voir vos photos" }
      }
    }
  })
  app = await createApp(s, { scope: "profile,email,notes,photos,extra" })
})
afterAll(() => s.close())

const params = (extra: Record<string, string> = {}) => ({
  response_type: "code",
  client_id: app.appKey,
  redirect_uri: app.redirectUri,
  state: "loc",
  ...extra
})

const page = async (res: Response) => {
  const html = await res.text()
  return { status: res.status, html, lang: html.match(/<html lang="([^"]+)">/)?.[1] }
}

describe("the pages' language", () => {
  it("follows ui_locales (its first supported tag), then Accept-Language with q-values, then English", async () => {
    const cases: ReadonlyArray<readonly [Record<string, string>, string | undefined, string]> = [
      [{ ui_locales: "zh-CN" }, undefined, "zh-CN"],
      [{ ui_locales: "fr zh-Hans en" }, "en", "zh-CN"],
      [{ ui_locales: "en" }, "zh-CN", "en"],
      [{ ui_locales: "fr" }, "de, zh;q=0.8, en;q=0.5", "zh-CN"],
      [{}, "zh-SG", "zh-CN"],
      [{}, "zh-TW, en;q=0.1", "en"],
      [{}, "en;q=0.4, zh-CN;q=0.9", "zh-CN"],
      [{}, "fr", "en"],
      [{}, undefined, "en"]
    ]
    for (const [extra, acceptLanguage, expected] of cases) {
      const b = new Browser(acceptLanguage === undefined ? {} : { "accept-language": acceptLanguage })
      const { status, lang, html } = await page(await b.get(authorizeUrl(s, params(extra))))
      assert.strictEqual(status, 200)
      assert.strictEqual(lang, expected, JSON.stringify([extra, acceptLanguage]))
      assert.include(html, expected === "zh-CN" ? "<h1>登录</h1>" : "<h1>Sign in</h1>")
    }
  })

  it("keeps ui_locales through a failed sign-in, the sign-in post and the consent page, with scope texts per language", async () => {
    const user = await createUser(s)
    const b = new Browser({ "accept-language": "en" })
    const url = authorizeUrl(s, params({ ui_locales: "zh-CN" }))
    const failed = await signIn(s, b, url, { username: user.username, password: "wrong password" })
    const again = await page(failed)
    assert.deepStrictEqual([again.status, again.lang], [400, "zh-CN"])
    assert.include(again.html, "用户名或密码不正确。")
    const form = forms(again.html)[0] as { action: string; fields: Record<string, string> }
    const signedIn = await b.post(originOf(s) + form.action, { ...form.fields, ...user })
    assert.strictEqual(signedIn.status, 303)
    const location = signedIn.headers.get("location") as string
    assert.include(location, "ui_locales=zh-CN")
    const consent = await page(await b.get(originOf(s) + location))
    assert.deepStrictEqual([consent.status, consent.lang], [200, "zh-CN"])
    assert.include(consent.html, "<title>允许 Acme Notes 访问？ · Acme ID</title>")
    // per language; a single text for all; English when the language has none; then the catalogue's default
    assert.include(consent.html, "读取你的资料")
    assert.include(consent.html, "See your email address")
    assert.include(consent.html, "Read your notes")
    assert.include(consent.html, "访问 photos")
    assert.include(consent.html, "访问 extra")
    assert.notInclude(consent.html, "Voir vos photos")
    assert.include(consent.html, "/oauth2/oauth2/consents?ui_locales=zh-CN")
    // the same consent page in English
    const english = await page(await b.get(authorizeUrl(s, params())))
    assert.strictEqual(english.lang, "en")
    assert.include(english.html, "Read your profile")
    assert.include(english.html, "Access to photos")
  })

  it("writes error pages in the reader's language; JSON errors stay English", async () => {
    const unknown = authorizeUrl(s, { ...params({ ui_locales: "zh-CN" }), client_id: "nope" })
    const res = await new Browser().get(unknown)
    const { status, lang, html } = await page(res)
    assert.deepStrictEqual([status, lang], [400, "zh-CN"])
    assert.include(html, "<h1>无法识别此应用</h1>")
    assert.include(html, "请关闭此窗口，返回你原来使用的应用。")
    assert.include(html, '<span class="code">invalid_request</span>')
    const json = await new Browser().get(unknown, { headers: { accept: "application/json" } })
    assert.deepStrictEqual(await json.json(), {
      error: "invalid_request",
      error_description: "client_id is missing or unknown"
    })
    const expired = await new Browser({ "accept-language": "zh-CN,zh;q=0.9" }).post(
      `${s.base}/oauth2/oauth2/login`,
      { txn: "x", csrf_token: "y" }
    )
    const shown = await page(expired)
    assert.deepStrictEqual([shown.status, shown.lang], [403, "zh-CN"])
    assert.include(shown.html, "<h1>此表单已过期</h1>")
  })
})
