/**
 * Listening on a configured port, with the operator's fix in the error: a port in use, a
 * privileged port or an address this machine lacks names the variable to change.
 */
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"

/** A listener could not start for a reason the configuration can fix; `message` is one line. */
export class ListenError extends Error {}

/** Which variables set a listener's port and address. */
export interface Variables {
  readonly port: "PORT" | "LATCHKEY_ADMIN_PORT"
  readonly host: "HOST" | "LATCHKEY_ADMIN_HOST"
}

/** The one-line explanation of a listen failure, or undefined for a failure the configuration cannot fix. */
export const explain = (
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
