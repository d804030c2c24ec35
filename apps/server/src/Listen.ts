/**
 * Listening on a configured port, with the operator's fix in the error: a port in use, a
 * privileged port or an address this machine lacks names the variable to change.
 */
import { createServer, type RequestListener, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** A listener could not start for a reason the configuration can fix; `message` is one line. */
export class ListenError extends Error {}

/** Which variables set a listener's port and address. */
export interface Variables {
  readonly port: "PORT" | "LATCHKEY_ADMIN_PORT"
  readonly host: "HOST" | "LATCHKEY_ADMIN_HOST"
}

/** The one-line explanation of a listen failure, or undefined for a failure the configuration cannot fix. */
const explain = (
  error: NodeJS.ErrnoException,
  port: number,
  host: string,
  variables: Variables
): string | undefined => {
  switch (error.code) {
    case "EADDRINUSE":
      return `${host}:${port} is already in use by another process: set ${variables.port} to a free port (${variables.port}=${port} now), or stop the other process`
    case "EACCES":
      return `not allowed to listen on ${host}:${port} (ports below 1024 need privileges): set ${variables.port} to 1024 or above (${variables.port}=${port} now)`
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `this machine has no address ${host} to listen on: set ${variables.host} to one of its addresses, e.g. 127.0.0.1 or 0.0.0.0 (${variables.host}=${host} now)`
    default:
      return undefined
  }
}

/** Listen on `host:port`; resolves with the port bound, or rejects with ListenError (or the original error). */
export const listen = (server: Server, port: number, host: string, variables: Variables): Promise<number> =>
  new Promise<number>((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) => {
      const message = explain(e, port, host, variables)
      reject(message === undefined ? e : new ListenError(message))
    }
    server.once("error", onError)
    server.listen(port, host, () => {
      server.off("error", onError)
      resolve((server.address() as AddressInfo).port)
    })
  })

/** How long a request may take: its headers, and the whole of it (docs/security.md, T9). */
export interface Timeouts {
  readonly headersTimeoutMs: number
  readonly requestTimeoutMs: number
}

/**
 * A node:http server whose requests have bounded lifetimes: slow clients cannot hold connections
 * forever. Node enforces the timeouts only every connectionsCheckingInterval (30 s by default):
 * this one checks every second (or every half headers timeout), so they hold to within about a
 * second.
 */
export const boundedServer = (timeouts: Timeouts, listener: RequestListener): Server => {
  const server = createServer(
    {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(timeouts.headersTimeoutMs / 2)))
    },
    listener
  )
  server.keepAliveTimeout = 5_000
  return server
}

/** Stop accepting and close idle connections; requests in flight get `graceMs` to finish, then their connections are closed. */
export const closeGracefully = async (server: Server, graceMs = 10_000): Promise<void> => {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  server.closeIdleConnections()
  const grace = setTimeout(() => server.closeAllConnections(), graceMs)
  grace.unref()
  await closed
  clearTimeout(grace)
}

/**
 * The status a request line records once its response has closed: 499 (nginx's "client closed
 * request") when the client closed the connection before the response was sent.
 */
export const responseStatus = (res: ServerResponse): number => (res.writableFinished ? res.statusCode : 499)
