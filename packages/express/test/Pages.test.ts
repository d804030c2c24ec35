import { assert, describe, it } from "@effect/vitest"
import * as Pages from "../src/Pages.js"
import * as Session from "../src/Session.js"

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

describe("Session", () => {
  it("signs cookie values and refuses tampered ones", () => {
    const value = Session.cookieValue("key", "abc")
    assert.strictEqual(Session.verifyCookie("key", value), "abc")
    assert.isNull(Session.verifyCookie("other-key", value))
    assert.isNull(Session.verifyCookie("key", `abd${value.slice(3)}`))
    assert.isNull(Session.verifyCookie("key", "abc"))
    assert.isNull(Session.verifyCookie("key", "abc.short"))
  })

  it("gives each pending request its own single-use CSRF token", () => {
    const s = Session.make(60)
    const a = Session.addPending(s, { rawQuery: "a", step: "login" })
    const b = Session.addPending(s, { rawQuery: "b", step: "login" })
    assert.isNull(Session.takePending(s, a.txn, b.csrf, "login"))
    assert.isNull(Session.takePending(s, a.txn, a.csrf, "consent"))
    assert.strictEqual(Session.takePending(s, a.txn, a.csrf, "login")?.rawQuery, "a")
    assert.isNull(Session.takePending(s, a.txn, a.csrf, "login"))
    for (let i = 0; i < 20; i++) Session.addPending(s, { rawQuery: String(i), step: "login" })
    assert.strictEqual(s.pending.size, Session.maxPending)
  })

  it("expires sessions and bounds the memory store", () => {
    const store = Session.memoryStore(2)
    const old = { ...Session.make(60), expiresAt: Date.now() - 1 }
    store.set(old)
    assert.isUndefined(store.get(old.id))
    const a = Session.make(60)
    const b = Session.make(60)
    const c = Session.make(60)
    store.set(a)
    store.set(b)
    store.set(c)
    assert.isUndefined(store.get(a.id))
    assert.strictEqual(store.get(c.id)?.id, c.id)
  })

  it("reads one cookie from a header", () => {
    assert.strictEqual(Session.readCookie("a=1; latchkey_session=x.y; b=2", "latchkey_session"), "x.y")
    assert.isUndefined(Session.readCookie(undefined, "a"))
  })
})
