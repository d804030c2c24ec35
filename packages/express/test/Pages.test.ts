import { assert, describe, it } from "@effect/vitest"
import { catalogue, languages } from "../src/locales/index.js"
import * as Pages from "../src/Pages.js"

describe("Pages", () => {
  it("escapes HTML special characters", () => {
    assert.strictEqual(
      Pages.escapeHtml(`<a href="x">'&'</a>`),
      "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    )
  })

  it("escapes the application name, username and scope descriptions", () => {
    const html = Pages.consent({
      layout: "Mobile",
      productName: "Latchkey",
      appName: "<img src=x onerror=alert(1)>",
      redirectHost: "app.example",
      username: '"><script>x</script>',
      scopes: [{ name: "a", description: "<b>bold</b>" }],
      action: "/oauth2/oauth2/authorize",
      switchAction: "/oauth2/oauth2/login",
      txn: "t",
      csrf: "c"
    })
    assert.notInclude(html, "<img src=x")
    assert.notInclude(html, "<script>x")
    assert.notInclude(html, "<b>bold")
    assert.include(html, 'class="layout-mobile"')
  })

  it("allows only the stylesheet by hash in the CSP", () => {
    const csp = Pages.contentSecurityPolicy(["'self'", "https://app.example"])
    assert.include(csp, `style-src ${Pages.styleSource}`)
    assert.include(csp, "form-action 'self' https://app.example")
    assert.include(csp, "frame-ancestors 'none'")
    assert.include(Pages.contentSecurityPolicy([]), "form-action 'none'")
  })
})

describe("Pages in the reader's language", () => {
  const signIn = {
    layout: "PC",
    productName: "Latchkey",
    appName: "Acme <Notes>",
    redirectHost: "app.example",
    action: "/oauth2/oauth2/login",
    txn: "t",
    csrf: "c"
  } as const

  it("writes the sign-in page in English by default and in Chinese with the zh-CN catalogue, with lang", () => {
    const english = Pages.login(signIn)
    assert.include(english, '<html lang="en">')
    assert.include(english, "<title>Sign in · Latchkey</title>")
    assert.include(english, '<label for="username">Username</label>')
    const chinese = Pages.login({
      ...signIn,
      catalogue: catalogue("zh-CN"),
      error: "bad_credentials",
      username: "a"
    })
    assert.include(chinese, '<html lang="zh-CN">')
    assert.include(chinese, "<title>登录 · Latchkey</title>")
    assert.include(chinese, '<label for="username">用户名</label>')
    assert.include(chinese, '<label for="password">密码</label>')
    assert.include(chinese, "用户名或密码不正确。")
    assert.include(chinese, "以继续使用 <strong>Acme &lt;Notes&gt;</strong>")
    assert.notInclude(chinese, "Sign in")
  })

  it("says what went wrong at sign-in from the view's code", () => {
    assert.include(Pages.login({ ...signIn, error: "missing_fields" }), "Enter your username and password.")
    assert.include(Pages.login({ ...signIn, error: "bad_credentials" }), "Username or password is incorrect.")
    assert.include(
      Pages.login({ ...signIn, error: "missing_fields", catalogue: catalogue("zh-CN") }),
      "请输入用户名和密码。"
    )
  })

  it("links the consent page to the consents page", () => {
    const html = Pages.consent({
      layout: "PC",
      productName: "Latchkey",
      catalogue: catalogue("zh-CN"),
      appName: "Acme",
      redirectHost: "app.example",
      username: "alice",
      scopes: [],
      action: "/a",
      switchAction: "/l",
      consentsHref: "/oauth2/oauth2/consents?ui_locales=zh-CN&x=<y>",
      txn: "t",
      csrf: "c"
    })
    assert.include(
      html,
      '<a href="/oauth2/oauth2/consents?ui_locales=zh-CN&amp;x=&lt;y&gt;">管理你已授权的应用</a>'
    )
    assert.include(html, ">允许</button>")
    assert.include(html, ">拒绝</button>")
    assert.include(html, "知道你使用的是哪个 Latchkey 账号")
    // Deny comes first in the form: pressing Enter never allows
    assert.isBelow(html.indexOf('value="deny"'), html.indexOf('value="allow"'))
  })
})

describe("the flow's enrolment pages", () => {
  const enrolment = {
    secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",
    uri: "otpauth://totp/auth.example:alice?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=auth.example"
  }
  const page = {
    layout: "PC",
    productName: "Latchkey",
    appName: "Acme <Notes>",
    username: "alice",
    enrolment,
    action: "/oauth2/oauth2/login",
    txn: "t",
    csrf: "c",
    fields: [
      ["factor_user", "u1"],
      ["enrol_mark", "m1"]
    ]
  } as const

  it("say the application requires a second step, show the QR code, secret and link, and post the code with the mark", () => {
    const html = Pages.enrol(page)
    assert.include(
      html,
      "<strong>Acme &lt;Notes&gt;</strong> requires a second step at sign-in. Add an authenticator app."
    )
    assert.include(html, '<svg class="qr" role="img"')
    assert.include(html, `<code class="code" id="totp-secret">${enrolment.secret}</code>`)
    assert.include(html, `<code class="code" id="totp-uri">${Pages.escapeHtml(enrolment.uri)}</code>`)
    assert.include(html, '<input type="hidden" name="enrol_mark" value="m1">')
    assert.include(html, 'name="code"')
    assert.notInclude(html, "passkey", "passkeys off: no word of them")
    const withPasskeys = Pages.enrol({
      ...page,
      accountHref: "/oauth2/oauth2/account?x=<y>",
      problem: "bad_code"
    })
    assert.include(withPasskeys, '<a href="/oauth2/oauth2/account?x=&lt;y&gt;">Go to your account</a>')
    assert.include(withPasskeys, "That code is not right.")
    const chinese = Pages.enrol({ ...page, catalogue: catalogue("zh-CN") })
    assert.include(chinese, "<strong>Acme &lt;Notes&gt;</strong> 要求登录时进行第二步验证。")
    assert.notInclude(chinese, "Add an authenticator app")
  })

  it("show the recovery codes once with Continue to the request, in each language", () => {
    for (const lang of languages) {
      const html = Pages.enrolled({
        layout: "Mobile",
        productName: "Latchkey",
        catalogue: catalogue(lang),
        appName: "Acme",
        recoveryCodes: ["AAAAA-BBBBB", "<b>x</b>"],
        continueHref: "/oauth2/oauth2/authorize?client_id=a&state=<s>"
      })
      assert.include(html, '<code class="code">AAAAA-BBBBB</code>')
      assert.notInclude(html, "<b>x</b>")
      assert.include(html, 'href="/oauth2/oauth2/authorize?client_id=a&amp;state=&lt;s&gt;"')
      assert.include(html, `>${catalogue(lang).enrol.continue}</a>`)
    }
  })
})

describe("error pages", () => {
  const base = {
    layout: "PC",
    productName: "Latchkey",
    status: 400,
    error: "invalid_request",
    description: 'parameter "<script>" is repeated'
  } as const

  it("give a plain title and explanation per reason, the error code small, the description folded", () => {
    const html = Pages.error({ ...base, problem: { reason: "unknown_client" } })
    assert.include(html, "<h1>This application isn&#39;t recognised</h1>")
    assert.include(html, "not registered with Latchkey")
    assert.include(html, 'Error code <span class="code">invalid_request</span>')
    assert.include(
      html,
      '<details class="fine"><summary>Technical details</summary><p lang="en">Parameter &quot;&lt;script&gt;&quot; is repeated.</p></details>'
    )
    assert.notInclude(html, "<script>")
    // no safe link back: the reader is told to return to the application
    assert.include(html, "Close this window and return to the application you came from.")
    assert.notInclude(html, "<a ")
  })

  it("offer a link back when there is a safe one, and say how long to wait", () => {
    const html = Pages.error({
      ...base,
      status: 429,
      error: "temporarily_unavailable",
      problem: { reason: "rate_limited", seconds: 42 },
      back: { to: "request", href: "/oauth2/oauth2/authorize?client_id=a&state=<x>" }
    })
    assert.include(html, "<h1>Too many attempts</h1>")
    assert.include(html, "Wait 42 seconds and try again.")
    assert.include(
      html,
      '<a class="btn btn-primary" href="/oauth2/oauth2/authorize?client_id=a&amp;state=&lt;x&gt;">Try again</a>'
    )
    assert.notInclude(html, "Close this window")
    const consents = Pages.error({
      ...base,
      status: 403,
      problem: { reason: "form_expired" },
      back: { to: "consents", href: "/oauth2/oauth2/consents" },
      catalogue: catalogue("zh-CN")
    })
    assert.include(consents, "<h1>此表单已过期</h1>")
    assert.include(consents, '<a class="btn btn-primary" href="/oauth2/oauth2/consents">返回已授权的应用</a>')
    assert.include(consents, '<html lang="zh-CN">')
    assert.include(consents, "错误代码")
  })

  it("explain every reason in every language", () => {
    const problems = [
      { reason: "unknown_client" },
      { reason: "bad_redirect_uri" },
      { reason: "bad_request" },
      { reason: "request_too_long", limit: 8192 },
      { reason: "form_expired" },
      { reason: "bad_form" },
      { reason: "no_decision" },
      { reason: "rate_limited", seconds: 5 },
      { reason: "unavailable" },
      { reason: "server_error" },
      { reason: "not_found" },
      { reason: "method_not_allowed" }
    ] as const
    for (const tag of languages) {
      const t = catalogue(tag)
      const titles = new Set<string>()
      for (const problem of problems) {
        const html = Pages.error({ ...base, problem, catalogue: t })
        const entry = t.error.problems[problem.reason]
        titles.add(entry.title)
        assert.include(html, `<h1>${Pages.escapeHtml(entry.title)}</h1>`, `${tag} ${problem.reason}`)
      }
      assert.strictEqual(titles.size, problems.length, `${tag}: one title per reason`)
    }
    assert.include(Pages.error({ ...base, problem: problems[3] }), "longer than 8192 characters")
  })
})

describe("consents page", () => {
  const page = {
    layout: "Mobile",
    productName: "Latchkey",
    username: '"><b>alice</b>',
    action: "/oauth2/oauth2/consents?ui_locales=zh-CN",
    txn: "t",
    csrf: "c"
  } as const

  it("lists each application with its scopes, when it was allowed and a Withdraw form; escapes everything", () => {
    const html = Pages.consents({
      ...page,
      apps: [
        {
          appKey: 'k"1',
          appName: "<img src=x onerror=alert(1)>",
          grantedAt: Date.UTC(2025, 2, 12, 10) / 1000,
          scopes: [{ name: "profile", description: "<i>Read</i>" }]
        }
      ],
      withdrawn: "Old <App>"
    })
    assert.include(html, 'class="layout-mobile"')
    assert.include(html, "<h1>Authorised applications</h1>")
    assert.include(html, '<h2 id="app-0">&lt;img src=x onerror=alert(1)&gt;</h2>')
    assert.include(html, "Allowed on March 12, 2025")
    assert.include(html, '<span class="scope-desc">&lt;i&gt;Read&lt;/i&gt;</span>')
    assert.include(html, '<input type="hidden" name="app_key" value="k&quot;1">')
    assert.include(html, '<input type="hidden" name="action" value="withdraw">')
    assert.include(html, 'aria-describedby="app-0">Withdraw access</button>')
    assert.include(html, '<input type="hidden" name="action" value="signout">')
    assert.include(html, 'action="/oauth2/oauth2/consents?ui_locales=zh-CN"')
    assert.include(html, '<div class="notice" role="status">')
    assert.include(html, "<strong>Old &lt;App&gt;</strong> can no longer access your account.")
    assert.include(html, "Signed in as <strong>&quot;&gt;&lt;b&gt;alice&lt;/b&gt;</strong>")
    assert.notInclude(html, "<img src=x")
    assert.notInclude(html, "<i>Read")
  })

  it("says so when nothing is authorised, in Chinese too", () => {
    const html = Pages.consents({ ...page, apps: [], catalogue: catalogue("zh-CN") })
    assert.include(html, "你尚未授权任何应用。")
    assert.include(html, "<h1>已授权的应用</h1>")
    assert.include(html, ">退出登录</button>")
    assert.notInclude(html, 'role="status"')
    const dated = Pages.consents({
      ...page,
      apps: [{ appKey: "k", appName: "A", grantedAt: Date.UTC(2025, 2, 12) / 1000, scopes: [] }],
      catalogue: catalogue("zh-CN")
    })
    assert.include(dated, "授权于 2025年3月12日")
    assert.include(dated, ">撤销访问权限</button>")
  })

  it("before sign-in, shows a sign-in form that posts back to the page", () => {
    const html = Pages.consentsSignIn({
      ...page,
      catalogue: catalogue("zh-CN"),
      error: "bad_credentials",
      username: "bob"
    })
    assert.include(html, "<h1>登录以管理已授权的应用</h1>")
    assert.include(html, '<form method="post" action="/oauth2/oauth2/consents?ui_locales=zh-CN">')
    assert.include(html, '<input type="hidden" name="action" value="signin">')
    assert.include(html, 'value="bob" aria-invalid="true" aria-describedby="form-error"')
    assert.include(html, "用户名或密码不正确。")
  })
})

describe("stylesheet", () => {
  const luminance = (hex: string) => {
    const [r, g, b] = [1, 3, 5].map((i) => {
      const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
    }) as [number, number, number]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b
  }
  const contrast = (a: string, b: string) => {
    const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p) as [number, number]
    return (x + 0.05) / (y + 0.05)
  }
  const rule = (selector: string) => {
    const found = Pages.stylesheet.split("\n").find((line) => line.startsWith(`${selector}{`))
    if (found === undefined) throw new Error(`no rule ${selector}`)
    return found
  }
  const value = (selector: string, property: string) => {
    const m = rule(selector).match(new RegExp(`[{;]${property}:([^;}]+)`))
    if (m === null) throw new Error(`no ${property} in ${selector}`)
    return m[1] as string
  }

  it("footer and fine print reach 4.5:1; input and secondary button borders and the focus ring reach 3:1", () => {
    assert.isAtLeast(contrast(value(".footer", "color"), "#f3f4f6"), 4.5)
    assert.isAtLeast(contrast(value(".fine", "color"), "#ffffff"), 4.5)
    assert.isAtLeast(contrast(value(".code", "color"), value(".code", "background")), 4.5)
    assert.isAtLeast(contrast(value(".scope-name", "color"), "#ffffff"), 4.5)
    const border = value(".input", "border").split(" ").at(-1) as string
    assert.isAtLeast(contrast(border, "#ffffff"), 3)
    const secondary = value(".btn-secondary", "border-color")
    assert.isAtLeast(contrast(secondary, "#ffffff"), 3)
    const ring = value(".input:focus", "outline").split(" ").at(-1) as string
    assert.isAtLeast(contrast(ring, "#ffffff"), 3)
    assert.isAtLeast(contrast(ring, "#f3f4f6"), 3)
  })

  it("keeps a visible focus indicator on every kind of control", () => {
    assert.notInclude(Pages.stylesheet, "outline:none")
    assert.match(
      Pages.stylesheet,
      /a:focus-visible,summary:focus-visible,\.btn:focus-visible\{outline:3px solid/
    )
  })
})
