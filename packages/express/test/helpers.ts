import { createHash } from "node:crypto"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import {
  Accounts,
  Admin,
  ApplicationStore,
  Config,
  Entropy,
  type Http,
  Memory,
  PasswordHasher,
  type Pkce,
  Throttle
} from "@latchkey/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import express from "express"
import { oauthRouter, principal, requireBearer } from "../src/index.js"
import type { Options } from "../src/OAuthRouter.js"

/** A fast, obviously-not-for-production password hasher for tests. */
export const testHasher = Layer.succeed(PasswordHasher.PasswordHasher, {
  hash: (password) => Effect.succeed(`test$${createHash("sha256").update(password).digest("hex")}`),
  verify: (password, hash) =>
    Effect.succeed(hash === `test$${createHash("sha256").update(password).digest("hex")}`)
})

/** The audience `/api/orders` expects of a JWT access token. */
export const ordersAudience = "https://orders.example"

export interface TestServer {
  readonly base: string
  readonly issuer: string
  readonly runtime: ManagedRuntime.ManagedRuntime<Http.Requirements, unknown>
  readonly close: () => Promise<void>
}

export interface StartOptions {
  /** Mount point of the router (and path of the issuer), e.g. "/auth". */
  readonly prefix?: string
  /** The issuer, when it is not the server's own address (e.g. https behind a proxy). */
  readonly issuer?: string
  readonly throttle?: Throttle.Policy
  readonly router?: Options
  readonly config?: Partial<Omit<Config.Settings, "issuer" | "serverKey">>
}

/** Start Express with the Memory layer on 127.0.0.1 and an ephemeral port. */
export const startServer = async (options: StartOptions = {}): Promise<TestServer> => {
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const prefix = options.prefix ?? ""
  const base = `http://127.0.0.1:${port}${prefix}`
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      Memory.layer,
      Config.layer({
        issuer: options.issuer ?? base,
        serverKey: "test-server-key-0123456789abcdef",
        ...options.config
      }),
      Entropy.layer,
      testHasher,
      Throttle.layer(options.throttle)
    )
  )
  const app = express()
  app.disable("x-powered-by")
  app.use(
    prefix === "" ? "/" : prefix,
    oauthRouter(runtime, { scopeDescriptions: { profile: "Read your profile" }, ...options.router })
  )
  app.get(`${prefix}/api/me`, requireBearer(runtime, { scope: "profile" }), (req, res) => {
    const p = principal(req)
    res.json({ open_id: p.openId, client_id: p.clientId, scope: p.scope.join(",") })
  })
  app.get(`${prefix}/api/admin`, requireBearer(runtime, { scope: ["admin"] }), (_req, res) => {
    res.json({ ok: true })
  })
  // A resource server that expects JWT access tokens for its own audience
  app.get(
    `${prefix}/api/orders`,
    requireBearer(runtime, { scope: "profile", realm: "orders", audience: ordersAudience }),
    (req, res) => {
      const p = principal(req)
      res.json({ open_id: p.openId, client_id: p.clientId, scope: p.scope.join(",") })
    }
  )
  server.on("request", app)
  return {
    base,
    issuer: options.issuer ?? base,
    runtime,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await runtime.dispose()
    }
  }
}

export interface NewApp {
  readonly name?: string
  readonly redirectUris?: ReadonlyArray<string>
  readonly scope?: string
  readonly grantTypes?: ReadonlyArray<string>
  readonly requirePkce?: boolean
  /** `jwt` for JWT access tokens (RFC 9068), for `accessTokenAudience` when given. */
  readonly accessTokenFormat?: "opaque" | "jwt"
  readonly accessTokenAudience?: string
}

/** Register an application; returns its credentials. */
export const createApp = async (
  s: TestServer,
  input: NewApp = {}
): Promise<{ appKey: string; appSecret: string; redirectUri: string }> => {
  const redirectUris = input.redirectUris ?? ["https://app.example/cb"]
  const created = await s.runtime.runPromise(
    Admin.createApplication({
      name: input.name ?? "Acme Notes",
      redirectUris,
      scope: input.scope ?? "profile,email",
      grantTypes: input.grantTypes ?? [
        "authorization_code",
        "implicit",
        "password",
        "client_credentials",
        "refresh_token"
      ],
      requirePkce: input.requirePkce ?? false
    })
  )
  if (input.accessTokenFormat !== undefined) {
    const { accessTokenFormat, accessTokenAudience } = input
    // Registered again with the format set (nothing was issued to it yet)
    await s.runtime.runPromise(
      Effect.flatMap(ApplicationStore.ApplicationStore, (store) =>
        Effect.zipRight(
          store.remove(created.app.appKey, 0),
          store.insert({
            ...created.app,
            accessTokenFormat,
            ...(accessTokenAudience === undefined ? {} : { accessTokenAudience })
          })
        )
      )
    )
  }
  return { appKey: created.app.appKey, appSecret: created.appSecret, redirectUri: redirectUris[0] as string }
}

let userCounter = 0
/** Create a user with a fresh random name. */
export const createUser = async (
  s: TestServer,
  password = "correct horse battery"
): Promise<{ username: string; password: string }> => {
  const username = `user${++userCounter}-${Math.random().toString(36).slice(2, 8)}`
  await s.runtime.runPromise(Accounts.createUser(username, password))
  return { username, password }
}

export const basic = (key: string, secret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(key)}:${encodeURIComponent(secret)}`).toString("base64")}`

/** POST a form to a JSON endpoint. */
export const postForm = (
  url: string,
  fields: Record<string, string> | string,
  headers: Record<string, string> = {}
): Promise<Response> =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: typeof fields === "string" ? fields : new URLSearchParams(fields).toString(),
    redirect: "manual"
  })

/** Token request with Basic credentials. */
export const tokenRequest = (
  s: TestServer,
  app: { appKey: string; appSecret: string },
  fields: Record<string, string>
): Promise<Response> =>
  postForm(`${s.base}/oauth2/oauth2/token`, fields, { authorization: basic(app.appKey, app.appSecret) })

/** A browser: a cookie jar and manual redirects. */
export class Browser {
  readonly cookies = new Map<string, string>()
  readonly setCookieHeaders: Array<string> = []
  constructor(readonly headers: Record<string, string> = {}) {}

  private cookieHeader(): Record<string, string> {
    if (this.cookies.size === 0) return {}
    return { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ") }
  }

  private remember(res: Response): Response {
    for (const c of res.headers.getSetCookie()) {
      this.setCookieHeaders.push(c)
      const [pair] = c.split(";")
      const eq = (pair as string).indexOf("=")
      const name = (pair as string).slice(0, eq)
      const value = (pair as string).slice(eq + 1)
      if (/max-age=0/i.test(c) || value === "") this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    return res
  }

  async get(url: string, init: RequestInit = {}): Promise<Response> {
    return this.remember(
      await fetch(url, {
        ...init,
        redirect: "manual",
        headers: {
          accept: "text/html",
          ...this.headers,
          ...this.cookieHeader(),
          ...(init.headers as Record<string, string>)
        }
      })
    )
  }

  async post(
    url: string,
    fields: Record<string, string>,
    headers: Record<string, string> = {}
  ): Promise<Response> {
    return this.remember(
      await fetch(url, {
        method: "POST",
        redirect: "manual",
        headers: {
          accept: "text/html",
          "content-type": "application/x-www-form-urlencoded",
          ...this.headers,
          ...this.cookieHeader(),
          ...headers
        },
        body: new URLSearchParams(fields).toString()
      })
    )
  }
}

/** The hidden fields and form actions of a page. */
export const forms = (html: string): Array<{ action: string; fields: Record<string, string> }> => {
  const out: Array<{ action: string; fields: Record<string, string> }> = []
  for (const m of html.matchAll(/<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)) {
    const fields: Record<string, string> = {}
    for (const i of (m[2] as string).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
      fields[i[1] as string] = (i[2] as string).replace(/&amp;/g, "&")
    }
    out.push({ action: (m[1] as string).replace(/&amp;/g, "&"), fields })
  }
  return out
}

export const authorizeUrl = (s: TestServer, params: Record<string, string>): string =>
  `${s.base}/oauth2/oauth2/authorize?${new URLSearchParams(params).toString()}`

/** Origin of a test server, for absolute form actions. */
export const originOf = (s: TestServer): string => new URL(s.base).origin

/** Sign in on the login page shown for `url`; returns the response to the login POST. */
export const signIn = async (
  s: TestServer,
  browser: Browser,
  url: string,
  user: { username: string; password: string }
): Promise<Response> => {
  const page = await browser.get(url)
  const html = await page.text()
  const form = forms(html)[0]
  if (form === undefined) throw new Error(`no login form (status ${page.status}): ${html.slice(0, 300)}`)
  return browser.post(originOf(s) + form.action, {
    ...form.fields,
    username: user.username,
    password: user.password
  })
}

/** Run the whole browser flow (sign in, Allow) and return the final redirect Location. */
export const authorizeAndAllow = async (
  s: TestServer,
  browser: Browser,
  params: Record<string, string>,
  user: { username: string; password: string }
): Promise<string> => {
  const url = authorizeUrl(s, params)
  const login = await signIn(s, browser, url, user)
  if (login.status !== 303) throw new Error(`login answered ${login.status}: ${await login.text()}`)
  const again = await browser.get(originOf(s) + (login.headers.get("location") as string))
  if (again.status === 302) return again.headers.get("location") as string
  const html = await again.text()
  const consent = forms(html).find((f) => f.fields.switch_account === undefined)
  if (consent === undefined) throw new Error(`no consent form (status ${again.status})`)
  const allowed = await browser.post(originOf(s) + consent.action, { ...consent.fields, decision: "allow" })
  if (allowed.status !== 303) throw new Error(`consent answered ${allowed.status}: ${await allowed.text()}`)
  return allowed.headers.get("location") as string
}

/** The `code` in a redirect Location. */
export const codeOf = (location: string): string => new URL(location).searchParams.get("code") as string

/** A PKCE verifier and its S256 challenge. */
export const pkce = (): { verifier: string; challenge: string; method: Pkce.Method } => {
  const verifier = `${Math.random().toString(36).slice(2)}${"a".repeat(43)}`.slice(0, 64)
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url"), method: "S256" }
}
