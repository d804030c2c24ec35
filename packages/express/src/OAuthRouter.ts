/**
 * The Express router of Latchkey: the JSON endpoints (token, introspection,
 * revocation, metadata) handed to `Http.route` as raw requests, and the
 * authorize endpoint with its sign-in and consent pages, and the consents page
 * where users withdraw what they allowed, in their language. It only translates
 * between HTTP and the core; no OAuth rule lives here.
 */
import { Config, Http, Interaction, Locale, Paths, type Scope } from "@latchkey/core"
import { Body, NodeHttp } from "@latchkey/node"
import { type ManagedRuntime, Option } from "effect"
import express, { type Request, type RequestHandler, type Response, type Router } from "express"
import helmet from "helmet"
import { type Catalogue, catalogue, defaultLanguage, languages } from "./locales/index.js"
import * as Pages from "./Pages.js"

/** Options of the router. */
export interface Options {
  /** Product name shown on the pages (default "Latchkey"). */
  readonly productName?: string
  /**
   * What each scope allows, shown on the consent and consents pages: one text for every
   * language, or texts by language tag (the page's language, else `en`); a scope without a
   * text reads "Access to <scope>" in the page's language.
   */
  readonly scopeDescriptions?: Readonly<Record<string, string | Readonly<Record<string, string>>>>
  /** Called with unexpected failures (defects, a body consumed by another parser); never sent to the client. */
  readonly onError?: (error: unknown) => void
  /** The id of a request (e.g. set by a logger), copied into the core's audit events. */
  readonly requestId?: (req: Request) => string | undefined
}

/** What the runtime must provide: every service of the endpoints and pages. */
export type Requirements = Http.Requirements

/**
 * Build the router. Mount it at the path of the issuer URL (`app.use(router)` when
 * the issuer has no path), before any body parser: it reads raw bodies itself.
 */
export const oauthRouter = (
  runtime: ManagedRuntime.ManagedRuntime<Requirements, unknown>,
  options: Options = {}
): Router => {
  const productName = options.productName ?? "Latchkey"
  const onError = options.onError ?? (() => {})
  const router = express.Router({ caseSensitive: true, strict: true })

  // helmet: the standard hardening headers on every response of the router, set up on the
  // first request (they depend on the issuer's scheme). Pages replace the CSP with their own.
  let hardening: Promise<RequestHandler> | undefined
  const loadHardening = () => {
    hardening ??= runtime
      .runPromise(Config.Config)
      .then((c) => helmet(NodeHttp.helmetOptions(c.issuer.startsWith("https:"))))
    return hardening
  }

  const address = (req: Request): string | undefined => req.ip ?? req.socket.remoteAddress

  const write = (res: Response, r: Http.HttpResponse): void => NodeHttp.write(res, r)

  const secure: RequestHandler = (req, res, next) => {
    loadHardening().then(
      (h) => h(req, res, next),
      (e: unknown) => {
        hardening = undefined
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

  for (const path of Paths.json) router.all(path, secure, jsonEndpoint)

  // Pages: the core decides (Interaction.handle); the router reads the body and renders the view.

  /**
   * The language of a page: the first supported tag of the request's `ui_locales`, else of
   * `Accept-Language`, else English.
   */
  const languageOf = (req: Request, uiLocales: ReadonlyArray<string>): Catalogue =>
    catalogue(
      Locale.choose(languages, { uiLocales, acceptLanguage: req.headers["accept-language"] }, defaultLanguage)
    )

  const describe = (scope: Scope.ScopeSet, t: Catalogue): ReadonlyArray<Pages.ScopeLine> =>
    scope.map((name) => {
      const d =
        options.scopeDescriptions !== undefined && Object.hasOwn(options.scopeDescriptions, name)
          ? options.scopeDescriptions[name]
          : undefined
      if (typeof d === "string") return { name, description: d }
      const byLanguage =
        d === undefined
          ? undefined
          : Option.getOrUndefined(
              Option.orElse(Locale.match(Object.keys(d), t.lang), () => Locale.match(Object.keys(d), "en"))
            )
      const text = d !== undefined && byLanguage !== undefined ? d[byLanguage] : undefined
      return { name, description: text ?? t.consent.scopeFallback(name) }
    })

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

  const render = (req: Request, res: Response, answer: Interaction.PageResponse): void => {
    const cookies = [answer.setCookie, answer.deviceCookie ?? null].filter((c): c is string => c !== null)
    if (cookies.length > 0) res.setHeader("set-cookie", cookies)
    Interaction.View.$match(answer.view, {
      Redirect: ({ status, location, error }) => {
        NodeHttp.noteError(res, error)
        res.setHeader("cache-control", "no-store")
        res.setHeader("pragma", "no-cache")
        res.setHeader("location", location)
        res.status(status).end()
      },
      Head: ({ formTargets }) => {
        pageHeaders(res, formTargets)
        res.setHeader("content-type", "text/html; charset=utf-8")
        res.status(200).end()
      },
      SignIn: (v) =>
        sendHtml(
          res,
          v.status,
          Pages.login({
            layout: v.layout,
            productName,
            catalogue: languageOf(req, v.uiLocales),
            appName: v.appName,
            redirectHost: v.redirectHost,
            action: v.action,
            txn: v.ticket.txn,
            csrf: v.ticket.csrf,
            ...(Option.isSome(v.error)
              ? { error: v.error.value.problem, username: v.error.value.username }
              : {})
          }),
          v.formTargets
        ),
      Consent: (v) => {
        const t = languageOf(req, v.uiLocales)
        sendHtml(
          res,
          200,
          Pages.consent({
            layout: v.layout,
            productName,
            catalogue: t,
            appName: v.appName,
            redirectHost: v.redirectHost,
            username: v.username,
            scopes: describe(v.scope, t),
            action: v.action,
            switchAction: v.switchAction,
            consentsHref: v.consentsHref,
            txn: v.ticket.txn,
            csrf: v.ticket.csrf
          }),
          v.formTargets
        )
      },
      ConsentsSignIn: (v) =>
        sendHtml(
          res,
          v.status,
          Pages.consentsSignIn({
            layout: v.layout,
            productName,
            catalogue: languageOf(req, v.uiLocales),
            action: v.action,
            txn: v.ticket.txn,
            csrf: v.ticket.csrf,
            ...(Option.isSome(v.error)
              ? { error: v.error.value.problem, username: v.error.value.username }
              : {})
          }),
          v.formTargets
        ),
      Consents: (v) => {
        const t = languageOf(req, v.uiLocales)
        sendHtml(
          res,
          200,
          Pages.consents({
            layout: v.layout,
            productName,
            catalogue: t,
            username: v.username,
            apps: v.consents.map((c) => ({
              appKey: c.appKey,
              appName: c.appName,
              grantedAt: c.grantedAt,
              scopes: describe(c.scope, t)
            })),
            ...(Option.isSome(v.withdrawn) ? { withdrawn: v.withdrawn.value } : {}),
            action: v.action,
            txn: v.ticket.txn,
            csrf: v.ticket.csrf
          }),
          v.formTargets
        )
      },
      ErrorPage: (e) => {
        for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v)
        // Content negotiation: JSON instead of the page when the client asks for JSON (always English)
        if (req.accepts(["html", "json"]) === "json") {
          pageHeaders(res, [])
          write(res, Http.json(e.status, { error: e.error, error_description: e.description }))
          return
        }
        sendHtml(
          res,
          e.status,
          Pages.error({
            layout: e.layout,
            productName,
            catalogue: languageOf(req, e.uiLocales),
            status: e.status,
            error: e.error,
            description: e.description,
            problem: e.problem,
            ...(Option.isSome(e.back) ? { back: e.back.value } : {})
          }),
          []
        )
      }
    })
  }

  const servePage = async (req: Request, res: Response) => {
    // The path relative to the mount point; the query of req.url, as the browser sent it
    const request = NodeHttp.requestOf(req, {
      path: req.path,
      remoteAddress: address(req),
      requestId: options.requestId?.(req)
    })
    const answer = await runtime.runPromise(
      Interaction.handle({
        ...(req.method === "POST" ? await NodeHttp.withBody(req, res, request) : request),
        basePath: req.baseUrl,
        ownOrigin: `${req.protocol}://${req.headers.host ?? ""}`
      })
    )
    render(req, res, answer)
  }

  for (const path of Paths.pages) {
    router.all(path, secure, (req, res) => {
      servePage(req, res).catch((e: unknown) => {
        // The client went away: nobody to answer, nothing to report (the response closes unfinished)
        if (e instanceof Body.ClientClosed) return
        onError(e instanceof Body.BodyConsumed ? e.message : e)
        if (res.headersSent) res.destroy()
        else write(res, Http.errorResponse(Http.serverError))
      })
    })
  }

  return router
}
