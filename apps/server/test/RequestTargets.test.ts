/**
 * Absolute-form request targets (RFC 9112 §3.2.2: `POST http://host/oauth2/oauth2/token HTTP/1.1`,
 * which node:http hands over as `req.url` unchanged) are answered like origin-form ones on every
 * endpoint of both listeners, whatever host they name, and logged by their path alone.
 */

import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Metadata } from "@latchkey/core"
import { adminToken, type Listeners, raw, start } from "./listeners.js"

let s: Listeners
beforeAll(async () => {
  s = await start()
})
afterAll(async () => {
  await s.close()
})

interface Case {
  readonly listener: "public" | "admin"
  readonly method: string
  readonly path: string
  readonly query?: string
  readonly headers?: Record<string, string>
  readonly body?: string
}

const form = "application/x-www-form-urlencoded"

const cases = (): ReadonlyArray<Case> => [
  {
    listener: "public",
    method: "POST",
    path: Metadata.paths.token,
    headers: { authorization: s.basic, "content-type": form },
    body: "grant_type=no_such_grant"
  },
  {
    listener: "public",
    method: "POST",
    path: Metadata.paths.introspect,
    headers: { authorization: s.basic, "content-type": form },
    body: "token=not-a-token"
  },
  {
    listener: "public",
    method: "GET",
    path: Metadata.paths.authorize,
    query: "client_id=nobody&response_type=code"
  },
  { listener: "public", method: "GET", path: Metadata.paths.login },
  { listener: "public", method: "GET", path: Metadata.paths.metadata },
  { listener: "public", method: "GET", path: "/healthz" },
  { listener: "public", method: "GET", path: "/no/such/path" },
  {
    listener: "admin",
    method: "GET",
    path: "/admin/v1/applications",
    query: "x=1",
    headers: { authorization: `Bearer ${adminToken}` }
  },
  { listener: "admin", method: "GET", path: "/admin/v1/applications", headers: {} },
  { listener: "admin", method: "GET", path: "/metrics", headers: { authorization: `Bearer ${adminToken}` } }
]

const send = (c: Case, target: string) => {
  const headers = { host: "127.0.0.1", connection: "close", ...c.headers }
  const body = c.body ?? ""
  const lines = [
    `${c.method} ${target} HTTP/1.1`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ...(body === "" ? [] : [`content-length: ${Buffer.byteLength(body)}`])
  ]
  return raw(c.listener === "public" ? s.publicPort : s.adminPort, `${lines.join("\r\n")}\r\n\r\n${body}`)
}

const requestId = (head: string): string => /x-request-id: ([0-9a-f-]+)/i.exec(head)?.[1] ?? ""

describe("absolute-form request targets", () => {
  it("T16: are answered like origin-form ones on every endpoint of both listeners, whatever host they name, and logged by their path", async () => {
    for (const c of cases()) {
      const origin = `${c.path}${c.query === undefined ? "" : `?${c.query}`}`
      const port = c.listener === "public" ? s.publicPort : s.adminPort
      const expected = await send(c, origin)
      assert.isBelow(expected.status, 500, origin)
      for (const authority of [`127.0.0.1:${port}`, "other.example", "user:pass@127.0.0.1"]) {
        for (const scheme of ["http", "HTTPS"]) {
          const absolute = `${scheme}://${authority}${origin}`
          const res = await send(c, absolute)
          assert.strictEqual(res.status, expected.status, absolute)
          assert.strictEqual(res.body, expected.body, absolute)
          const id = requestId(res.head)
          const line = await s.waitForLine((l) => l.reqId === id)
          assert.strictEqual(line.path, c.path, absolute)
          assert.strictEqual(line.status, expected.status, absolute)
        }
      }
    }
    // An empty path is "/"
    const root = await raw(
      s.publicPort,
      "GET http://127.0.0.1 HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n"
    )
    const rootLine = await s.waitForLine((l) => l.reqId === requestId(root.head))
    assert.strictEqual(rootLine.path, "/")
    assert.notInclude(JSON.stringify(s.lines), "pass@")
    assert.notInclude(JSON.stringify(s.lines), "other.example")
  })

  it("T16: count under their endpoint in the metrics", async () => {
    const c = cases()[0] as Case
    const before = s.endpoints.length
    await send(c, `http://127.0.0.1${c.path}`)
    await send(c, `http://127.0.0.1/oauth2${c.path}`)
    assert.deepStrictEqual(s.endpoints.slice(before), ["token", "other"])
  })
})
