/**
 * The Express router of Latchkey: the JSON endpoints (token, introspection,
 * revocation, metadata) handed to `Http.route` as raw requests, and the
 * authorize endpoint with its sign-in and consent pages. It only translates
 * between HTTP and the core; no OAuth rule lives here.
 */
import {
  Accounts,
  Audit,
  Authorize,
  Config,
  Form,
  Http,
  Metadata,
  type Scope,
  type StorageError,
  UserStore
} from "@latchkey/core"
import { Body, NodeHttp } from "@latchkey/node"
import { Cause, Effect, Exit, type ManagedRuntime, Option } from "effect"
import express, {
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  type Router
} from "express"
import helmet from "helmet"
import * as Pages from "./Pages.js"
import * as Session from "./Session.js"

/** Options of the router. */
export interface Options {
  /** Product name shown on the pages (default "Latchkey"). */
  readonly productName?: string
  /** What each scope allows, shown on the consent page; others read "Access to <scope>". */
  readonly scopeDescriptions?: Readonly<Record<string, string>>
  /** Idle lifetime of a sign-in session in seconds (default 1800). */
  readonly sessionTtl?: number
  /** Where sessions are kept (default: this process's memory, see `Session.memoryStore`). */
  readonly sessionStore?: Session.SessionStore
  /** Called with unexpected failures (defects, a body consumed by another parser); never sent to the client. */
  readonly onError?: (error: unknown) => void
  /** The id of a request (e.g. set by a logger), copied into the core's audit events. */
  readonly requestId?: (req: Request) => string | undefined
}

/** What the runtime must provide: every service of the endpoints and pages. */
export type Requirements = Http.Requirements

const pagePaths = { authorize: Metadata.paths.authorize, login: Metadata.paths.login } as const

type Outcome<A, E> = { readonly _tag: "ok"; readonly value: A } | { readonly _tag: "fail"; readonly error: E }

/**
 * Build the router. Mount it at the path of the issuer URL (`app.use(router)` when
 * the issuer has no path), before any body parser: it reads raw bodies itself.
 */
export const oauthRouter = (
  runtime: ManagedRuntime.ManagedRuntime<Requirements, unknown>,
  options: Options = {}
): Router => {
  const productName = options.productName ?? "Latchkey"
  const sessionTtl = options.sessionTtl ?? 1800
  const sessions = options.sessionStore ?? Session.memoryStore()
  const onError = options.onError ?? (() => {})
  const router = express.Router({ caseSensitive: true, strict: true })

  // Settings are read once from the runtime, on the first request
  let settings:
    | Promise<{ readonly issuer: string; readonly sessionKey: string; readonly secure: RequestHandler }>
    | undefined
  const loadSettings = () => {
    settings ??= runtime.runPromise(Config.Config).then((c) => {
      const https = c.issuer.startsWith("https:")
      return {
        issuer: c.issuer,
        sessionKey: `${c.serverKey}\u0000latchkey-session-cookie`,
        // helmet: the standard hardening headers on every response of the router.
        // Pages replace the CSP with one naming their stylesheet and form targets.
        secure: helmet(NodeHttp.helmetOptions(https))
      }
    })
    return settings
  }

  const address = (req: Request): string | undefined => req.ip ?? req.socket.remoteAddress

  const run = async <A, E>(
    req: Request,
    effect: Effect.Effect<A, E, Requirements | Audit.RequestInfo>
  ): Promise<Outcome<A, E>> => {
    const exit = await runtime.runPromiseExit(
      Effect.provideService(effect, Audit.RequestInfo, {
        requestId: options.requestId?.(req) ?? null,
        address: address(req) ?? null
      })
    )
    if (Exit.isSuccess(exit)) return { _tag: "ok", value: exit.value }
    const failure = Cause.failureOption(exit.cause)
    if (Option.isSome(failure)) return { _tag: "fail", error: failure.value as E }
    throw new Error(Cause.pretty(exit.cause))
  }

  const write = (res: Response, r: Http.HttpResponse): void => {
    res.status(r.status)
    for (const [k, v] of Object.entries(r.headers)) res.setHeader(k, v)
    res.end(r.body)
  }

  const asyncHandler =
    (f: (req: Request, res: Response, next: NextFunction) => Promise<void>): RequestHandler =>
    (req, res, next) => {
      f(req, res, next).catch((e: unknown) => {
        const storage =
          typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "StorageError"
        if (!storage) onError(e instanceof Body.BodyConsumed ? e.message : e)
        if (res.headersSent) {
          res.destroy()
          return
        }
        if (isPagePath(req.path)) {
          if (storage) renderError(req, res, "PC", unavailable, { "retry-after": "1" })
          else
            renderError(req, res, "PC", {
              status: 500,
              error: "server_error",
              description: "an unexpected error occurred"
            })
        } else {
          write(res, Http.json(500, { error: "server_error", error_description: "internal server error" }))
        }
      })
    }

  const secure: RequestHandler = (req, res, next) => {
    loadSettings().then(
      (s) => s.secure(req, res, next),
      (e: unknown) => {
        settings = undefined
        onError(e)
        write(
          res,
          Http.json(
            503,
            { error: "temporarily_unavailable", error_description: "the service is starting" },
            { "retry-after": "1" }
          )
        )
      }
    )
  }

  const rawQuery = (req: Request): string => {
    const q = req.url.indexOf("?")
    return q === -1 ? "" : req.url.slice(q + 1)
  }

  // JSON endpoints: the node:http binding hands the raw request to the core
  const json = NodeHttp.handler(runtime, {
    remoteAddress: (req) => address(req as Request),
    requestId: (req) => options.requestId?.(req as Request),
    onError,
    headers: {}
  })
  const jsonEndpoint: RequestHandler = (req, res, next) => {
    if (!json(req, res)) next()
  }

  for (const path of [
    Metadata.paths.token,
    Metadata.paths.introspect,
    Metadata.paths.revoke,
    Metadata.paths.metadata
  ]) {
    router.all(path, secure, jsonEndpoint)
  }

  // Pages

  const isPagePath = (path: string) => path === pagePaths.authorize || path === pagePaths.login

  const layoutOf = (rawQueryString: string): Pages.Layout => {
    const parsed = Form.parse(rawQueryString)
    return parsed._tag === "Right" && parsed.right.client_type === "Mobile" ? "Mobile" : "PC"
  }

  const pageHeaders = (res: Response, formTargets: ReadonlyArray<string>) => {
    res.setHeader("content-security-policy", Pages.contentSecurityPolicy(formTargets))
    res.setHeader("cache-control", "no-store")
    res.setHeader("pragma", "no-cache")
  }

  const sendHtml = (res: Response, status: number, html: string, formTargets: ReadonlyArray<string>) => {
    pageHeaders(res, formTargets)
    res.status(status)
    res.setHeader("content-type", "text/html; charset=utf-8")
    res.end(html)
  }

  const renderError = (
    req: Request,
    res: Response,
    layout: Pages.Layout,
    e: { readonly status: number; readonly error: string; readonly description: string },
    extra: Record<string, string> = {}
  ) => {
    for (const [k, v] of Object.entries(extra)) res.setHeader(k, v)
    // SPEC §3: JSON instead of the page when the client asks for JSON
    if (req.accepts(["html", "json"]) === "json") {
      pageHeaders(res, [])
      write(res, Http.json(e.status, { error: e.error, error_description: e.description }))
      return
    }
    sendHtml(res, e.status, Pages.error({ layout, productName, ...e }), [])
  }

  const redirect = (res: Response, status: 302 | 303, location: string) => {
    res.setHeader("cache-control", "no-store")
    res.setHeader("pragma", "no-cache")
    res.setHeader("location", location)
    res.status(status).end()
  }

  const unavailable = {
    status: 503,
    error: "temporarily_unavailable",
    description: "the service is unavailable; retry shortly"
  }

  /** Answer a failed validation: a page (never a redirect) or a redirect to the validated client. */
  const validationFailed = (
    req: Request,
    res: Response,
    layout: Pages.Layout,
    e: Authorize.ErrorPage | Authorize.ErrorRedirect | StorageError.StorageError,
    status: 302 | 303
  ) => {
    switch (e._tag) {
      case "ErrorPage":
        return renderError(req, res, layout, e)
      case "ErrorRedirect":
        return redirect(res, status, e.location)
      case "StorageError":
        return renderError(req, res, layout, unavailable, { "retry-after": "1" })
    }
  }

  const cookiePath = (req: Request) => `${req.baseUrl}/oauth2/oauth2`

  const loadSession = async (req: Request): Promise<Session.Session | undefined> => {
    const { sessionKey } = await loadSettings()
    const value = Session.readCookie(req.headers.cookie, Session.cookieName)
    if (value === undefined) return undefined
    const id = Session.verifyCookie(sessionKey, value)
    return id === null ? undefined : sessions.get(id)
  }

  const saveSession = async (req: Request, res: Response, session: Session.Session) => {
    const { sessionKey, issuer } = await loadSettings()
    session.expiresAt = Date.now() + sessionTtl * 1000
    sessions.set(session)
    const attributes = [
      `Path=${cookiePath(req)}`,
      "HttpOnly",
      "SameSite=Lax",
      `Max-Age=${sessionTtl}`,
      ...(issuer.startsWith("https:") ? ["Secure"] : [])
    ]
    res.setHeader(
      "set-cookie",
      `${Session.cookieName}=${Session.cookieValue(sessionKey, session.id)}; ${attributes.join("; ")}`
    )
  }

  /** A new session id for the same browser, dropping the old one (no session fixation). */
  const regenerate = (old: Session.Session | undefined): Session.Session => {
    if (old !== undefined) sessions.delete(old.id)
    return Session.make(sessionTtl)
  }

  const describe = (scope: Scope.ScopeSet): ReadonlyArray<Pages.ScopeLine> =>
    scope.map((name) => ({
      name,
      description:
        options.scopeDescriptions !== undefined && Object.hasOwn(options.scopeDescriptions, name)
          ? (options.scopeDescriptions[name] as string)
          : `Access to ${name}`
    }))

  const formTargets = (ar: Authorize.AuthorizationRequest): ReadonlyArray<string> => [
    "'self'",
    new URL(ar.redirectUri).origin
  ]

  const redirectHost = (ar: Authorize.AuthorizationRequest): string => new URL(ar.redirectUri).host

  /** The signed-in user of a session, if the account still exists. */
  const currentUser = async (req: Request, session: Session.Session | undefined) => {
    if (session === undefined || session.userId === null) return null
    const userId = session.userId
    const found = await run(
      req,
      Effect.flatMap(UserStore.UserStore, (users) => users.findById(userId))
    )
    if (found._tag === "fail") throw found.error
    if (Option.isNone(found.value)) {
      session.userId = null
      session.username = null
      return null
    }
    return found.value.value
  }

  const showLogin = async (
    req: Request,
    res: Response,
    session: Session.Session,
    ar: Authorize.AuthorizationRequest,
    raw: string,
    status: number,
    error?: { readonly message: string; readonly username: string }
  ) => {
    const { txn, csrf } = Session.addPending(session, { rawQuery: raw, step: "login" })
    await saveSession(req, res, session)
    const html = Pages.login({
      layout: ar.clientType,
      productName,
      appName: ar.app.name,
      redirectHost: redirectHost(ar),
      action: req.baseUrl + pagePaths.login,
      txn,
      csrf,
      ...(error !== undefined ? { error: error.message, username: error.username } : {})
    })
    sendHtml(res, status, html, formTargets(ar))
  }

  const showConsent = async (
    req: Request,
    res: Response,
    session: Session.Session,
    ar: Authorize.AuthorizationRequest,
    raw: string
  ) => {
    const { txn, csrf } = Session.addPending(session, { rawQuery: raw, step: "consent" })
    await saveSession(req, res, session)
    const html = Pages.consent({
      layout: ar.clientType,
      productName,
      appName: ar.app.name,
      redirectHost: redirectHost(ar),
      username: session.username ?? "",
      scopes: describe(ar.scope),
      action: req.baseUrl + pagePaths.authorize,
      switchAction: req.baseUrl + pagePaths.login,
      txn,
      csrf
    })
    sendHtml(res, 200, html, formTargets(ar))
  }

  const approve = async (
    req: Request,
    res: Response,
    ar: Authorize.AuthorizationRequest,
    userId: string,
    status: 302 | 303
  ) => {
    const done = await run(req, Authorize.approve(ar, userId))
    if (done._tag === "fail") throw done.error
    redirect(res, status, done.value)
  }

  // GET (and HEAD) /oauth2/oauth2/authorize: validate, then sign-in, consent or straight back
  const authorizeGet = asyncHandler(async (req, res) => {
    const raw = rawQuery(req)
    const layout = layoutOf(raw)
    const validated = await run(req, Authorize.validate(raw))
    if (validated._tag === "fail") return validationFailed(req, res, layout, validated.error, 302)
    const ar = validated.value
    // SECURITY A38: HEAD never mints a code, records consent or opens a session
    if (req.method === "HEAD") {
      pageHeaders(res, formTargets(ar))
      res.setHeader("content-type", "text/html; charset=utf-8")
      res.status(200).end()
      return
    }
    const session = await loadSession(req)
    const user = await currentUser(req, session)
    if (session === undefined || user === null) {
      return showLogin(req, res, session ?? Session.make(sessionTtl), ar, raw, 200)
    }
    const remembered = await run(req, Authorize.hasConsent(ar, user.userId))
    if (remembered._tag === "fail") throw remembered.error
    if (remembered.value) return approve(req, res, ar, user.userId, 302)
    return showConsent(req, res, session, ar, raw)
  })

  /** Read a page form: urlencoded, bounded, no repeated fields. */
  const readPageForm = async (req: Request, res: Response): Promise<Form.Params | null> => {
    if (!Body.isFormContentType(req.headers["content-type"])) {
      renderError(req, res, "PC", {
        status: 400,
        error: "invalid_request",
        description: "the form must be sent as application/x-www-form-urlencoded"
      })
      return null
    }
    const read = await Body.readBody(req, Http.maxBodyBytes)
    if (read.truncated) {
      res.setHeader("connection", "close")
      renderError(req, res, "PC", {
        status: 413,
        error: "invalid_request",
        description: "the form is too large"
      })
      return null
    }
    const parsed = Form.parse(read.text)
    if (parsed._tag === "Left") {
      renderError(req, res, "PC", {
        status: 400,
        error: "invalid_request",
        description: parsed.left.description
      })
      return null
    }
    return parsed.right
  }

  const forbidden = (req: Request, res: Response, layout: Pages.Layout) =>
    renderError(req, res, layout, {
      status: 403,
      error: "access_denied",
      description:
        "this form has expired or was not sent from this site; go back to the application and start signing in again"
    })

  /** Refuse cross-site form posts (Fetch Metadata and Origin), on top of the CSRF token. */
  const crossSite = async (req: Request): Promise<boolean> => {
    const site = req.headers["sec-fetch-site"]
    if (site !== undefined && site !== "same-origin" && site !== "none") return true
    const origin = req.headers.origin
    // Referrer-Policy: no-referrer makes browsers send `Origin: null` on same-origin posts
    if (origin === undefined || origin === "null") return false
    const { issuer } = await loadSettings()
    const own = `${req.protocol}://${req.headers.host ?? ""}`
    return origin !== new URL(issuer).origin && origin !== own
  }

  /** Take the pending request a form continues, or answer 403. */
  const continuePending = async (
    req: Request,
    res: Response,
    session: Session.Session | undefined,
    params: Form.Params,
    step: Session.Pending["step"]
  ): Promise<Session.Pending | null> => {
    const pending =
      session === undefined ? null : Session.takePending(session, params.txn, params.csrf_token, step)
    if (pending === null || (await crossSite(req))) {
      forbidden(req, res, "PC")
      return null
    }
    return pending
  }

  // POST /oauth2/oauth2/login: the sign-in form (and "Not you?" on the consent page)
  const loginPost = asyncHandler(async (req, res) => {
    const params = await readPageForm(req, res)
    if (params === null) return
    const session = await loadSession(req)
    const switching = params.switch_account !== undefined
    const pending = await continuePending(req, res, session, params, switching ? "consent" : "login")
    if (pending === null || session === undefined) return
    const layout = layoutOf(pending.rawQuery)
    const validated = await run(req, Authorize.validate(pending.rawQuery))
    if (validated._tag === "fail") return validationFailed(req, res, layout, validated.error, 303)
    const ar = validated.value
    const again = `${req.baseUrl}${pagePaths.authorize}?${pending.rawQuery}`
    if (switching) {
      await saveSession(req, res, regenerate(session))
      return redirect(res, 303, again)
    }
    const username = params.username ?? ""
    const password = params.password ?? ""
    if (username === "" || password === "") {
      return showLogin(req, res, session, ar, pending.rawQuery, 400, {
        message: "enter your username and password",
        username
      })
    }
    const signedIn = await run(req, Accounts.authenticate(username, password, address(req)))
    if (signedIn._tag === "fail") {
      const e = signedIn.error
      switch (e._tag) {
        case "InvalidGrant":
          return showLogin(req, res, session, ar, pending.rawQuery, 400, {
            message: Accounts.badCredentials,
            username
          })
        case "RateLimited":
          return renderError(
            req,
            res,
            layout,
            {
              status: 429,
              error: e.error,
              description: `too many failed sign-in attempts; try again in ${Math.max(1, Math.ceil(e.retryAfter))} seconds`
            },
            { "retry-after": String(Math.max(1, Math.ceil(e.retryAfter))) }
          )
        case "StorageError":
          return renderError(req, res, layout, unavailable, { "retry-after": "1" })
      }
    }
    // OWASP session management: a new session id at sign-in (no fixation)
    const fresh = regenerate(session)
    fresh.userId = signedIn.value.userId
    fresh.username = signedIn.value.username
    await saveSession(req, res, fresh)
    redirect(res, 303, again)
  })

  // POST /oauth2/oauth2/authorize: the consent form
  const consentPost = asyncHandler(async (req, res) => {
    const params = await readPageForm(req, res)
    if (params === null) return
    const session = await loadSession(req)
    const pending = await continuePending(req, res, session, params, "consent")
    if (pending === null || session === undefined) return
    const layout = layoutOf(pending.rawQuery)
    await saveSession(req, res, session)
    const decision = params.decision
    if (decision !== "allow" && decision !== "deny") {
      return renderError(req, res, layout, {
        status: 400,
        error: "invalid_request",
        description: "choose Allow or Deny"
      })
    }
    // Re-validate the stored request: the application or its redirect URIs may have changed
    const validated = await run(req, Authorize.validate(pending.rawQuery))
    if (validated._tag === "fail") return validationFailed(req, res, layout, validated.error, 303)
    const ar = validated.value
    const user = await currentUser(req, session)
    if (user === null) return forbidden(req, res, layout)
    if (decision === "deny") {
      const { issuer } = await loadSettings()
      return redirect(res, 303, Authorize.reject(ar, issuer, "access_denied", "the user denied the request"))
    }
    return approve(req, res, ar, user.userId, 303)
  })

  const methodNotAllowed =
    (allow: string): RequestHandler =>
    (req, res) => {
      res.setHeader("allow", allow)
      renderError(req, res, layoutOf(rawQuery(req)), {
        status: 405,
        error: "invalid_request",
        description: `use ${allow.split(", ").join(" or ")}`
      })
    }

  router.get(pagePaths.authorize, secure, authorizeGet)
  router.post(pagePaths.authorize, secure, consentPost)
  router.all(pagePaths.authorize, secure, methodNotAllowed("GET, HEAD, POST"))
  router.post(pagePaths.login, secure, loginPost)
  router.all(pagePaths.login, secure, methodNotAllowed("POST"))

  return router
}
