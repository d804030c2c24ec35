import { createServer, type OutgoingHttpHeader, request, type Server, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Config, Entropy, type Http, Memory, PasswordHasher, Throttle } from "@latchkey/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { NodeCrypto, NodeHttp } from "../src/index.js"

/** Every header-writing call a response received: its method and header argument. */
const calls: Array<{ readonly method: string; readonly headers: unknown }> = []

/** A ServerResponse that records its `writeHead` and `setHeader` calls in `calls`. */
class Recording extends ServerResponse {
  override writeHead(statusCode: number, ...rest: Array<unknown>): this {
    calls.push({ method: "writeHead", headers: rest.at(-1) })
    return Reflect.apply(super.writeHead, this, [statusCode, ...rest]) as this
  }
  override setHeader(name: string, value: number | string | ReadonlyArray<string>): this {
    calls.push({ method: "setHeader", headers: [name, value] })
    return super.setHeader(name, value)
  }
}

/** The headers of a GET on the wire, in order and as sent, without those node:http adds. */
const rawHeaders = (url: string): Promise<Array<string>> =>
  new Promise((resolve, reject) => {
    request(url, (res) => {
      res.resume()
      const added = new Set(["date", "connection", "keep-alive"])
      const own: Array<string> = []
      for (let i = 0; i < res.rawHeaders.length; i += 2) {
        const name = res.rawHeaders[i] as string
        if (!added.has(name.toLowerCase())) own.push(name, res.rawHeaders[i + 1] as string)
      }
      res.on("end", () => resolve(own))
    })
      .on("error", reject)
      .end()
  })

const names = (raw: ReadonlyArray<string>) => raw.filter((_, i) => i % 2 === 0)

describe("the node binding's response headers", () => {
  let server: Server
  let base: string
  let runtime: ManagedRuntime.ManagedRuntime<Http.Requirements, unknown>
  const hardening = NodeHttp.hardeningHeaders(false)

  beforeAll(async () => {
    server = createServer({ ServerResponse: Recording })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const hasher = Layer.succeed(PasswordHasher.PasswordHasher, {
      hash: (password) => Effect.succeed(password),
      verify: (password, stored) => Effect.succeed(stored === password)
    })
    runtime = ManagedRuntime.make(
      Layer.mergeAll(
        Memory.layer,
        Config.layer({ issuer: base, serverKey: "test-server-key-0123456789abcdef" }),
        Entropy.layer,
        hasher,
        Throttle.layer()
      ).pipe(Layer.provideMerge(NodeCrypto.layer))
    )
    const plain = NodeHttp.handler(runtime)
    const withId = NodeHttp.handler(runtime, {
      prefix: "/id",
      requestIdHeader: "x-request-id",
      requestId: (req) => (req.url?.includes("anonymous") === true ? undefined : "req-1")
    })
    const under = { "x-frame-options": "DENY", "x-a": "1", "Content-Length": "5" }
    server.on("request", (req, res) => {
      if (plain(req, res) || withId(req, res)) return
      // The core's x-frame-options replaces the one under it; a content-length under it is never sent
      const own = { "content-type": "text/plain; charset=utf-8", "x-frame-options": "SAMEORIGIN" }
      NodeHttp.write(res, { status: 200, headers: own, body: "héllo" }, under)
    })
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await runtime.dispose()
  })

  it("writes the hardening headers, then the core's, then content-length, in one writeHead and no setHeader", async () => {
    calls.length = 0
    const raw = await rawHeaders(`${base}/oauth2/oauth2/token`)
    assert.deepStrictEqual(names(raw), [
      ...Object.keys(hardening),
      "content-type",
      "cache-control",
      "pragma",
      "allow",
      "content-length"
    ])
    assert.deepStrictEqual(
      calls.map((c) => c.method),
      ["writeHead"]
    )
    assert.deepStrictEqual(calls[0]?.headers as Array<OutgoingHttpHeader>, [
      ...raw.slice(0, -1),
      Number(raw.at(-1))
    ])
  })

  it("leads with the request id header when asked, and leaves it out for a request without an id", async () => {
    calls.length = 0
    const raw = await rawHeaders(`${base}/id/oauth2/oauth2/token`)
    assert.deepStrictEqual(raw.slice(0, 2), ["x-request-id", "req-1"])
    assert.deepStrictEqual(names(raw).slice(1, 1 + Object.keys(hardening).length), Object.keys(hardening))
    const anonymous = await rawHeaders(`${base}/id/oauth2/oauth2/token?anonymous`)
    assert.deepStrictEqual(anonymous, raw.slice(2))
    assert.deepStrictEqual(
      calls.map((c) => c.method),
      ["writeHead", "writeHead"]
    )
  })

  it("write: the core's header replaces one of the same name under it, and content-length is the body's bytes", async () => {
    const raw = await rawHeaders(`${base}/elsewhere`)
    assert.deepStrictEqual(raw, [
      "x-a",
      "1",
      "content-type",
      "text/plain; charset=utf-8",
      "x-frame-options",
      "SAMEORIGIN",
      "content-length",
      "6"
    ])
  })
})
