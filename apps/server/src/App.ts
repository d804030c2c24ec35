/**
 * The Express application: request logging, health probes, the Latchkey router,
 * the example protected resource `/api/me`, and JSON for everything else.
 */
import { randomUUID } from "node:crypto"
import { oauthRouter, principal, requireBearer } from "@latchkey/express"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Exit, type ManagedRuntime } from "effect"
import express, { type Express, type NextFunction, type Request, type Response } from "express"
import type { Log } from "./Log.js"
import type { Services } from "./Services.js"

/** What the app needs. */
export interface AppOptions {
  readonly runtime: ManagedRuntime.ManagedRuntime<Services, unknown>
  readonly issuer: string
  readonly log: Log
  readonly scopeDescriptions: Readonly<Record<string, string>>
  /** Express "trust proxy" (exact proxy addresses), or false. */
  readonly trustProxy: string | false
}

const requestIds = new WeakMap<Request, string>()

/** The id given to a request by the logging middleware. */
export const requestId = (req: Request): string | undefined => requestIds.get(req)

const json = (res: Response, status: number, body: unknown) => {
  res.status(status)
  res.setHeader("content-type", "application/json; charset=utf-8")
  res.setHeader("cache-control", "no-store")
  res.end(JSON.stringify(body))
}

/** Build the application. */
export const make = (options: AppOptions): Express => {
  const { runtime, log } = options
  const app = express()
  app.disable("x-powered-by")
  app.disable("etag")
  app.set("trust proxy", options.trustProxy)
  const prefix = new URL(options.issuer).pathname.replace(/\/+$/, "")

  // One log line per request: id, method, path (never the query string), status, duration.
  // Never headers, cookies or bodies (SECURITY K3).
  app.use((req, res, next) => {
    const start = process.hrtime.bigint()
    const id = randomUUID()
    requestIds.set(req, id)
    res.setHeader("x-request-id", id)
    res.on("finish", () => {
      log.info(
        {
          reqId: id,
          method: req.method,
          path: req.originalUrl.split("?")[0],
          status: res.statusCode,
          durationMs: Number((process.hrtime.bigint() - start) / 1000n) / 1000,
          remoteAddress: req.ip
        },
        "request"
      )
    })
    next()
  })

  app.get("/healthz", (_req, res) => json(res, 200, { status: "ok" }))
  app.get("/readyz", (_req, res, next) => {
    runtime
      .runPromiseExit(SqliteStorage.ping)
      .then(
        (exit) =>
          Exit.isSuccess(exit) ? json(res, 200, { status: "ok" }) : json(res, 503, { status: "unavailable" }),
        next
      )
  })

  app.use(
    prefix === "" ? "/" : prefix,
    oauthRouter(runtime, {
      scopeDescriptions: options.scopeDescriptions,
      requestId,
      onError: (e) =>
        log.error(
          { err: e instanceof Error ? { message: e.message, stack: e.stack } : String(e) },
          "unexpected error"
        )
    })
  )

  app.get(`${prefix}/api/me`, requireBearer(runtime), (req, res) => {
    const p = principal(req)
    json(res, 200, { open_id: p.openId, client_id: p.clientId, scope: p.scope.join(",") })
  })

  app.use((_req, res) => json(res, 404, { error: "not_found", error_description: "no such endpoint" }))

  // Never a stack trace to the client (SPEC §7)
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
    log.error(
      { err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) },
      "unhandled error"
    )
    json(res, 500, { error: "server_error", error_description: "internal server error" })
  })

  return app
}
