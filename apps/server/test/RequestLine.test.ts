/**
 * The public listener's response head and request log line, as written: the request id header
 * once on every answer (first on the JSON endpoints'), and the line's fields in their order.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Metadata } from "@latchkey/core"
import { type Listeners, raw, start } from "./listeners.js"

let s: Listeners
beforeAll(async () => {
  s = await start()
})
afterAll(async () => {
  await s.close()
})

/** The header names of a raw response head, lower-case, in order. */
const headerNames = (head: string): Array<string> =>
  head
    .split("\r\n")
    .slice(1)
    .map((l) => l.slice(0, l.indexOf(":")).toLowerCase())

const requestIdOf = (head: string): string => /\r\nx-request-id: ([0-9a-f-]+)/i.exec(head)?.[1] ?? ""

const send = (method: string, target: string, headers: string, body = "") =>
  raw(
    s.publicPort,
    `${method} ${target} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n${headers}` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  )

const fields = [
  "level",
  "time",
  "service",
  "reqId",
  "method",
  "path",
  "status",
  "durationMs",
  "remoteAddress"
]

describe("the request line and the request id header", () => {
  it("a JSON endpoint: the id header once and first; the line's fields in order, durationMs in whole µs", async () => {
    const r = await send(
      "POST",
      `${Metadata.paths.token}?secret=SENTINEL-Q`,
      "content-type: application/x-www-form-urlencoded\r\n",
      "grant_type=client_credentials"
    )
    assert.strictEqual(r.status, 401)
    const names = headerNames(r.head)
    assert.strictEqual(names[0], "x-request-id")
    assert.strictEqual(names.filter((n) => n === "x-request-id").length, 1)
    const line = await s.waitForLine((l) => l.msg === "request" && l.reqId === requestIdOf(r.head))
    assert.deepStrictEqual(Object.keys(line), [...fields, "msg"])
    assert.deepInclude(line, {
      method: "POST",
      path: Metadata.paths.token,
      status: 401,
      remoteAddress: "127.0.0.1"
    })
    const ms = line.durationMs as number
    assert.isAtLeast(ms, 0)
    assert.strictEqual(Math.round(ms * 1000) / 1000, ms)
    assert.notInclude(JSON.stringify(line), "SENTINEL-Q")
  })

  it("an answer of 413 (the connection set to close before the answer) has the id header once", async () => {
    const r = await send(
      "POST",
      Metadata.paths.token,
      "content-type: application/x-www-form-urlencoded\r\n",
      `grant_type=x&pad=${"a".repeat(17 * 1024)}`
    )
    assert.strictEqual(r.status, 413)
    const names = headerNames(r.head)
    assert.strictEqual(names.filter((n) => n === "x-request-id").length, 1)
    const line = await s.waitForLine((l) => l.msg === "request" && l.reqId === requestIdOf(r.head))
    assert.strictEqual(line.status, 413)
  })

  it("Express's answers: the id header once; an error page's line ends with its reason", async () => {
    const health = await send("GET", "/healthz", "")
    assert.strictEqual(health.status, 200)
    assert.strictEqual(headerNames(health.head).filter((n) => n === "x-request-id").length, 1)
    const healthLine = await s.waitForLine((l) => l.msg === "request" && l.reqId === requestIdOf(health.head))
    assert.deepStrictEqual(Object.keys(healthLine), [...fields, "msg"])
    const page = await send("GET", `${Metadata.paths.authorize}?client_id=nope`, "accept: text/html\r\n")
    assert.strictEqual(page.status, 400)
    assert.strictEqual(headerNames(page.head).filter((n) => n === "x-request-id").length, 1)
    const pageLine = await s.waitForLine((l) => l.msg === "request" && l.reqId === requestIdOf(page.head))
    assert.deepStrictEqual(Object.keys(pageLine), [...fields, "reason", "msg"])
    assert.strictEqual(pageLine.reason, "unknown_client")
  })
})
