/**
 * The consent page describes the OpenID scopes the server understands (`openid`, `profile`,
 * `email`) in the page's language, unless the router's `scopeDescriptions` describe them; the
 * scope catalogue's texts come before both, for the scopes it holds.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Admin } from "@latchkey/core"
import {
  authorizeUrl,
  Browser,
  createApp,
  createUser,
  originOf,
  signIn,
  startServer,
  type TestServer
} from "./helpers.js"

let plain: TestServer
let described: TestServer
let catalogued: TestServer
beforeAll(async () => {
  catalogued = await startServer({
    router: {
      scopeDescriptions: {
        notes: "Notes from the router",
        email: { en: "Mail from the router", "zh-CN": "路由的邮件" }
      }
    }
  })
  plain = await startServer({ router: { scopeDescriptions: {} } })
  described = await startServer({
    router: { scopeDescriptions: { openid: { "zh-CN": "用 Acme 账号登录" }, email: "Read your mailbox" } }
  })
})
afterAll(async () => {
  await plain.close()
  await described.close()
  await catalogued.close()
})

/** The consent page of a request for `openid,profile,email,notes` in `lang`. */
const consentPage = async (s: TestServer, lang: string): Promise<string> => {
  const app = await createApp(s, { scope: "openid,profile,email,notes" })
  const user = await createUser(s)
  const b = new Browser()
  const url = authorizeUrl(s, {
    response_type: "code",
    client_id: app.appKey,
    redirect_uri: app.redirectUri,
    scope: "openid,profile,email,notes",
    state: "d",
    ui_locales: lang
  })
  const signedIn = await signIn(s, b, url, user)
  assert.strictEqual(signedIn.status, 303)
  const consent = await b.get(originOf(s) + (signedIn.headers.get("location") as string))
  assert.strictEqual(consent.status, 200)
  return consent.text()
}

const line = (description: string, scope: string) =>
  `<span class="scope-desc">${description}</span><span class="scope-name">${scope}</span>`

describe("descriptions of the OpenID scopes", () => {
  const expected: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, string]>]> = [
    [
      "en",
      [
        ["openid", "Sign you in with your account"],
        ["profile", "See your name and basic profile"],
        ["email", "See your email address"],
        ["notes", "Access to notes"]
      ]
    ],
    [
      "zh-CN",
      [
        ["openid", "使用你的账号登录"],
        ["profile", "查看你的姓名和基本资料"],
        ["email", "查看你的电子邮件地址"],
        ["notes", "访问 notes"]
      ]
    ]
  ]
  for (const [lang, lines] of expected) {
    it(`in ${lang}: openid, profile and email say what they allow; another scope reads the fallback`, async () => {
      const html = await consentPage(plain, lang)
      for (const [scope, description] of lines) assert.include(html, line(description, scope))
      assert.notInclude(html, lang === "en" ? "Access to openid" : "访问 openid")
    })
  }

  it("the router's scopeDescriptions override them, per language as for any scope", async () => {
    const zh = await consentPage(described, "zh-CN")
    assert.include(zh, line("用 Acme 账号登录", "openid"))
    assert.include(zh, line("Read your mailbox", "email"))
    assert.include(zh, line("查看你的姓名和基本资料", "profile"))
    const en = await consentPage(described, "en")
    // a text only in another language is not shown: the catalogue's text is
    assert.include(en, line("Sign you in with your account", "openid"))
    assert.include(en, line("Read your mailbox", "email"))
  })
})

describe("descriptions from the scope catalogue", () => {
  it("come before the router's and the built-in texts, in the page's language, else in English; other scopes as before", async () => {
    const notes = { en: "Read and write your notes", "zh-CN": "读写你的笔记" }
    // Before the application: once the catalogue has entries, an application's scopes must be in it
    const app = await createApp(catalogued, { scope: "openid,profile,email,notes" })
    await catalogued.runtime.runPromise(Admin.createScope({ name: "notes", descriptions: notes }))
    await catalogued.runtime.runPromise(
      Admin.createScope({ name: "profile", descriptions: { en: "Your profile card" } })
    )
    for (const [lang, expected] of [
      [
        "en",
        [
          ["notes", notes.en],
          ["profile", "Your profile card"],
          ["email", "Mail from the router"],
          ["openid", "Sign you in with your account"]
        ]
      ],
      [
        "zh-CN",
        [
          ["notes", notes["zh-CN"]],
          ["profile", "Your profile card"],
          ["email", "路由的邮件"],
          ["openid", "使用你的账号登录"]
        ]
      ]
    ] as const) {
      const user = await createUser(catalogued)
      const b = new Browser()
      const url = authorizeUrl(catalogued, {
        response_type: "code",
        client_id: app.appKey,
        redirect_uri: app.redirectUri,
        scope: "openid,profile,email,notes",
        state: "d",
        ui_locales: lang
      })
      const signedIn = await signIn(catalogued, b, url, user)
      const html = await (
        await b.get(originOf(catalogued) + (signedIn.headers.get("location") as string))
      ).text()
      for (const [scope, description] of expected) assert.include(html, line(description, scope))
      assert.notInclude(html, "Notes from the router")
    }
  })
})
