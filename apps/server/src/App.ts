/**
 * The server's request listener: one log line per request, the JSON endpoints
 * (token, introspection, revocation, metadata) on the plain node:http binding,
 * and an Express application for the rest: health probes, the authorize endpoint
 * with its pages, the example protected resource `/api/me`, and JSON 404s. With `metrics`, every
 * request is timed by endpoint and every OAuth error counted by endpoint and code.
 */
import { randomUUID } from "node:crypto"
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http"
import { OpenApi, Paths, StorageHealth } from "@latchkey/core"
import { oauthRouter, principal, requireBearer } from "@latchkey/express"
import { NodeHttp } from "@latchkey/node"
import { Exit, type ManagedRuntime } from "effect"
import express, { type NextFunction, type Request, type Response } from "express"
import proxyaddr from "proxy-addr"
import type { ServerEnv } from "./Env.js"
import { responseStatus } from "./Listen.js"
import type { Log } from "./Log.js"
import * as Metrics from "./Metrics.js"
import type { Services } from "./Services.js"

/** What the app needs. */
export interface AppOptions {
  readonly runtime: ManagedRuntime.ManagedRuntime<Services, unknown>
  readonly issuer: string
  /** Whether clients may register themselves (`LATCHKEY_REGISTRATION`): the OpenAPI document names the endpoint then. */
  readonly registration?: boolean
  readonly log: Log
  readonly scopeDescriptions: ServerEnv["scopeDescriptions"]
  /** The product name the pages show (default "Latchkey"). */
  readonly productName?: string
  /** Express "trust proxy" (exact proxy addresses), or false. */
  readonly trustProxy: string | false
  /** Where to record request durations and OAuth errors; none by default. */
  readonly metrics?: Metrics.Metrics
}

/** What the listener keeps of a request until its response closes, for its log line. */
interface Pending {
  readonly id: string
  /** `process.hrtime.bigint()` when the request came in. */
  readonly start: bigint
  /** The path of the request target, read before Express rewrites `req.url`. */
  readonly path: string
  /** The client's address once read (the endpoints read it first, the log line after). */
  address?: string | undefined
  addressRead: boolean
}

const pending = new WeakMap<IncomingMessage, Pending>()

/** The id given to a request by the listener. */
const requestId = (req: IncomingMessage): string | undefined => pending.get(req)?.id

const json = (res: Response, status: number, body: unknown) => {
  res.status(status)
  res.setHeader("content-type", "application/json; charset=utf-8")
  res.setHeader("cache-control", "no-store")
  res.end(JSON.stringify(body))
}

/** An error as a log field: its message and stack, or its text. */
const errorField = (e: unknown) => (e instanceof Error ? { message: e.message, stack: e.stack } : String(e))

/** The issuer URL's path without its trailing slashes: where the issuer's endpoints are mounted. */
const prefixOf = (issuer: string): string => new URL(issuer).pathname.replace(/\/+$/, "")

/** The client's address as Express's "trust proxy" resolves it, for the node:http endpoints too. */
const clientAddress = (trustProxy: string | false): ((req: IncomingMessage) => string | undefined) => {
  const trusted = trustProxy === false ? undefined : proxyaddr.compile(trustProxy.split(/ *, */))
  return (req) => (trusted === undefined ? req.socket.remoteAddress : proxyaddr(req, trusted))
}

/** The health probes: `healthz` (the process answers), `readyz` (the store answers too). */
const probes = (app: express.Express, runtime: AppOptions["runtime"]): void => {
  app.get(Paths.healthz, (_req, res) => json(res, 200, { status: "ok" }))
  app.get(Paths.readyz, (_req, res, next) => {
    runtime
      .runPromiseExit(StorageHealth.ping)
      .then(
        (exit) =>
          Exit.isSuccess(exit) ? json(res, 200, { status: "ok" }) : json(res, 503, { status: "unavailable" }),
        next
      )
  })
}

/** The OpenAPI document of this server, built once: it depends only on the issuer and whether clients may register. */
const openApiRoute = (
  app: express.Express,
  prefix: string,
  options: { readonly issuer: string; readonly registration: boolean }
): void => {
  const openApi = JSON.stringify(OpenApi.document(options))
  app.get(`${prefix}${Paths.openapi}`, (_req, res) => {
    res.setHeader("content-type", "application/json; charset=utf-8")
    res.setHeader("cache-control", "public, max-age=3600")
    res.end(openApi)
  })
}

/** The example protected resource: who the Bearer token stands for. */
const protectedResource = (app: express.Express, prefix: string, runtime: AppOptions["runtime"]): void => {
  app.get(`${prefix}${Paths.me}`, requireBearer(runtime), (req, res) => {
    const p = principal(req)
    // How open_id was established, "user" or "application", in a header: the body keeps
    // the documented shape exactly
    if (p.subjectType !== null) res.setHeader("latchkey-subject-type", p.subjectType)
    json(res, 200, { open_id: p.openId, client_id: p.clientId, scope: p.scope.join(",") })
  })
}

/** The answers of last resort: a JSON 404, and for an error never a stack trace to the client. */
const fallbacks = (app: express.Express, log: Log): void => {
  app.use((_req, res) => json(res, 404, { error: "not_found", error_description: "no such endpoint" }))
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) {
      res.destroy()
      return
    }
    // Express's own client errors (e.g. a malformed percent-escape in the path) keep their 4xx status
    const status = (err as { status?: unknown } | null)?.status
    if (typeof status === "number" && status >= 400 && status < 500) {
      json(res, status, { error: "invalid_request", error_description: "malformed request" })
      return
    }
    log.error({ err: errorField(err) }, "unhandled error")
    json(res, 500, { error: "server_error", error_description: "internal server error" })
  })
}

/** The Express application: probes, OpenAPI document, OAuth router and pages, `/api/me`, fallbacks. */
const expressApp = (options: AppOptions, prefix: string, onError: (e: unknown) => void): express.Express => {
  const { runtime } = options
  const app = express()
  app.disable("x-powered-by")
  app.disable("etag")
  app.set("trust proxy", options.trustProxy)
  probes(app, runtime)
  openApiRoute(app, prefix, { issuer: options.issuer, registration: options.registration === true })
  app.use(
    prefix === "" ? "/" : prefix,
    oauthRouter(runtime, {
      scopeDescriptions: options.scopeDescriptions,
      productName: options.productName ?? "Latchkey",
      requestId,
      onError
    })
  )
  protectedResource(app, prefix, runtime)
  fallbacks(app, options.log)
  return app
}

/**
 * Record a finished request in `m`: its duration by endpoint, method and status, and the OAuth
 * error it answered with, if any.
 */
const observe = (
  m: Metrics.Metrics,
  prefix: string,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  seconds: number
) => {
  const endpoint = Metrics.endpointOf(path, prefix)
  const status = responseStatus(res)
  m.request(endpoint, req.method, status, seconds)
  // The code the core answered with (a JSON error, an error redirect to the client, a Bearer
  // challenge), kept beside the response by the bindings
  const error = NodeHttp.errorOf(res)
  if (error !== undefined && status >= 300 && status !== 499) m.oauthError(endpoint, error)
}

/** The fields of a request's log line, in their order on the line. */
interface RequestLine {
  readonly reqId: string
  readonly method: string | undefined
  readonly path: string
  readonly status: number
  readonly durationMs: number
  readonly remoteAddress: string | undefined
  /** The stable code of the error page answered, if one was. */
  reason?: string
}

/**
 * The request listener's log line and metrics, written when each response closes: one function
 * shared by every response (`this`), the request's own values kept in `pending`.
 */
const closeHandler = (
  log: Log,
  metrics: Metrics.Metrics | undefined,
  prefix: string,
  addressOf: (req: IncomingMessage) => string | undefined
) =>
  function logged(this: ServerResponse): void {
    const req = this.req
    const p = pending.get(req) as Pending
    const elapsed = Number(process.hrtime.bigint() - p.start)
    const line: RequestLine = {
      reqId: p.id,
      method: req.method,
      path: p.path,
      status: responseStatus(this),
      // Whole µs, as ms: exact below 2^53 ns
      durationMs: Math.trunc(elapsed / 1000) / 1000,
      remoteAddress: addressOf(req)
    }
    const reason = NodeHttp.reasonOf(this)
    if (reason !== undefined) line.reason = reason
    log.info(line, "request")
    if (metrics !== undefined) observe(metrics, prefix, req, this, p.path, elapsed / 1e9)
  }

/** Build the request listener. */
export const make = (options: AppOptions): RequestListener => {
  const { log } = options
  const prefix = prefixOf(options.issuer)
  const address = clientAddress(options.trustProxy)
  // Resolved once per request: by the endpoints first, when they answer, and by its log line
  const addressOf = (req: IncomingMessage): string | undefined => {
    const p = pending.get(req)
    if (p === undefined) return address(req)
    if (!p.addressRead) {
      p.address = address(req)
      p.addressRead = true
    }
    return p.address
  }
  const onError = (e: unknown) => log.error({ err: errorField(e) }, "unexpected error")
  const app = expressApp(options, prefix, onError)
  const endpoints = NodeHttp.handler(options.runtime, {
    prefix,
    remoteAddress: addressOf,
    requestId,
    // In the one list of headers the binding writes, not set beforehand with setHeader
    requestIdHeader: "x-request-id",
    onError,
    headers: NodeHttp.hardeningHeaders(options.issuer.startsWith("https:"))
  })
  const logged = closeHandler(log, options.metrics, prefix, addressOf)

  return (req, res) => {
    // One log line per request: id, method, path (never the query string), status, duration,
    // and the stable code of an error page (`reason`). Never headers, cookies or bodies.
    const start = process.hrtime.bigint()
    const id = randomUUID()
    // Read once, before Express rewrites req.url; absolute-form targets are logged by their path
    const { path } = NodeHttp.target(req.url)
    pending.set(req, { id, start, path, addressRead: false })
    res.on("close", logged)
    if (endpoints(req, res)) return
    res.setHeader("x-request-id", id)
    app(req, res)
  }
}
