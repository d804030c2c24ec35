/**
 * The core on plain `node:http`: the one conversion of a node:http request into the core's request
 * value (`requestOf`, `withBody`: the raw body read with a cap), the writing of the core's response
 * (`write`), and the JSON endpoints (token, introspection, revocation, metadata) as a request
 * listener (`handler`). Every rule lives in the core.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Http, type Interaction, type OAuthError, Paths } from "@latchkey/core"
import { Effect, Exit, type ManagedRuntime, Option, Runtime } from "effect"
import helmet, { type HelmetOptions } from "helmet"
import { BodyConsumed, ClientClosed, readBody } from "./Body.js"
import * as HeaderList from "./internal/HeaderList.js"

/** Options of `handler`. */
export interface Options {
  /** Path the endpoints are mounted under (the issuer URL's path), e.g. `/auth`; default none. */
  readonly prefix?: string
  /** The client's address (default: the socket's peer address), e.g. resolved through a trusted proxy. */
  readonly remoteAddress?: (req: IncomingMessage) => string | undefined
  /** The id of a request (e.g. set by a logger), copied into the core's audit events. */
  readonly requestId?: (req: IncomingMessage) => string | undefined
  /**
   * The response header that carries `requestId`'s id (e.g. `x-request-id`), first of every
   * response; default none. One set with `setHeader` before the handler answers costs more.
   */
  readonly requestIdHeader?: string
  /** Called with unexpected failures; never sent to the client. */
  readonly onError?: (error: unknown) => void
  /** Headers sent with every response under the core's own (default: `hardeningHeaders(false)`). */
  readonly headers?: Readonly<Record<string, string>>
  /**
   * Called with each response the core answered, just before it is written (e.g. to count OAuth
   * error codes); a throw is passed to `onError` and the response is still written.
   */
  readonly onResponse?: (req: IncomingMessage, response: Http.HttpResponse) => void
}

/** The helmet settings of every Latchkey response; pages replace the CSP with their own. */
export const helmetOptions = (https: boolean): HelmetOptions => ({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      frameAncestors: ["'none'"],
      formAction: ["'none'"],
      baseUri: ["'none'"]
    }
  },
  crossOriginEmbedderPolicy: false,
  frameguard: { action: "deny" },
  referrerPolicy: { policy: "no-referrer" },
  strictTransportSecurity: https ? { maxAge: 31536000, includeSubDomains: false } : false
})

/**
 * The headers helmet sets with `helmetOptions(https)`, computed once: they do not
 * depend on the request, so no response runs helmet.
 */
export const hardeningHeaders = (https: boolean): Readonly<Record<string, string>> => {
  const headers: Record<string, string> = {}
  const collect = {
    setHeader: (name: string, value: string | number | ReadonlyArray<string>) => {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : String(value)
    },
    removeHeader: (name: string) => {
      delete headers[name.toLowerCase()]
    }
  }
  helmet(helmetOptions(https))({} as IncomingMessage, collect as unknown as ServerResponse, () => {})
  return headers
}

/** A request target split into its path and raw query (RFC 9112 §3.2). */
export interface Target {
  readonly path: string
  /** The raw query string, without `?`. */
  readonly query: string
}

const absoluteForm = /^https?:\/\/[^/?#]*/i

/**
 * The path and query of a request target (`req.url`): origin-form (`/token?x`) as it is, and
 * absolute-form (`http://host/token?x`), which node:http hands over unchanged, as its path and
 * query, so every endpoint answers and logs both alike (RFC 9112 §3.2.2: a server MUST accept it).
 */
export const target = (url: string | undefined): Target => {
  const raw = url ?? "/"
  const absolute = absoluteForm.exec(raw)
  const rest = absolute === null ? raw : raw.slice(absolute[0].length)
  const q = rest.indexOf("?")
  const path = q === -1 ? rest : rest.slice(0, q)
  return {
    // RFC 9110 §4.2.3: an empty path of an http(s) URI is equivalent to "/"
    path: absolute !== null && path === "" ? "/" : path,
    query: q === -1 ? "" : rest.slice(q + 1)
  }
}

/** What `requestOf` takes from elsewhere than the request itself; each has a default. */
export interface RequestFields {
  /** The path the core routes by (default: the path of `req.url`, e.g. relative to a mount point). */
  readonly path?: string
  /** The raw query string (default: the query of `req.url`). */
  readonly query?: string
  /** The client's address (default: the socket's peer address). */
  readonly remoteAddress?: string | undefined
  /** The id of the request, copied into the core's audit events. */
  readonly requestId?: string | undefined
}

/**
 * The core's request value for a node:http request, without its body (e.g. to check a token
 * before reading one: `withBody`). Every value of a repeated header is kept: the core refuses a
 * repeated `Authorization`.
 */
export const requestOf = (req: IncomingMessage, fields: RequestFields = {}): Http.HttpRequest => {
  const own = fields.path === undefined || fields.query === undefined ? target(req.url) : undefined
  return {
    method: req.method ?? "GET",
    path: fields.path ?? own?.path ?? "/",
    query: fields.query ?? own?.query ?? "",
    headers: req.headersDistinct,
    body: "",
    remoteAddress: fields.remoteAddress ?? req.socket.remoteAddress,
    requestId: fields.requestId
  }
}

/**
 * `request` with the body of `req`, bounded and never inflated (the core refuses a compressed
 * body, 415): one over `Http.maxBodyBytes` is not read but reported to the core as
 * `bodyTooLarge` (413), and `res` closes the connection after the answer. Rejects with
 * `Body.ClientClosed` or `Body.BodyConsumed` as `readBody` does.
 */
export const withBody = async (
  req: IncomingMessage,
  res: ServerResponse,
  request: Http.HttpRequest
): Promise<Http.HttpRequest> => {
  const read = await readBody(req, Http.maxBodyBytes)
  if (!read.tooLarge) return { ...request, body: read.text }
  res.setHeader("connection", "close")
  return { ...request, bodyTooLarge: true }
}

const serverError = Http.errorResponse(Http.serverError)

const answeredErrors = new WeakMap<ServerResponse, OAuthError.Code>()

/**
 * Remember the OAuth error code of the core answer sent on `res` (`errorOf`); `write` does it
 * for every core response, a binding that renders the core's answer itself calls it.
 */
export const noteError = (res: ServerResponse, error: OAuthError.Code | undefined): void => {
  if (error !== undefined) answeredErrors.set(res, error)
}

/**
 * The OAuth error code the core answered on `res` with (a JSON error, an error redirect to the
 * client, a Bearer challenge naming one), if any: a value kept beside the response, never read
 * back from the bytes written, e.g. for a metric.
 */
export const errorOf = (res: ServerResponse): OAuthError.Code | undefined => answeredErrors.get(res)

const answeredReasons = new WeakMap<ServerResponse, Interaction.Problem["reason"]>()

/**
 * Remember why the core answered `res` with an error page (its problem's stable code, e.g.
 * `bad_redirect_uri`), for `reasonOf`; a binding that renders the core's pages calls it.
 */
export const noteReason = (res: ServerResponse, reason: Interaction.Problem["reason"]): void => {
  answeredReasons.set(res, reason)
}

/**
 * The stable code of the error page the core answered `res` with, if any: a fixed name, never a
 * value the request sent, so it may go on the request's log line.
 */
export const reasonOf = (res: ServerResponse): Interaction.Problem["reason"] | undefined =>
  answeredReasons.get(res)

/** `response` written in one `writeHead` of the list of `base`, the core's headers, its length. */
const writeOver = (
  res: ServerResponse,
  response: Http.HttpResponse,
  base: HeaderList.Base,
  id: string | undefined
): void => {
  noteError(res, response.error)
  const length = Buffer.byteLength(response.body)
  res.writeHead(response.status, HeaderList.list(base, response.headers, length, id))
  res.end(response.body)
}

const noHeaders: Readonly<Record<string, string>> = {}

// The laid-out list of each `headers` object `write` was given: callers pass the same one each time
const bases = new WeakMap<Readonly<Record<string, string>>, HeaderList.Base>()

/**
 * Write a core response in one `writeHead`, with `headers` under the core's own (a core header
 * replaces one of the same name); its `error` is kept for `errorOf`. `headers` is laid out once
 * per object and kept: pass the same unchanging object each time.
 */
export const write = (
  res: ServerResponse,
  response: Http.HttpResponse,
  headers: Readonly<Record<string, string>> = noHeaders
): void => {
  let base = bases.get(headers)
  if (base === undefined) {
    base = HeaderList.base(headers)
    bases.set(headers, base)
  }
  writeOver(res, response, base, undefined)
}

/**
 * A request listener for the JSON endpoints. It answers and returns `true` when the
 * path is one of them; otherwise it returns `false` without touching the request, so
 * the caller can hand it on (e.g. to Express for the pages).
 */
export const handler = (
  runtime: ManagedRuntime.ManagedRuntime<Http.Requirements, unknown>,
  options: Options = {}
): ((req: IncomingMessage, res: ServerResponse) => boolean) => {
  const prefix = (options.prefix ?? "").replace(/\/+$/, "")
  const base = HeaderList.base(options.headers ?? hardeningHeaders(false), options.requestIdHeader)
  const requestId = base.id ? options.requestId : undefined
  const onError = options.onError ?? (() => {})
  const onResponse = options.onResponse
  const answer = (req: IncomingMessage, res: ServerResponse, response: Http.HttpResponse) => {
    if (onResponse !== undefined) {
      try {
        onResponse(req, response)
      } catch (e) {
        onError(e)
      }
    }
    writeOver(res, response, base, requestId?.(req))
  }
  const endpoints = new Set(Paths.json.map((p) => `${prefix}${p}`))

  // What a request that could not be answered ends with: for a client gone, nothing
  const failed = (req: IncomingMessage, res: ServerResponse, e: unknown) => {
    // The client went away: nobody to answer, nothing to report (the response closes unfinished)
    if (e instanceof ClientClosed) return
    onError(e instanceof BodyConsumed ? e.message : e)
    if (res.headersSent) res.destroy()
    else answer(req, res, serverError)
  }

  // The core's answer written once its fiber ends: observed on the fiber, no promise per request
  const run = (
    req: IncomingMessage,
    res: ServerResponse,
    effect: Effect.Effect<Http.HttpResponse, never, Http.Requirements>
  ) =>
    runtime.runCallback(effect, {
      onExit: (exit) => {
        try {
          if (Exit.isSuccess(exit)) answer(req, res, exit.value)
          else failed(req, res, Runtime.makeFiberFailure(exit.cause))
        } catch (e) {
          failed(req, res, e)
        }
      }
    })

  const serve = async (req: IncomingMessage, res: ServerResponse, path: string, query: string) => {
    const request = requestOf(req, {
      path,
      query,
      remoteAddress: options.remoteAddress?.(req),
      requestId: options.requestId?.(req)
    })
    const route = Http.route(Http.carriesBody(req.method ?? "") ? await withBody(req, res, request) : request)
    // The path was checked above, so the core has a route for it.
    run(
      req,
      res,
      Option.getOrElse(route, () => Effect.succeed(serverError))
    )
  }

  return (req, res) => {
    const { path, query } = target(req.url)
    if (!endpoints.has(path)) return false
    serve(req, res, path.slice(prefix.length), query).catch((e: unknown) => failed(req, res, e))
    return true
  }
}
