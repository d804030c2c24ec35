/**
 * Both listeners of the server in this process, on 127.0.0.1, over the memory store: the public
 * one (`App.make`) and the admin one (`AdminServer.listener`), every log line captured, and raw
 * HTTP/1.1 over a socket for what `fetch` cannot send (absolute-form targets, abandoned bodies).
 */
import type { Server } from "node:http"
import { type AddressInfo, connect } from "node:net"
import {
  Admin,
  Audit,
  Config,
  Entropy,
  Memory,
  type StorageError,
  StorageHealth,
  Throttle
} from "@latchkey/core"
import { ScryptHasher } from "@latchkey/node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { pino } from "pino"
import * as AdminServer from "../src/AdminServer.js"
import * as App from "../src/App.js"
import { boundedServer, closeGracefully } from "../src/Listen.js"
import * as Log from "../src/Log.js"
import * as Metrics from "../src/Metrics.js"
import type { LogLine } from "./helpers.js"

/** The admin token of the admin listener. */
export const adminToken = "in-process-admin-token-0123456789abcdef"

/** A raw HTTP response. */
export interface RawResponse {
  readonly status: number
  readonly head: string
  readonly body: string
}

/** Send `text` on a new connection and read the response until the server closes it. */
export const raw = (port: number, text: string): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1")
    const chunks: Array<Buffer> = []
    socket.on("data", (d: Buffer) => chunks.push(d))
    socket.on("error", reject)
    socket.on("end", () => {
      const all = Buffer.concat(chunks).toString("utf8")
      const split = all.indexOf("\r\n\r\n")
      const head = all.slice(0, split)
      resolve({ status: Number(head.split(" ")[1]), head, body: all.slice(split + 4) })
    })
    socket.write(text)
  })

/** Send the headers of a request and the start of its body, then close the connection. */
export const abandon = (port: number, text: string): Promise<void> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1")
    socket.on("error", reject)
    socket.write(text, () => {
      socket.destroy()
      resolve()
    })
  })

/** Both listeners and what they logged. */
export interface Listeners {
  readonly publicPort: number
  readonly adminPort: number
  /** The Basic credentials of a registered application. */
  readonly basic: string
  readonly lines: ReadonlyArray<LogLine>
  /** The first log line, written so far or later, that `match` accepts. */
  readonly waitForLine: (match: (line: LogLine) => boolean) => Promise<LogLine>
  /** The endpoint label of every request the public listener's metrics recorded. */
  readonly endpoints: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

const listen = (server: Server): Promise<number> =>
  new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
  )

/** Start both listeners. */
export const start = async (): Promise<Listeners> => {
  const issuer = "http://127.0.0.1"
  const lines: Array<LogLine> = []
  const listeners = new Set<() => void>()
  const log = pino(Log.loggerOptions("info"), {
    write: (s: string) => {
      lines.push(JSON.parse(s) as LogLine)
      for (const l of listeners) l()
    }
  })
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      Memory.layer,
      Config.layer({ issuer, serverKey: "k".repeat(32) }),
      Entropy.layer,
      ScryptHasher.layer({ N: 1024, r: 8, p: 1 }),
      Throttle.layer(),
      Layer.provideMerge(Audit.layer, Memory.auditLayer),
      Layer.succeed(StorageHealth.StorageHealth, {
        ping: Effect.void as Effect.Effect<void, StorageError.StorageError>
      }),
      // The core's own log calls (a defect's "unexpected failure") go to the captured lines too
      Log.effectLayer(log)
    )
  )
  const endpoints: Array<string> = []
  const metrics = Metrics.make({ defaults: false })
  const publicServer = boundedServer(
    { headersTimeoutMs: 10_000, requestTimeoutMs: 10_000 },
    App.make({
      runtime,
      issuer,
      log,
      scopeDescriptions: {},
      trustProxy: false,
      metrics: {
        ...metrics,
        request: (endpoint, ...rest) => {
          endpoints.push(endpoint)
          metrics.request(endpoint, ...rest)
        }
      }
    })
  )
  const adminServer = boundedServer(
    { headersTimeoutMs: 10_000, requestTimeoutMs: 10_000 },
    AdminServer.listener({ token: adminToken, runtime, log, metrics: async () => "latchkey_test 1\n" })
  )
  const created = await runtime.runPromise(
    Admin.createApplication({
      name: "Targets",
      redirectUris: ["https://app.example/cb"],
      scope: "profile",
      grantTypes: ["client_credentials"]
    })
  )
  const waitForLine = (match: (line: LogLine) => boolean): Promise<LogLine> =>
    new Promise((resolve) => {
      let scanned = 0
      const check = () => {
        for (; scanned < lines.length; scanned++) {
          const line = lines[scanned] as LogLine
          if (match(line)) {
            listeners.delete(check)
            resolve(line)
            return
          }
        }
      }
      listeners.add(check)
      check()
    })
  return {
    publicPort: await listen(publicServer),
    adminPort: await listen(adminServer),
    basic: `Basic ${Buffer.from(`${created.app.appKey}:${created.appSecret}`).toString("base64")}`,
    lines,
    waitForLine,
    endpoints,
    close: async () => {
      await Promise.all([closeGracefully(publicServer, 0), closeGracefully(adminServer, 0)])
      await runtime.dispose()
    }
  }
}
