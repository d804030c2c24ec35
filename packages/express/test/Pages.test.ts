import { assert, describe, it } from "@effect/vitest"
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
