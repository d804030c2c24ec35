/**
 * Driving the authorize endpoint and its pages for the security catalogue:
 * authorize URLs, a signed-in browser with consent remembered, and the two
 * shapes every answer must have (an error page without `Location`, or a
 * redirect to the registered URI).
 */
import { assert } from "@effect/vitest"
import { Browser, formOf } from "../helpers.js"
import { type Client, cb, type Stack } from "./harness.js"

/** Path of the authorize endpoint. */
export const authorizePath = "/oauth2/oauth2/authorize"

/** An authorize URL for `client` (default A) with `redirect_uri=cb`; a string is sent as the raw query. */
export const authorizeUrl = (
  s: Stack,
  params: Record<string, string> | string,
  client: Client = s.A
): string =>
  typeof params === "string"
    ? `${s.base}${authorizePath}?${params}`
    : `${s.base}${authorizePath}?${new URLSearchParams({ client_id: client.appKey, redirect_uri: cb, ...params })}`

/** GET without following redirects, as a browser asking for HTML. */
export const get = (url: string, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(url, { headers: { accept: "text/html", ...headers }, redirect: "manual" })

/**
 * The error page for an untrusted client or redirect URI (RFC 6749 §4.1.2.1): 400 HTML with
 * the error code, and no redirect at all. Returns the HTML.
 */
export const assertErrorPage = async (
  res: Response,
  error = "invalid_request",
  status = 400
): Promise<string> => {
  const html = await res.text()
  assert.strictEqual(res.status, status, html.slice(0, 300))
  assert.isNull(res.headers.get("location"))
  assert.match(res.headers.get("content-type") ?? "", /^text\/html/)
  assert.include(html, `<span class="code">${error}</span>`)
  return html
}

/**
 * A redirect to `redirectUri` (default `cb`) with its response parameters in the
 * query or, for implicit, the fragment; returns them.
 */
export const assertRedirect = (
  res: Response,
  options: { status?: number; fragment?: boolean; redirectUri?: string } = {}
): URLSearchParams => {
  const location = res.headers.get("location") ?? ""
  assert.strictEqual(res.status, options.status ?? 302, location)
  const sep = options.fragment === true ? "#" : "?"
  assert.isTrue(location.startsWith((options.redirectUri ?? cb) + sep), location)
  const url = new URL(location)
  if (options.fragment === true) {
    assert.strictEqual(url.search, "")
    return new URLSearchParams(url.hash.slice(1))
  }
  return url.searchParams
}

/** A redirect carrying `error` (and `state` when given) to the registered URI. */
export const assertRedirectError = (
  res: Response,
  error: string,
  options: { status?: number; fragment?: boolean; state?: string | null; issuer?: string } = {}
): URLSearchParams => {
  const p = assertRedirect(res, options)
  assert.strictEqual(p.get("error"), error)
  assert.isNull(p.get("code"))
  assert.isNull(p.get("access_token"))
  if (options.state !== undefined) assert.strictEqual(p.get("state"), options.state)
  if (options.issuer !== undefined) assert.strictEqual(p.get("iss"), options.issuer)
  return p
}

/** The sign-in form of an authorize page, filled in and posted; returns the 303. */
export const signIn = async (
  s: Stack,
  browser: Browser,
  url: string,
  user: { username: string; password: string } = s.alice,
  extra: Record<string, string> = {}
): Promise<Response> => {
  const page = await browser.fetch(url)
  assert.strictEqual(page.status, 200)
  const login = formOf(await page.text())
  return browser.postForm(s.base + login.action, { ...login.fields, ...user, ...extra })
}

/**
 * A browser signed in as alice that has allowed `client` the scopes `read,write`,
 * so the next valid authorize request goes straight back with a code.
 */
export const consentedBrowser = async (s: Stack, client: Client = s.A): Promise<Browser> => {
  const browser = new Browser()
  const signedIn = await signIn(
    s,
    browser,
    authorizeUrl(s, { response_type: "code", scope: "read,write" }, client)
  )
  assert.strictEqual(signedIn.status, 303)
  const next = await browser.fetch(s.base + (signedIn.headers.get("location") as string))
  if (next.status === 200) {
    const consent = formOf(await next.text())
    const allowed = await browser.postForm(s.base + consent.action, { ...consent.fields, decision: "allow" })
    assert.strictEqual(allowed.status, 303)
  } else {
    assert.strictEqual(next.status, 302)
  }
  return browser
}
