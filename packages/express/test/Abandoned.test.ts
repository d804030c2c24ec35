/**
 * The router on its own: an upload the client abandons is nobody's error (no `onError`, the
 * response closes unfinished), and an absolute-form target (RFC 9112 §3.2.2) reaches the same
 * endpoint as its origin-form.
 */
import { createServer } from "node:http"
import { type AddressInfo, connect } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Config, Entropy, Memory, Metadata, Throttle } from "@latchkey/core"
import { Layer, ManagedRuntime } from "effect"
import express from "express"
import { oauthRouter } from "../src/index.js"
import { testHasher } from "./helpers.js"

let port: number
let close: () => Promise<void>
const errors: Array<unknown> = []
const closed: Array<{ readonly url: string | undefined; readonly finished: boolean }> = []
const closeWaiters: Array<() => void> = []

beforeAll(async () => {
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      Memory.layer,
      Config.layer({ issuer: "http://127.0.0.1/auth", serverKey: "k".repeat(32) }),
      Entropy.layer,
      testHasher,
      Throttle.layer()
    )
  )
  const app = express()
  app.use("/auth", oauthRouter(runtime, { onError: (e) => errors.push(e) }))
  app.use((_req, res) => {
    res.status(404).end("not found")
  })
  const server = createServer((req, res) => {
    const url = req.url
    res.on("close", () => {
      closed.push({ url, finished: res.writableFinished })
      for (const resolve of closeWaiters.splice(0)) resolve()
    })
    app(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.address() as AddressInfo).port
  close = async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await runtime.dispose()
  }
})
afterAll(() => close())

const send = (text: string, abandon: boolean): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1")
    let received = ""
    socket.on("data", (d: Buffer) => {
      received += d.toString("utf8")
    })
    socket.on("error", reject)
    socket.on("end", () => resolve(received))
    socket.write(text, () => {
      if (!abandon) return
      socket.destroy()
      resolve("")
    })
  })

const form = "content-type: application/x-www-form-urlencoded\r\n"

describe("the router", () => {
  it("reports no error for an upload the client abandons, on the JSON endpoints and the pages", async () => {
    for (const path of [Metadata.paths.token, Metadata.paths.login, Metadata.paths.authorize]) {
      // One answered request first: the router's hardening headers are set up on the first
      await send(`GET /auth${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`, false)
      closed.length = 0
      const responseClosed = new Promise<void>((resolve) => closeWaiters.push(resolve))
      await send(
        `POST /auth${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${form}content-length: 1000\r\n\r\n0123456789`,
        true
      )
      await responseClosed
      assert.deepStrictEqual(closed, [{ url: `/auth${path}`, finished: false }])
      // A request read after it: the abandoned request's failure was handled in an earlier turn
      await send(
        `GET /auth${Metadata.paths.metadata} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`,
        false
      )
      assert.deepStrictEqual(errors, [], path)
    }
  })

  it("answers an absolute-form target like its origin-form", async () => {
    const request = (target: string) =>
      send(
        `POST ${target} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n${form}content-length: 15\r\n\r\ngrant_type=nope`,
        false
      )
    const bodyOf = (r: string) => r.slice(r.indexOf("\r\n\r\n") + 4)
    const origin = await request(`/auth${Metadata.paths.token}`)
    assert.match(origin, /^HTTP\/1\.1 401 /)
    const absolute = await request(`http://other.example/auth${Metadata.paths.token}`)
    assert.match(absolute, /^HTTP\/1\.1 401 /)
    assert.strictEqual(bodyOf(absolute), bodyOf(origin))
    assert.deepStrictEqual(errors, [])
  })
})
