import { createServer, request, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { NodeHttp } from "@latchkey/node"
import express, { type RequestHandler } from "express"
import helmet from "helmet"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Hardening from "../src/internal/hardening.js"

/** The raw headers of a GET on the wire, without the Date node:http adds. */
const rawHeaders = (url: string): Promise<Array<string>> =>
  new Promise((resolve, reject) => {
    request(url, (res) => {
      res.resume()
      res.on("end", () =>
        resolve(res.rawHeaders.filter((_, i, all) => (i % 2 === 0 ? all[i] : all[i - 1]) !== "Date"))
      )
    })
      .on("error", reject)
      .end()
  })

describe("Hardening.middleware", () => {
  let server: Server
  let base: string

  beforeAll(async () => {
    // Express's own X-Powered-By left on: helmet removes it
    const app = express()
    const answer: RequestHandler = (_req, res) => {
      res.setHeader("content-type", "text/plain")
      res.end("ok")
    }
    for (const https of [false, true]) {
      const options = NodeHttp.helmetOptions(https)
      app.get(`/helmet/${https}`, helmet(options), answer)
      app.get(`/replayed/${https}`, Hardening.middleware(options), answer)
    }
    server = createServer(app)
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  it("sends exactly helmet's headers, in its order, X-Powered-By removed, over http and https issuers", async () => {
    for (const https of [false, true]) {
      const byHelmet = await rawHeaders(`${base}/helmet/${https}`)
      assert.notInclude(byHelmet, "X-Powered-By")
      assert.strictEqual(byHelmet.includes("Strict-Transport-Security"), https)
      assert.deepStrictEqual(await rawHeaders(`${base}/replayed/${https}`), byHelmet)
    }
  })

  it("records helmet's calls once: a removal of X-Powered-By and one setting per hardening header", () => {
    const steps = Hardening.steps(NodeHttp.helmetOptions(false))
    assert.deepStrictEqual(
      steps.filter(([, value]) => value === undefined).map(([name]) => name.toLowerCase()),
      ["x-powered-by"]
    )
    assert.deepStrictEqual(
      Object.fromEntries(
        steps.filter(([, value]) => value !== undefined).map(([name, value]) => [name.toLowerCase(), value])
      ),
      NodeHttp.hardeningHeaders(false)
    )
  })
})
