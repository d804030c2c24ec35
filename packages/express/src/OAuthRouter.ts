/**
 * The Express router of Latchkey: the JSON endpoints of `Paths.json` (token,
 * introspection, revocation, metadata, OpenID configuration, JWKS, userinfo) handed
 * to `Http.route` as raw requests whatever their method, and the
 * authorize endpoint with its sign-in and consent pages, and the consents page
 * where users withdraw what they allowed, in their language. It only translates
 * between HTTP and the core; no OAuth rule lives here.
 */
import { Config, Http, Interaction, Paths } from "@latchkey/core"
import { Body, NodeHttp } from "@latchkey/node"
import type { ManagedRuntime } from "effect"
import express, { type Request, type RequestHandler, type Response, type Router } from "express"
import * as Hardening from "./internal/hardening.js"
import { render } from "./internal/render.js"

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

/** The client's address: Express's (by its "trust proxy"), else the socket's. */
const address = (req: Request): string | undefined => req.ip ?? req.socket.remoteAddress

/**
 * helmet: the standard hardening headers on every response of the router (its header calls,
 * recorded once and replayed: `Hardening.middleware`), set up on the first request (they depend
 * on the issuer's scheme); until the configuration can be read, a 503 that asks to retry. Pages
 * replace the CSP with their own.
 */
const hardening = (
  runtime: ManagedRuntime.ManagedRuntime<Requirements, unknown>,
  onError: (error: unknown) => void
): RequestHandler => {
  let hardening: Promise<RequestHandler> | undefined
  const loadHardening = () => {
    hardening ??= runtime
      .runPromise(Config.Config)
      .then((c) => Hardening.middleware(NodeHttp.helmetOptions(c.issuer.startsWith("https:"))))
    return hardening
  }
  return (req, res, next) => {
    loadHardening().then(
      (h) => h(req, res, next),
      (e: unknown) => {
        hardening = undefined
        onError(e)
        NodeHttp.write(
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
}

/** The JSON endpoints: the node:http binding hands the raw request to the core. */
const jsonEndpoint = (
  runtime: ManagedRuntime.ManagedRuntime<Requirements, unknown>,
  options: Options,
  onError: (error: unknown) => void
): RequestHandler => {
  const json = NodeHttp.handler(runtime, {
    remoteAddress: (req) => address(req as Request),
    requestId: (req) => options.requestId?.(req as Request),
    onError,
    headers: {}
  })
  return (req, res, next) => {
    if (!json(req, res)) next()
  }
}

/**
 * The pages: the core decides (`Interaction.handle`); the router reads the body and renders the
 * view. A failure answers 500 (or cuts a response already begun) and goes to `onError`.
 */
const pageEndpoint = (
  runtime: ManagedRuntime.ManagedRuntime<Requirements, unknown>,
  options: Options,
  onError: (error: unknown) => void
): RequestHandler => {
  const productName = options.productName ?? "Latchkey"
  const servePage = async (req: Request, res: Response) => {
    // The path relative to the mount point; the query of req.url, as the browser sent it
    const request = NodeHttp.requestOf(req, {
      path: req.path,
      remoteAddress: address(req),
      requestId: options.requestId?.(req)
    })
    const answer = await runtime.runPromise(
      Interaction.handle({
        ...(Http.carriesBody(req.method) ? await NodeHttp.withBody(req, res, request) : request),
        basePath: req.baseUrl,
        ownOrigin: `${req.protocol}://${req.headers.host ?? ""}`
      })
    )
    render({ req, res, productName, scopeDescriptions: options.scopeDescriptions }, answer)
  }
  return (req, res) => {
    servePage(req, res).catch((e: unknown) => {
      // The client went away: nobody to answer, nothing to report (the response closes unfinished)
      if (e instanceof Body.ClientClosed) return
      onError(e instanceof Body.BodyConsumed ? e.message : e)
      if (res.headersSent) res.destroy()
      else NodeHttp.write(res, Http.errorResponse(Http.serverError))
    })
  }
}

/**
 * Build the router. Mount it at the path of the issuer URL (`app.use(router)` when
 * the issuer has no path), before any body parser: it reads raw bodies itself.
 */
export const oauthRouter = (
  runtime: ManagedRuntime.ManagedRuntime<Requirements, unknown>,
  options: Options = {}
): Router => {
  const onError = options.onError ?? (() => {})
  const router = express.Router({ caseSensitive: true, strict: true })
  const secure = hardening(runtime, onError)
  const json = jsonEndpoint(runtime, options, onError)
  for (const path of Paths.json) router.all(path, secure, json)
  const page = pageEndpoint(runtime, options, onError)
  for (const path of Paths.pages) router.all(path, secure, page)
  return router
}
