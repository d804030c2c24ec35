/**
 * A tiny round-robin reverse proxy for tests, on node:http and 127.0.0.1: each request goes to
 * the next backend in turn, with its method, path, headers and body unchanged and the client's
 * address added as X-Forwarded-For; the backend's answer comes back unchanged.
 */
import { Agent, createServer, request } from "node:http"
import type { AddressInfo } from "node:net"

/** A request the proxy passed on, and the index of the backend it went to. */
interface Forwarded {
  readonly method: string
  readonly path: string
  readonly backend: number
}

/** A running proxy. */
export interface RoundRobinProxy {
  /** Its base URL, `http://127.0.0.1:<port>`. */
  readonly base: string
  /** Every request passed on so far, in order of arrival. */
  readonly forwarded: ReadonlyArray<Forwarded>
  readonly close: () => Promise<void>
}

/**
 * Start a proxy in front of `backends` (base URLs). `/favicon.ico` always goes to the first
 * backend without taking a turn: a browser fetches it between the steps of a flow, when it
 * chooses, and the steps would no longer alternate. A backend that cannot be reached is a 502.
 */
export const startRoundRobinProxy = async (backends: ReadonlyArray<string>): Promise<RoundRobinProxy> => {
  const targets = backends.map((b) => new URL(b))
  const agent = new Agent({ keepAlive: true })
  const forwarded: Array<Forwarded> = []
  let turn = 0
  const server = createServer((req, res) => {
    const path = req.url ?? "/"
    const backend = path === "/favicon.ico" ? 0 : turn++ % targets.length
    const target = targets[backend] as URL
    forwarded.push({ method: req.method ?? "GET", path, backend })
    const upstream = request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        method: req.method,
        path,
        headers: [...req.rawHeaders, "X-Forwarded-For", req.socket.remoteAddress ?? ""]
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders)
        answer.pipe(res)
      }
    )
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" })
      res.end("bad gateway")
    })
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    forwarded,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      agent.destroy()
    }
  }
}
