/**
 * The admin listener: a node:http server of its own (LATCHKEY_ADMIN_HOST:LATCHKEY_ADMIN_PORT, by
 * default on 127.0.0.1 only) serving the admin API under `/admin/v1` through the core's
 * `AdminApi.route` and the Prometheus metrics at `/metrics`, both behind the bearer token
 * LATCHKEY_ADMIN_TOKEN, with LATCHKEY_CONSOLE=on the operator console under `/console` (its own
 * sign-in, no bearer token), and a JSON 404 for anything else. The public listener serves none of them.
 *
 * With LATCHKEY_WORKERS above 1 it runs in the cluster's primary (`startForCluster`), which opens
 * the store for it like the CLI does, and answers `/metrics` with the sum of every worker's
 * metrics and its own.
 */
import { randomUUID } from "node:crypto"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import { AdminApi, Console, Http, Paths } from "@latchkey/core"
import { ConsolePages } from "@latchkey/express"
import { Body, NodeHttp } from "@latchkey/node"
import type { ManagedRuntime } from "effect"
import * as Cluster from "./Cluster.js"
import type { ServerEnv } from "./Env.js"
import { boundedServer, closeGracefully, listen, responseStatus } from "./Listen.js"
import type { Log } from "./Log.js"
import * as Metrics from "./Metrics.js"
import * as Services from "./Services.js"

/** What the admin listener needs. */
export interface Options {
  readonly host: string
  /** 0 picks a free port (see `AdminServer.port` and the `admin listening` log line). */
  readonly port: number
  readonly token: string
  /** The operator console (LATCHKEY_CONSOLE=on): whether the issuer is https, and the product name; null: off. */
  readonly console?: { readonly https: boolean; readonly productName: string } | null
  readonly runtime: ManagedRuntime.ManagedRuntime<AdminApi.Requirements, unknown>
  /** The metrics in the Prometheus text format. */
  readonly metrics: () => Promise<string>
  readonly log: Log
  readonly headersTimeoutMs: number
  readonly requestTimeoutMs: number
}

/** A running admin listener. */
export interface AdminServer {
  readonly server: Server
  readonly port: number
  /** Stop accepting, finish in-flight requests (10 s at most). */
  readonly stop: () => Promise<void>
}

const headers = NodeHttp.hardeningHeaders(false)

/** The headers of a metrics answer but its length, as the flat list `writeHead` takes. */
const metricsHeaders: ReadonlyArray<string> = [
  ...Object.entries(headers).flat(),
  "content-type",
  Metrics.contentType,
  "cache-control",
  "no-store"
]

const notFound = Http.json(404, { error: "not_found", error_description: "no such endpoint" })

/** The console: the core answers, the Express binding renders; its own sign-in, no bearer token. */
const serveConsole = async (
  runtime: Options["runtime"],
  req: IncomingMessage,
  res: ServerResponse,
  request: Http.HttpRequest,
  pages: NonNullable<Options["console"]>
): Promise<void> => {
  const read = request.method === "POST" ? await NodeHttp.withBody(req, res, request) : request
  const answer = await runtime.runPromise(
    Console.handle({ ...read, ownOrigin: `http://${req.headers.host ?? ""}` })
  )
  const page = ConsolePages.render(answer, {
    acceptLanguage: req.headers["accept-language"],
    productName: pages.productName,
    https: pages.https
  })
  NodeHttp.write(res, { ...page, body: request.method === "HEAD" ? "" : page.body })
}

/** The request listener of the admin port. */
export const listener = (
  options: Omit<Options, "host" | "port" | "headersTimeoutMs" | "requestTimeoutMs">
) => {
  const { log, token } = options
  const serve = async (
    req: IncomingMessage,
    res: ServerResponse,
    id: string,
    { path, query }: NodeHttp.Target
  ): Promise<void> => {
    const request = NodeHttp.requestOf(req, { path, query, requestId: id })
    if (path === Paths.metrics) {
      if (!AdminApi.authorized(request, token)) return NodeHttp.write(res, AdminApi.unauthorized, headers)
      if (request.method !== "GET" && request.method !== "HEAD") {
        return NodeHttp.write(res, Http.refusalResponse(Http.methodNotAllowed("GET, HEAD")), headers)
      }
      const text = await options.metrics()
      res.writeHead(200, [...metricsHeaders, "content-length", Buffer.byteLength(text)])
      res.end(request.method === "HEAD" ? undefined : text)
      return
    }
    if (options.console != null && Console.owns(path)) {
      return serveConsole(options.runtime, req, res, request, options.console)
    }
    if (path !== AdminApi.basePath && !path.startsWith(`${AdminApi.basePath}/`)) {
      return NodeHttp.write(res, notFound, headers)
    }
    // Refused before the body is read: an unauthenticated client cannot make the server buffer one
    if (!AdminApi.authorized(request, token)) return NodeHttp.write(res, AdminApi.unauthorized, headers)
    const read =
      request.method === "GET" || request.method === "HEAD"
        ? request
        : await NodeHttp.withBody(req, res, request)
    NodeHttp.write(res, await options.runtime.runPromise(AdminApi.route(read, { token })), headers)
  }

  return (req: IncomingMessage, res: ServerResponse): void => {
    const start = process.hrtime.bigint()
    const id = randomUUID()
    const target = NodeHttp.target(req.url)
    res.setHeader("x-request-id", id)
    res.on("close", () => {
      log.info(
        {
          listener: "admin",
          reqId: id,
          method: req.method,
          path: target.path,
          status: responseStatus(res),
          durationMs: Number((process.hrtime.bigint() - start) / 1000n) / 1000,
          remoteAddress: req.socket.remoteAddress
        },
        "admin request"
      )
    })
    serve(req, res, id, target).catch((e: unknown) => {
      // The client went away: nobody to answer, nothing to report (the request line says 499)
      if (e instanceof Body.ClientClosed) return
      log.error(
        { listener: "admin", err: e instanceof Error ? { message: e.message, stack: e.stack } : String(e) },
        "unexpected error"
      )
      if (res.headersSent) res.destroy()
      else NodeHttp.write(res, Http.errorResponse(Http.serverError), headers)
    })
  }
}

/** Listen on the admin address; rejects with a ListenError naming LATCHKEY_ADMIN_PORT or LATCHKEY_ADMIN_HOST. */
export const start = async (options: Options): Promise<AdminServer> => {
  const server = boundedServer(options, listener(options))
  const port = await listen(server, options.port, options.host, {
    port: "LATCHKEY_ADMIN_PORT",
    host: "LATCHKEY_ADMIN_HOST"
  })
  options.log.info(
    { adminPort: port, address: options.host },
    `admin listening on ${options.host}:${port} (${AdminApi.basePath}, ${Paths.metrics})`
  )
  let stopping: Promise<void> | undefined
  const stop = () => {
    stopping ??= closeGracefully(server)
    return stopping
  }
  return { server, port, stop }
}

/**
 * The admin listener of a cluster's primary (LATCHKEY_WORKERS above 1): a runtime of its own over
 * the store (the workers' is in their processes), and `/metrics` summing every worker's registry
 * and the primary's. Resolves with the function that stops it and closes the store.
 */
export const startForCluster = async (env: ServerEnv, log: Log): Promise<() => Promise<void>> => {
  const admin = env.admin
  if (admin === null) return async () => {}
  const issuer = env.issuer ?? `http://localhost:${env.port}`
  const { runtime, metrics } = await Services.start(env, issuer, log)
  let server: AdminServer
  try {
    server = await start({
      host: admin.host,
      port: admin.port,
      token: admin.token,
      console: admin.console ? { https: issuer.startsWith("https:"), productName: env.productName } : null,
      runtime,
      log,
      headersTimeoutMs: env.headersTimeoutMs,
      requestTimeoutMs: env.requestTimeoutMs,
      // Each process's own values of what would be averaged or omitted, labelled by worker
      metrics: async () =>
        Metrics.exposition([
          ...(await Cluster.workerMetrics()).map((w) => Metrics.ofProcess(String(w.worker), w.metrics)),
          Metrics.ofProcess("primary", await metrics.registry.getMetricsAsJSON())
        ])
    })
  } catch (e) {
    await runtime.dispose()
    throw e
  }
  return async () => {
    await server.stop()
    await runtime.dispose()
  }
}
