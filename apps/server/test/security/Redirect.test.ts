/**
 * docs/security.md: checklist R1–R8 and catalogue rows A1–A3, A10–A23: the redirect URI
 * is compared by exact string equality, and a request whose client or redirect
 * URI cannot be trusted gets an error page, never a redirect.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Browser } from "../helpers.js"
import {
  assertErrorPage,
  assertRedirect,
  assertRedirectError,
  authorizePath,
  authorizeUrl,
  consentedBrowser,
  get,
  signIn
} from "./browse.js"
import { type Client, cb, type Stack, startStack } from "./harness.js"

let s: Stack
/** Signed in as alice, consent to A remembered: a valid request goes straight back with a code. */
let alice: Browser
/** Registered with two redirect URIs. */
let two: Client

beforeAll(async () => {
  s = await startStack()
  alice = await consentedBrowser(s)
  two = await s.client({ name: "Two Callbacks", redirectUris: [cb, "https://app.example/other"] })
})

afterAll(async () => {
  await s?.close()
})

/** An authorize request for client A with this redirect_uri (not signed in). */
const withRedirect = (redirectUri: string, extra: Record<string, string> = {}) =>
  get(
    `${s.base}${authorizePath}?${new URLSearchParams({
      response_type: "code",
      client_id: s.A.appKey,
      redirect_uri: redirectUri,
      state: "xyz",
      ...extra
    })}`
  )

/** Register an application with one redirect URI; the error message when refused. */
const register = async (uri: string): Promise<string | null> => {
  try {
    await s.client({ name: "Registration probe", redirectUris: [uri] })
    return null
  } catch (e) {
    return String(e)
  }
}

/** Catalogue A10–A23: every variant of `cb` that is not `cb` itself. */
const variants: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["A10", ["https://app.example/cb/"]],
  ["A11", ["https://app.example/cb?x=1"]],
  ["A12", ["https://app.example/cb#frag"]],
  ["A13", ["https://APP.example/cb", "HTTPS://app.example/cb"]],
  ["A14", ["https://app.example:443/cb"]],
  [
    "A15",
    [
      "https://app.example/cb/../cb",
      "https://app.example/cb/%2e%2e/x",
      "https://app.example/cb%2f..%2fx",
      "https://app.example/cb/%252e%252e/x"
    ]
  ],
  ["A16", ["https://app.example.evil.com/cb", "https://evilapp.example/cb"]],
  [
    "A17",
    [
      "https://app.example@evil.com/cb",
      "https://evil.com\\@app.example/cb",
      "https://evil.com%2f@app.example/cb",
      "https://evil.com%23@app.example/cb"
    ]
  ],
  ["A18", ["https://\u0430pp.example/cb", new URL("https://\u0430pp.example/cb").href]],
  ["A19", ["//evil.com/cb", "/\\evil.com", "https:/app.example/cb", "https:\\\\app.example\\cb"]],
  ["A20", ["javascript:alert(1)//", "data:text/html,<script>alert(1)</script>", "vbscript:msgbox(1)"]],
  ["A21", ["http://app.example/cb"]],
  ["A22", ["https://app.example/cb\u0000", "https://app.example/cb\r\nSet-Cookie: x=1"]],
  ["A23", ["https://app.example/c%62"]]
]

describe("R — redirect URI handling (docs/security.md, checklist R)", () => {
  it("R1: exact string comparison — cb itself → 302 to it; every A10–A23 variant → err-page, even signed in with consent", async () => {
    const ok = await alice.fetch(authorizeUrl(s, { response_type: "code", state: "r1" }))
    const p = assertRedirect(ok)
    assert.isString(p.get("code"))
    assert.strictEqual(p.get("state"), "r1")
    for (const [, uris] of variants) {
      for (const uri of uris) {
        const res = await alice.fetch(
          `${s.base}${authorizePath}?${new URLSearchParams({
            response_type: "code",
            client_id: s.A.appKey,
            redirect_uri: uri,
            state: "r1"
          })}`
        )
        await assertErrorPage(res)
      }
    }
  })

  it("R1 (exact match as RFC 9700 §2.1 asks, without the loopback port exception of RFC 8252 §7.3): http://127.0.0.1:4000/cb registered, :5000 → err-page", async () => {
    const loopback = await s.client({ name: "Native", redirectUris: ["http://127.0.0.1:4000/cb"] })
    const url = (redirectUri: string) =>
      authorizeUrl(s, { response_type: "code", redirect_uri: redirectUri }, loopback)
    assert.strictEqual((await get(url("http://127.0.0.1:4000/cb"))).status, 200)
    await assertErrorPage(await get(url("http://127.0.0.1:5000/cb")))
    await assertErrorPage(await get(url("http://127.0.0.1/cb")))
  })

  it("R2: client_id=nope or redirect_uri=https://evil.example/ → err-page, no Location (HTML and JSON)", async () => {
    const unknown = authorizeUrl(
      s,
      `response_type=code&client_id=nope&redirect_uri=${encodeURIComponent(cb)}`
    )
    await assertErrorPage(await get(unknown))
    await assertErrorPage(await withRedirect("https://evil.example/"))
    const json = await get(unknown, { accept: "application/json" })
    assert.strictEqual(json.status, 400)
    assert.isNull(json.headers.get("location"))
    assert.strictEqual(((await json.json()) as { error: string }).error, "invalid_request")
  })

  it("R3: a redirect URI with a fragment, javascript:, data: or file: is refused at registration; …/cb#x at runtime → err-page", async () => {
    for (const uri of [
      "https://app.example/cb#x",
      "javascript:alert(1)",
      "data:text/html,x",
      "file:///etc/passwd",
      "/relative/cb"
    ]) {
      const refused = await register(uri)
      assert.isNotNull(refused, uri)
    }
    await assertErrorPage(await withRedirect("https://app.example/cb#x"))
  })

  it("R4: http://app.example/cb is refused at registration (loopback http allowed); the http variant of cb → err-page", async () => {
    assert.include(await register("http://app.example/cb"), "https")
    assert.isNull(await register("http://127.0.0.1:8765/cb"))
    assert.isNull(await register("http://localhost/cb"))
    await assertErrorPage(await withRedirect("http://app.example/cb"))
  })

  it("R5 (stricter than RFC 6749 §3.1.2.3: redirect_uri is required even with one registered URI): omitted → err-page with one or two registered", async () => {
    await assertErrorPage(await get(authorizeUrl(s, `response_type=code&client_id=${s.A.appKey}&state=r5`)))
    await assertErrorPage(
      await alice.fetch(authorizeUrl(s, `response_type=code&client_id=${s.A.appKey}&state=r5`))
    )
    await assertErrorPage(await get(authorizeUrl(s, `response_type=code&client_id=${two.appKey}&state=r5`)))
  })

  it("R6 (no next/return_to parameter exists): next=https://evil.example, //evil.example, /\\evil.example on authorize, login and error pages never redirect off-origin", async () => {
    for (const next of ["https://evil.example", "//evil.example", "/\\evil.example"]) {
      // the login page takes no GET: 405 page, no Location
      const login = await get(
        `${s.base}/oauth2/oauth2/login?${new URLSearchParams({ next, return_to: next })}`
      )
      await assertErrorPage(login, "invalid_request", 405)
      // an error page with next= still does not redirect
      await assertErrorPage(await withRedirect("https://evil.example/cb", { next, return_to: next }))
      // a signed-in, consented user with next= in the request lands on the registered URI
      const res = await alice.fetch(
        authorizeUrl(s, { response_type: "code", state: "r6", next, return_to: next })
      )
      const p = assertRedirect(res)
      assert.strictEqual(p.get("state"), "r6")
    }
  })

  it("R6: a next=https://evil.example field posted with the sign-in form → 303 to a same-origin path, then the registered URI", async () => {
    const b = new Browser()
    const res = await signIn(s, b, authorizeUrl(s, { response_type: "code", state: "r6b" }), s.alice, {
      next: "https://evil.example",
      return_to: "//evil.example"
    })
    assert.strictEqual(res.status, 303)
    const location = res.headers.get("location") ?? ""
    assert.isTrue(location.startsWith(`${authorizePath}?`), location)
    const back = await b.fetch(s.base + location)
    assertRedirect(back)
  })

  it("R7 (RFC 6749 §4.1.2.1: errors for a validated client and exact redirect_uri go straight back): not signed in, scope=bogus → 302 invalid_scope, no login page", async () => {
    const res = await get(authorizeUrl(s, { response_type: "code", scope: "bogus", state: "r7" }))
    assertRedirectError(res, "invalid_scope", { state: "r7" })
    assert.isNull(res.headers.get("set-cookie"))
  })

  it("R8 (optional #_ not implemented): the code response Location carries no fragment at all", async () => {
    const res = await alice.fetch(authorizeUrl(s, { response_type: "code", state: "r8" }))
    const location = res.headers.get("location") ?? ""
    assertRedirect(res)
    assert.notInclude(location, "#")
    assert.strictEqual(new URL(location).hash, "")
  })
})

describe("A — authorize endpoint: client and redirect URI (docs/security.md, catalogue A)", () => {
  it("A1: client_id unknown, missing or duplicated → err-page, no Location", async () => {
    const r = `redirect_uri=${encodeURIComponent(cb)}&response_type=code&state=a1`
    await assertErrorPage(await get(authorizeUrl(s, `client_id=unknown-app&${r}`)))
    await assertErrorPage(await get(authorizeUrl(s, r)))
    await assertErrorPage(await get(authorizeUrl(s, `client_id=&${r}`)))
    await assertErrorPage(await get(authorizeUrl(s, `client_id=${s.A.appKey}&client_id=${s.A.appKey}&${r}`)))
    await assertErrorPage(await get(authorizeUrl(s, `client_id=${s.A.appKey}&client_id=${s.B.appKey}&${r}`)))
  })

  it("A2: redirect_uri duplicated (same value or two values) → err-page", async () => {
    const c = encodeURIComponent(cb)
    const q = `client_id=${s.A.appKey}&response_type=code&state=a2`
    await assertErrorPage(await get(authorizeUrl(s, `${q}&redirect_uri=${c}&redirect_uri=${c}`)))
    await assertErrorPage(
      await get(
        authorizeUrl(s, `${q}&redirect_uri=${c}&redirect_uri=${encodeURIComponent("https://evil.example/")}`)
      )
    )
    await assertErrorPage(await alice.fetch(authorizeUrl(s, `${q}&redirect_uri=${c}&redirect_uri=${c}`)))
  })

  it("A3: two URIs registered, redirect_uri omitted → err-page", async () => {
    await assertErrorPage(await get(authorizeUrl(s, `client_id=${two.appKey}&response_type=code&state=a3`)))
    // either registered URI, given exactly, is accepted
    for (const uri of [cb, "https://app.example/other"]) {
      const ok = await get(authorizeUrl(s, { response_type: "code", redirect_uri: uri }, two))
      assert.strictEqual(ok.status, 200)
    }
  })

  for (const [id, uris] of variants) {
    it(`${id}: redirect_uri ${uris.map((u) => JSON.stringify(u)).join(" / ")} → err-page, no Location`, async () => {
      for (const uri of uris) {
        const res = await withRedirect(uri)
        const html = await assertErrorPage(res)
        assert.isNull(res.headers.get("set-cookie"))
        // A20/A22: nothing of the value is reflected unescaped, and never as a link or form target:
        // the page names the value received only as escaped text
        assert.notInclude(html, "<script>alert(1)")
        assert.notMatch(html, /(?:href|src|action)="[^"]*(?:javascript|data|vbscript):/i)
        assert.notInclude(html.replace(/<code class="code">[^<]*<\/code>/, ""), "javascript:alert")
        assert.notInclude(html, "Sign in</h1>")
      }
    })
  }

  it("A22: a CR LF in redirect_uri cannot inject a header (raw %0d%0a in the query)", async () => {
    const res = await get(
      authorizeUrl(
        s,
        `client_id=${s.A.appKey}&response_type=code&redirect_uri=${encodeURIComponent(cb)}%0d%0aSet-Cookie:%20x=1`
      )
    )
    await assertErrorPage(res)
    assert.isNull(res.headers.get("set-cookie"))
  })

  it("A10–A23 control: the registered value itself opens the sign-in page (200)", async () => {
    const res = await withRedirect(cb)
    assert.strictEqual(res.status, 200)
    assert.include(await res.text(), "Sign in</h1>")
  })
})
