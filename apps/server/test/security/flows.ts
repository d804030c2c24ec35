/**
 * Shared steps of the token-endpoint catalogue files (TokenTransport, ClientAuth,
 * Grants, Refresh, Scope, PasswordGrant, Tokens): codes through the real sign-in
 * and consent pages, raw sockets for framing rows.
 */
import { connect } from "node:net"
import { afterAll, assert, beforeAll } from "@effect/vitest"
import { Accounts, UserStore } from "@latchkey/core"
import { Effect } from "effect"
import { Browser, formOf } from "../helpers.js"
import { type Client, cb, post, read, type Stack, type StackOptions, startStack, token } from "./harness.js"

/** The authorize URL of a code request (client A and `cb` unless overridden). */
export const authorizeUrl = (s: Stack, params: Record<string, string> = {}, client: Client = s.A): string =>
  `${s.base}/oauth2/oauth2/authorize?${new URLSearchParams({
    response_type: "code",
    client_id: client.appKey,
    redirect_uri: cb,
    state: "st",
    ...params
  })}`

/** The `code` of a redirect to the client; fails when there is none. */
const codeOf = (location: string): string => {
  const code = new URL(location).searchParams.get("code")
  if (code === null) throw new Error(`no code in ${location}`)
  return code
}

/** A browser signed in as a user: `authorize` answers the redirect to the client (allowing consent once). */
export interface SignedIn {
  readonly browser: Browser
  /** Follow an authorize request to the client's redirect (Location). */
  readonly authorize: (url: string) => Promise<string>
  /** A fresh authorization code for client A (or `client`), with extra authorize parameters. */
  readonly code: (params?: Record<string, string>, client?: Client) => Promise<string>
}

/** Sign in through the real login page and allow client A; later requests reuse the session and consent. */
export const signIn = async (
  s: Stack,
  user: { readonly username: string; readonly password: string } = s.alice
): Promise<SignedIn> => {
  const browser = new Browser()
  const origin = new URL(s.base).origin
  const first = await browser.fetch(authorizeUrl(s))
  const login = formOf(await first.text())
  const signedIn = await browser.postForm(origin + login.action, { ...login.fields, ...user })
  if (signedIn.status !== 303) throw new Error(`sign-in answered ${signedIn.status}`)
  const authorize = async (url: string): Promise<string> => {
    const page = await browser.fetch(url)
    if (page.status === 302) return page.headers.get("location") as string
    if (page.status !== 200) throw new Error(`authorize answered ${page.status}`)
    const consent = formOf(await page.text())
    const allowed = await browser.postForm(origin + consent.action, { ...consent.fields, decision: "allow" })
    if (allowed.status !== 303) throw new Error(`consent answered ${allowed.status}`)
    return allowed.headers.get("location") as string
  }
  // consent for client A's full scope once, so later codes are one GET each (and parallel
  // requests do not each open a consent form: a session keeps only a few pending ones)
  await authorize(authorizeUrl(s))
  return {
    browser,
    authorize,
    code: async (params = {}, client = s.A) => codeOf(await authorize(authorizeUrl(s, params, client)))
  }
}

/**
 * Assert a JSON error of the token endpoints (RFC 6749 §5.2): status, `error`, the no-store
 * headers, JSON (never HTML or a stack trace) and no token.
 */
export const expectError = (
  r: { readonly status: number; readonly body: Record<string, unknown>; readonly res: Response },
  status: number,
  error: string
): void => {
  assert.strictEqual(r.status, status, JSON.stringify(r.body))
  assert.strictEqual(r.body.error, error, JSON.stringify(r.body))
  assert.strictEqual(r.res.headers.get("content-type"), "application/json; charset=utf-8")
  assert.strictEqual(r.res.headers.get("cache-control"), "no-store")
  assert.isUndefined(r.body.access_token)
  assert.notInclude(JSON.stringify(r.body), "    at ")
}

/** Redeem a code for client A at `cb`. */
export const redeem = (s: Stack, code: string, extra: Record<string, string> = {}, client: Client = s.A) =>
  token(s, { grant_type: "authorization_code", code, redirect_uri: cb, ...extra }, client)

/** Refresh with a refresh token for client A. */
export const refresh = (s: Stack, refreshToken: string, extra: Record<string, string> = {}, client = s.A) =>
  token(s, { grant_type: "refresh_token", refresh_token: refreshToken, ...extra }, client)

/** Introspect a token as client A; returns the parsed JSON. */
export const introspect = async (s: Stack, value: string, client: Client = s.A) =>
  (await read(await post(s, "/oauth2/oauth2/introspect", { token: value }, { authorization: client.basic })))
    .body

/** A token set (access + refresh) for a per-user client_credentials grant. */
export const tokenSet = async (
  s: Stack,
  client: Client = s.A,
  openId = "device-1"
): Promise<{ access: string; refresh: string }> => {
  const r = await read(await token(s, { grant_type: "client_credentials", open_id: openId }, client))
  if (r.status !== 200) throw new Error(`client_credentials answered ${r.status}`)
  return { access: r.body.access_token as string, refresh: r.body.refresh_token as string }
}

/** Create a platform user directly in the stack's database. */
export const createUser = async (s: Stack, username: string, password: string) =>
  s.runtime.runPromise(Accounts.createUser(username, password))

/** Delete a user as `user delete` does (consents deleted, tokens revoked). */
export const deleteUser = async (s: Stack, userId: string) =>
  s.runtime.runPromise(
    Effect.flatMap(UserStore.UserStore, (users) => users.remove(userId, Math.floor(Date.now() / 1000)))
  )

/** The port of a stack or server base URL. */
export const portOf = (base: string): number => Number(new URL(base).port)

/** What a raw exchange returned. */
export interface RawResult {
  /** Everything the server sent. */
  readonly text: string
  /** Whether the server closed (or reset) the connection before the deadline. */
  readonly closed: boolean
  readonly elapsedMs: number
}

/**
 * Send raw bytes to 127.0.0.1:`port` and collect the answer until the server closes
 * the connection or `timeoutMs` passes (then the socket is destroyed).
 */
export const rawExchange = (port: number, data: string | Buffer, timeoutMs = 3000): Promise<RawResult> =>
  new Promise((resolve) => {
    const start = Date.now()
    const socket = connect({ host: "127.0.0.1", port })
    let text = ""
    let done = false
    const finish = (closed: boolean) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ text, closed, elapsedMs: Date.now() - start })
    }
    const timer = setTimeout(() => finish(false), timeoutMs)
    socket.setEncoding("latin1")
    socket.on("data", (d: string) => {
      text += d
    })
    socket.on("error", () => finish(true))
    socket.on("close", () => finish(true))
    socket.on("connect", () => socket.write(data))
  })

/** The status code of a raw HTTP/1.1 response, or 0. */
export const rawStatus = (text: string): number => {
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(text)
  return m === null ? 0 : Number(m[1])
}

/** The JSON body of a raw, non-chunked HTTP response. */
export const rawJson = (text: string): Record<string, unknown> => {
  const body = text.slice(text.indexOf("\r\n\r\n") + 4)
  return JSON.parse(body) as Record<string, unknown>
}

/** Shannon entropy of a string's characters times its length, in bits (OIDF EnsureMinimum…Entropy). */
export const entropyBits = (s: string): number => {
  const counts = new Map<string, number>()
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1)
  let h = 0
  for (const n of counts.values()) {
    const p = n / s.length
    h -= p * Math.log2(p)
  }
  return h * s.length
}

/** Headers of a response without the per-request ones, for byte-for-byte comparisons. */
export const stableHeaders = (res: Response): Record<string, string> => {
  const out: Record<string, string> = {}
  res.headers.forEach((v, k) => {
    if (k !== "date" && k !== "x-request-id") out[k] = v
  })
  return out
}

/**
 * Send failing attempts one after another until one is refused with 429 (at most
 * `max` attempts); returns every answer.
 */
export const untilThrottled = async (
  max: number,
  attempt: (i: number) => Promise<Response>
): Promise<Array<Awaited<ReturnType<typeof read>>>> => {
  const answers: Array<Awaited<ReturnType<typeof read>>> = []
  for (let i = 0; i < max; i++) {
    const r = await read(await attempt(i))
    answers.push(r)
    if (r.status === 429) break
  }
  return answers
}

/** The Retry-After of a 429, checked to be a whole number of seconds ≥ 1. */
export const retryAfter = (r: { readonly res: Response }): number => {
  const value = r.res.headers.get("retry-after")
  assert.match(value ?? "", /^[1-9][0-9]*$/, "429 without a valid Retry-After")
  return Number(value)
}

/** Start a stack and sign alice in before a file's tests, close it after; `use` receives both. */
export const useSignedInStack = (use: (s: Stack, alice: SignedIn) => void, options?: StackOptions): void => {
  let stack: Stack | undefined
  beforeAll(async () => {
    stack = await startStack(options)
    use(stack, await signIn(stack))
  })
  afterAll(async () => {
    await stack?.close()
  })
}
