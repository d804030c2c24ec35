/**
 * A TCP proxy on 127.0.0.1 between a client and a server, which a test can cut and restore to
 * play a network failure: connections reset, connections refused, or a link that stops carrying
 * anything (a partition). node:net only; not part of the contract (import it from
 * `@latchkey/storage-testkit/TcpProxy`), for adapters and servers that talk to a database over TCP.
 */
import { connect, createServer, type Server, type Socket } from "node:net"

/** How a cut looks to the client. */
export type CutMode =
  /** Every open connection is reset and new ones are accepted and closed at once. */
  | "reset"
  /** Every open connection is reset and the port stops listening: new connections are refused. */
  | "refuse"
  /** Nothing is carried any more, either way, on open or new connections; nothing is closed. */
  | "blackhole"

export interface TcpProxy {
  /** The port the proxy listens on (127.0.0.1). */
  readonly port: number
  /** Connections accepted so far. */
  readonly accepted: () => number
  /** Start failing as `mode` says. */
  readonly cut: (mode: CutMode) => Promise<void>
  /** Carry new connections again; every connection cut stays cut (a stalled one is closed now). */
  readonly restore: () => Promise<void>
  /** Close everything. */
  readonly close: () => Promise<void>
}

const listen = (server: Server, port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject)
      const address = server.address()
      resolve(typeof address === "object" && address !== null ? address.port : port)
    })
  })

/** Listen on 127.0.0.1 (a free port) and forward every connection to `target`. */
export const start = async (target: { readonly host: string; readonly port: number }): Promise<TcpProxy> => {
  let mode: CutMode | null = null
  let accepted = 0
  const sockets = new Set<Socket>()
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    // A reset peer is expected here; without a listener it would end the test process.
    socket.on("error", () => socket.destroy())
  }
  const server = createServer((client) => {
    accepted++
    track(client)
    if (mode === "reset" || mode === "refuse") {
      client.destroy()
      return
    }
    if (mode === "blackhole") return
    const upstream = connect(target.port, target.host)
    track(upstream)
    client.pipe(upstream)
    upstream.pipe(client)
    client.on("close", () => upstream.destroy())
    upstream.on("close", () => client.destroy())
  })
  const port = await listen(server, 0)
  const closeServer = () => new Promise<void>((resolve) => server.close(() => resolve()))

  return {
    port,
    accepted: () => accepted,
    cut: async (next) => {
      mode = next
      if (next === "blackhole") {
        // Stop carrying bytes on open connections, leaving them open.
        for (const socket of sockets) {
          socket.unpipe()
          socket.pause()
        }
        return
      }
      for (const socket of sockets) socket.destroy()
      if (next === "refuse") await closeServer()
    },
    restore: async () => {
      const was = mode
      mode = null
      // Connections stalled by a blackhole would stay stalled: close them, as a real network would in time.
      if (was === "blackhole") for (const socket of sockets) socket.destroy()
      if (was === "refuse") await listen(server, port)
    },
    close: async () => {
      mode = "reset"
      for (const socket of sockets) socket.destroy()
      if (server.listening) await closeServer()
    }
  }
}
