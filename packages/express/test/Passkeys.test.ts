import { createHash } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import * as Pages from "../src/Pages.js"

const login = (passkey?: { challenge: string; login: string }) =>
  Pages.login({
    layout: "PC",
    productName: "Latchkey",
    appName: "Acme",
    redirectHost: "app.example",
    action: "/oauth2/oauth2/login",
    txn: "t",
    csrf: "c",
    ...(passkey === undefined ? {} : { passkey })
  })

const hash = (script: string) => `'sha256-${createHash("sha256").update(script).digest("base64")}'`

describe("passkeys on the pages", () => {
  it("without passkeys the sign-in page has no script and its CSP none", () => {
    const html = login()
    assert.notInclude(html, "<script")
    assert.notInclude(html, "webauthn")
    assert.notInclude(Pages.contentSecurityPolicy(["'self'"]), "script-src")
  })

  it("with passkeys: the button (hidden until the script finds WebAuthn), autofill, and a script its CSP hash allows", () => {
    const html = login({ challenge: "/p/challenge", login: "/p/login" })
    assert.include(html, 'id="passkey" hidden data-challenge="/p/challenge" data-login="/p/login"')
    assert.include(html, 'autocomplete="username webauthn"')
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? ""
    const csp = Pages.contentSecurityPolicy(["'self'"], [hash(script)])
    assert.include(csp, `script-src ${hash(script)}`)
    assert.include(csp, "connect-src 'self'")
    assert.include(csp, "default-src 'none'")
  })

  it("the registration script's CSP source is its hash", () => {
    assert.strictEqual(Pages.passkeyRegistrationSource, hash(Pages.passkeyRegistrationScript))
    assert.include(Pages.passkeyRegistrationScript, "window.latchkeyRegisterPasskey=")
  })
})
