/**
 * docs/security.md: catalogue rows A30–A40, checklist I1–I4 (implicit) and K7 (`iss`):
 * what the authorize endpoint answers once the client and redirect URI are
 * trusted, and how its responses are delivered.
 */

import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Accounts } from "@latchkey/core"
import { Browser, formOf } from "../helpers.js"
import {
  assertErrorPage,
  assertRedirect,
  assertRedirectError,
  authorizeUrl,
  consentedBrowser,
  get,
  signIn
} from "./browse.js"
import { type Client, cb, read, type Stack, startStack, token } from "./harness.js"

let s: Stack
/** Signed in as alice, consent to A (read,write) remembered. */
let alice: Browser
/** Registered without implicit. */
let codeOnly: Client

beforeAll(async () => {
  s = await startStack()
  alice = await consentedBrowser(s)
  codeOnly = await s.client({ name: "Code Only", grantTypes: ["authorization_code", "refresh_token"] })
})

afterAll(async () => {
  await s?.close()
})

const raw = (query: string) =>
  get(authorizeUrl(s, `client_id=${s.A.appKey}&redirect_uri=${encodeURIComponent(cb)}&${query}`))

describe("A — authorize endpoint: request parameters (docs/security.md, catalogue A)", () => {
  it("A30: response_type missing → 302 redirect-err invalid_request with state", async () => {
    assertRedirectError(await raw("state=a30"), "invalid_request", { state: "a30" })
  })

  it("A31: response_type foo / CODE / code token / token code / code id_token → redirect-err unsupported_response_type; duplicated → err-page", async () => {
    for (const rt of ["foo", "CODE", "code token", "token code", "code id_token", "Token"]) {
      const res = await get(authorizeUrl(s, { response_type: rt, state: "a31" }))
      assertRedirectError(res, "unsupported_response_type", { state: "a31" })
    }
    await assertErrorPage(await raw("response_type=code&response_type=token&state=a31"))
    await assertErrorPage(await raw("response_type=code&response_type=code&state=a31"))
  })

  it("A32: response_type=token for a client without implicit → redirect-err unauthorized_client in the fragment", async () => {
    const res = await get(authorizeUrl(s, { response_type: "token", state: "a32" }, codeOnly))
    assertRedirectError(res, "unauthorized_client", { fragment: true, state: "a32" })
  })

  it("A33: scope=bogus → redirect-err invalid_scope with state", async () => {
    assertRedirectError(
      await get(authorizeUrl(s, { response_type: "code", scope: "bogus", state: "a33" })),
      "invalid_scope",
      { state: "a33" }
    )
    assertRedirectError(
      await get(authorizeUrl(s, { response_type: "code", scope: "read,admin", state: "a33" })),
      "invalid_scope",
      { state: "a33" }
    )
  })

  it("A34: client_type=Desktop / pc → redirect-err invalid_request; duplicated → err-page; empty counts as absent (PC sign-in page)", async () => {
    for (const ct of ["Desktop", "pc", "mobile", "PC "]) {
      const res = await get(authorizeUrl(s, { response_type: "code", client_type: ct, state: "a34" }))
      assertRedirectError(res, "invalid_request", { state: "a34" })
    }
    await assertErrorPage(await raw("response_type=code&client_type=PC&client_type=PC"))
    const empty = await raw("response_type=code&client_type=")
    assert.strictEqual(empty.status, 200)
    assert.include(await empty.text(), 'class="layout-pc"')
  })

  it("A35: hostile state values come back exactly, URL-encoded, with exactly one code; a 4 KB state → redirect-err invalid_request with the state intact", async () => {
    const states = [
      "x&code=evil",
      "x#y",
      "a\r\nSet-Cookie: x=1",
      "<script>alert(1)</script>",
      "\u{1F511}✓",
      "s".repeat(2048)
    ]
    for (const state of states) {
      const res = await alice.fetch(authorizeUrl(s, { response_type: "code", state }))
      const location = res.headers.get("location") ?? ""
      const p = assertRedirect(res)
      assert.strictEqual(p.get("state"), state)
      assert.strictEqual(p.getAll("code").length, 1)
      assert.strictEqual(location.match(/[?&]code=/g)?.length, 1)
      assert.notMatch(location, /[\r\n<>#]/)
      assert.notInclude(res.headers.get("set-cookie") ?? "", "x=1")
    }
    const long = "s".repeat(4096)
    const res = await alice.fetch(authorizeUrl(s, { response_type: "code", state: long }))
    assertRedirectError(res, "invalid_request", { state: long })
  })

  it("A36: implicit success → Location fragment only, no refresh_token, Cache-Control: no-store on the 302", async () => {
    const res = await alice.fetch(authorizeUrl(s, { response_type: "token", state: "a36" }))
    const p = assertRedirect(res, { fragment: true })
    assert.isString(p.get("access_token"))
    assert.isNull(p.get("refresh_token"))
    assert.include(res.headers.get("cache-control") ?? "", "no-store")
    assert.strictEqual(res.headers.get("pragma"), "no-cache")
  })

  it("A37: OPTIONS and GET with Origin: https://evil.example → no Access-Control-Allow-Origin", async () => {
    const url = authorizeUrl(s, { response_type: "code" })
    const preflight = await fetch(url, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "GET" },
      redirect: "manual"
    })
    assert.strictEqual(preflight.status, 405)
    assert.isNull(preflight.headers.get("access-control-allow-origin"))
    assert.isNull(preflight.headers.get("access-control-allow-credentials"))
    const plain = await alice.fetch(url, { headers: { origin: "https://evil.example" } })
    assert.strictEqual(plain.status, 302)
    assert.isNull(plain.headers.get("access-control-allow-origin"))
  })

  it("A38: HEAD never mints a code, records consent or opens a session", async () => {
    // consented alice: GET would 302 with a code; HEAD answers 200 without one
    const head = await alice.fetch(authorizeUrl(s, { response_type: "code", state: "a38" }), {
      method: "HEAD"
    })
    assert.strictEqual(head.status, 200)
    assert.isNull(head.headers.get("location"))
    // not signed in: no session cookie
    const anon = await fetch(authorizeUrl(s, { response_type: "code" }), {
      method: "HEAD",
      redirect: "manual"
    })
    assert.strictEqual(anon.status, 200)
    assert.isNull(anon.headers.get("set-cookie"))
    // bob signed in, on the consent page: HEAD does not record his consent
    await s.runtime.runPromise(Accounts.createUser("bob-a38", "bob-a38-password"))
    const bob = new Browser()
    const url = authorizeUrl(s, { response_type: "code", state: "a38" })
    const signedIn = await signIn(s, bob, url, { username: "bob-a38", password: "bob-a38-password" })
    assert.strictEqual(signedIn.status, 303)
    assert.strictEqual((await bob.fetch(url, { method: "HEAD" })).status, 200)
    const again = await bob.fetch(url)
    assert.strictEqual(again.status, 200)
    assert.include(await again.text(), "Allow</button>")
  })

  it("A39: a previously consented client with an unregistered redirect_uri → err-page (validation not skipped)", async () => {
    for (const uri of [
      "https://evil.example/cb",
      "https://app.example/cb/",
      "https://app.example/cb?next=x"
    ]) {
      await assertErrorPage(await alice.fetch(authorizeUrl(s, { response_type: "code", redirect_uri: uri })))
    }
  })

  it('A40: client_id=<script>alert(1)</script> / redirect_uri="><svg onload=…> → err-page with escaped output', async () => {
    const html1 = await assertErrorPage(
      await get(
        authorizeUrl(
          s,
          `client_id=${encodeURIComponent("<script>alert(1)</script>")}&response_type=code&redirect_uri=${encodeURIComponent(cb)}`
        )
      )
    )
    const html2 = await assertErrorPage(
      await get(authorizeUrl(s, { response_type: "code", redirect_uri: '"><svg onload=alert(1)>' }))
    )
    // a reflected value (a repeated parameter's name is quoted in the description) is escaped
    const evil = encodeURIComponent("<script>alert(1)</script>")
    const html3 = await assertErrorPage(await raw(`${evil}=1&${evil}=2`))
    assert.include(html3, "&lt;script&gt;alert(1)&lt;/script&gt;")
    for (const html of [html1, html2, html3]) {
      assert.notInclude(html, "<script>")
      assert.notInclude(html, "<svg onload")
    }
  })
})

describe("I — implicit grant (docs/security.md, checklist I)", () => {
  it("I1: the token goes in the fragment only, with token_type=Bearer, expires_in, scope and state; never ?access_token", async () => {
    const res = await alice.fetch(authorizeUrl(s, { response_type: "token", state: "i1", scope: "read" }))
    const location = res.headers.get("location") ?? ""
    assert.strictEqual(res.status, 302)
    assert.match(
      location,
      /^https:\/\/app\.example\/cb#access_token=[A-Za-z0-9_-]{43,}&token_type=Bearer&expires_in=\d+&scope=read&state=i1&iss=/
    )
    assert.notInclude(location, "?")
    const p = assertRedirect(res, { fragment: true })
    const me = await fetch(`${s.base}/api/me`, {
      headers: { authorization: `Bearer ${p.get("access_token")}` }
    })
    assert.strictEqual(me.status, 200)
  })

  it("I2: no refresh_token in an implicit response", async () => {
    const p = assertRedirect(await alice.fetch(authorizeUrl(s, { response_type: "token", state: "i2" })), {
      fragment: true
    })
    assert.isString(p.get("access_token"))
    assert.isFalse(p.has("refresh_token"))
  })

  it("I3: a client without implicit → redirect-err unauthorized_client (fragment); implicit tokens live ≤ 1 h", async () => {
    assertRedirectError(
      await get(authorizeUrl(s, { response_type: "token", state: "i3" }, codeOnly)),
      "unauthorized_client",
      { fragment: true, state: "i3" }
    )
    const p = assertRedirect(await alice.fetch(authorizeUrl(s, { response_type: "token", state: "i3" })), {
      fragment: true
    })
    const expiresIn = Number(p.get("expires_in"))
    assert.isTrue(expiresIn > 0 && expiresIn <= 3600, String(expiresIn))
  })

  it("I4: implicit errors go in the fragment — response_type=token&scope=bogus → cb#error=invalid_scope&state=…", async () => {
    const res = await get(authorizeUrl(s, { response_type: "token", scope: "bogus", state: "i4" }))
    assert.match(res.headers.get("location") ?? "", /^https:\/\/app\.example\/cb#error=invalid_scope&/)
    assertRedirectError(res, "invalid_scope", { fragment: true, state: "i4" })
  })
})

describe("K7 — mix-up defence (RFC 9207)", () => {
  it("K7: iss=<issuer> on code, implicit, error and Deny responses, and advertised in the metadata", async () => {
    const iss = `iss=${encodeURIComponent(s.base)}`
    const code = await alice.fetch(authorizeUrl(s, { response_type: "code", state: "k7" }))
    assert.include(code.headers.get("location"), iss)
    assert.strictEqual(assertRedirect(code).get("iss"), s.base)
    const implicit = await alice.fetch(authorizeUrl(s, { response_type: "token", state: "k7" }))
    assert.strictEqual(assertRedirect(implicit, { fragment: true }).get("iss"), s.base)
    assertRedirectError(
      await get(authorizeUrl(s, { response_type: "code", scope: "bogus" })),
      "invalid_scope",
      {
        issuer: s.base
      }
    )
    assertRedirectError(
      await get(authorizeUrl(s, { response_type: "token", scope: "bogus" })),
      "invalid_scope",
      {
        fragment: true,
        issuer: s.base
      }
    )
    // Deny from the consent page
    await s.runtime.runPromise(Accounts.createUser("carol-k7", "carol-k7-password"))
    const carol = new Browser()
    const signedIn = await signIn(s, carol, authorizeUrl(s, { response_type: "code", state: "k7d" }), {
      username: "carol-k7",
      password: "carol-k7-password"
    })
    const consent = formOf(
      await (await carol.fetch(s.base + (signedIn.headers.get("location") as string))).text()
    )
    const denied = await carol.postForm(s.base + consent.action, { ...consent.fields, decision: "deny" })
    assertRedirectError(denied, "access_denied", { status: 303, state: "k7d", issuer: s.base })
    const meta = await read(await fetch(`${s.base}/.well-known/oauth-authorization-server`))
    assert.strictEqual(meta.body.authorization_response_iss_parameter_supported, true)
    assert.strictEqual(meta.body.issuer, s.base)
  })

  it("K7 control: the code delivered with iss redeems at the token endpoint", async () => {
    const p = assertRedirect(await alice.fetch(authorizeUrl(s, { response_type: "code" })))
    const r = await read(
      await token(s, { grant_type: "authorization_code", code: p.get("code") as string, redirect_uri: cb })
    )
    assert.strictEqual(r.status, 200)
    assert.strictEqual(r.body.scope, "read,write")
    assert.isString(r.body.open_id)
  })
})
