/**
 * The JSON endpoints (token, introspection, revocation, metadata) on plain
 * `node:http`: read the raw body with a cap, hand a plain request to the core's
 * `Http.route`, write the plain response. Every rule lives in the core.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Http } from "@latchkey/core"
import { Effect, type ManagedRuntime, Option } from "effect"
import helmet, { type HelmetOptions } from "helmet"
import { BodyConsumed, ClientClosed, readBody } from "./Body.js"

/** Options of `handler`. */
export interface Options {
  /** Path the endpoints are mounted under (the issuer URL's path), e.g. `/auth`; default none. */
  readonly prefix?: string
  /** The client's address (default: the socket's peer address), e.g. resolved through a trusted proxy. */
  readonly remoteAddress?: (req: IncomingMessage) => string | undefined
  /** The id of a request (e.g. set by a logger), copied into the core's audit events. */
  readonly requestId?: (req: IncomingMessage) => string | undefined
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
 * depend on the request, so the hot path copies an object instead of running helmet.
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

const serverError = Http.errorResponse(Http.serverError)

/** Write a core response, with `headers` under the core's own. */
export const write = (
  res: ServerResponse,
  response: Http.HttpResponse,
  headers: Readonly<Record<string, string>> = {}
): void => {
  res.writeHead(response.status, {
    ...headers,
    ...response.headers,
    "content-length": Buffer.byteLength(response.body)
  })
  res.end(response.body)
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
  const headers = options.headers ?? hardeningHeaders(false)
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
    write(res, response, headers)
  }
  const endpoints = new Set(Http.jsonPaths.map((p) => `${prefix}${p}`))

  const serve = async (req: IncomingMessage, res: ServerResponse, path: string, query: string) => {
    let body = ""
    if (req.method === "POST") {
      // Bounded and never inflated: the core refuses compressed (415) and oversized (413) bodies.
      const read = await readBody(req, Http.maxBodyBytes)
      if (read.truncated) res.setHeader("connection", "close")
      body = read.text
    }
    const route = Http.route({
      method: req.method ?? "GET",
      path,
      query,
      // Every value of a repeated header: the core refuses a repeated Authorization.
      headers: req.headersDistinct,
      body,
      remoteAddress: options.remoteAddress?.(req) ?? req.socket.remoteAddress,
      requestId: options.requestId?.(req)
    })
    // The path was checked above, so the core has a route for it.
    const effect = Option.getOrElse(route, () => Effect.succeed(serverError))
    answer(req, res, await runtime.runPromise(effect))
  }

  return (req, res) => {
    const { path, query } = target(req.url)
    if (!endpoints.has(path)) return false
    serve(req, res, path.slice(prefix.length), query).catch((e: unknown) => {
      // The client went away: nobody to answer, nothing to report (the response closes unfinished)
      if (e instanceof ClientClosed) return
      onError(e instanceof BodyConsumed ? e.message : e)
      if (res.headersSent) res.destroy()
      else answer(req, res, serverError)
    })
    return true
  }
}
