import { assert, describe, it } from "@effect/vitest"
import { Console } from "@latchkey/core"
import { Option } from "effect"
import { ConsolePages } from "../src/index.js"

const View = Console.ConsoleView
const signedIn = { operator: "vic", role: "viewer" as const, csrf: "csrf-1" }
const app = { appKey: "key-1", name: "<b>Shop</b>", public: false, createdAt: 1_800_000_000 }

const render = (view: Console.ConsoleView, acceptLanguage?: string, status = 200) =>
  ConsolePages.render(
    { status, headers: { "cache-control": "no-store" }, view: Option.some(view) },
    {
      acceptLanguage,
      https: false
    }
  )

describe("the console's pages", () => {
  it("the sign-in page: labelled fields, the form's token, lang, and the page headers", () => {
    const page = render(
      View.SignIn({ csrf: "tok", username: "", problem: Option.none(), retryAfter: Option.none() })
    )
    assert.include(page.body, '<html lang="en">')
    assert.include(page.body, '<label for="username">Operator name</label>')
    assert.include(page.body, '<label for="password">Password</label>')
    assert.include(page.body, '<input type="hidden" name="csrf_token" value="tok">')
    assert.include(page.headers["content-security-policy"] ?? "", "frame-ancestors 'none'")
    assert.include(page.headers["content-security-policy"] ?? "", "form-action 'self'")
    assert.strictEqual(page.headers["x-frame-options"], "DENY")
    assert.strictEqual(page.headers["referrer-policy"], "no-referrer")
    assert.strictEqual(page.headers["cache-control"], "no-store")
    assert.strictEqual(page.headers["content-type"], "text/html; charset=utf-8")
  })

  it("a refused sign-in says why in the reader's language, with the name typed escaped", () => {
    const page = render(
      View.SignIn({
        csrf: "t",
        username: '"><x>',
        problem: Option.some("throttled"),
        retryAfter: Option.some(30)
      }),
      "zh-CN,zh;q=0.9",
      429
    )
    assert.include(page.body, '<html lang="zh-CN">')
    assert.include(page.body, "30 秒后重试")
    assert.include(page.body, 'value="&quot;&gt;&lt;x&gt;"')
    assert.notInclude(page.body, "<x>")
  })

  it("the applications: names escaped; a rotate form only when the role may, and the new secret only when given", () => {
    const viewer = render(
      View.Apps({ signedIn, query: "", apps: [app], canRotate: false, rotated: Option.none() })
    )
    assert.include(viewer.body, "&lt;b&gt;Shop&lt;/b&gt;")
    assert.notInclude(viewer.body, "rotate-secret")
    assert.notInclude(viewer.body, "New App Secret")
    const operator = render(
      View.Apps({
        signedIn: { ...signedIn, role: "operator" },
        query: "sh",
        apps: [app],
        canRotate: true,
        rotated: Option.some({ appKey: "key-1", name: "Shop", appSecret: "s3cret-value" })
      })
    )
    assert.include(operator.body, 'action="/console/apps/rotate-secret"')
    assert.include(operator.body, '<input type="hidden" name="app_key" value="key-1">')
    assert.include(operator.body, 'value="s3cret-value"')
    assert.include(operator.body, 'value="sh"')
  })

  it("a redirect has no body and keeps the core's headers", () => {
    const answer = ConsolePages.render(
      { status: 303, headers: { location: "/console/apps" }, view: Option.none() },
      { acceptLanguage: undefined, https: true }
    )
    assert.strictEqual(answer.body, "")
    assert.strictEqual(answer.headers.location, "/console/apps")
    assert.isDefined(answer.headers["strict-transport-security"])
  })
})
