/**
 * A client that abandons its upload (headers with Content-Length 1000, 10 bytes, then the socket
 * destroyed) gets one info-level request line with status 499 and its path, on the public
 * listener's JSON endpoints and pages and on the admin listener: no error-level line, no stack.
 */

import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Metadata } from "@latchkey/core"
import type { LogLine } from "./helpers.js"
import { abandon, adminToken, type Listeners, raw, start } from "./listeners.js"

let s: Listeners
beforeAll(async () => {
  s = await start()
})
afterAll(async () => {
  await s.close()
})

const isError = (l: LogLine) => l.level === "error" || l.level === "fatal"

const cases = (): ReadonlyArray<{
  readonly port: number
  readonly path: string
  readonly headers: string
}> => [
  { port: s.publicPort, path: Metadata.paths.token, headers: `authorization: ${s.basic}\r\n` },
  { port: s.publicPort, path: Metadata.paths.introspect, headers: "" },
  { port: s.publicPort, path: Metadata.paths.login, headers: "" },
  { port: s.publicPort, path: Metadata.paths.authorize, headers: "" },
  { port: s.adminPort, path: "/admin/v1/applications", headers: `authorization: Bearer ${adminToken}\r\n` }
]

describe("an abandoned upload", () => {
  it("T15: is one info-level request line with status 499 and its path: no error-level line, no stack", async () => {
    for (const c of cases()) {
      const type = c.port === s.adminPort ? "application/json" : "application/x-www-form-urlencoded"
      // The listener has answered once on this path: what it sets up on a first request is done
      await raw(
        c.port,
        `POST ${c.path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`
      )
      const from = s.lines.length
      await abandon(
        c.port,
        `POST ${c.path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${c.headers}content-type: ${type}\r\ncontent-length: 1000\r\n\r\n0123456789`
      )
      // The server's own event: the abandoned request's line (or, before the fix, the error line)
      await s.waitForLine((l) => s.lines.indexOf(l) >= from && (isError(l) || l.status === 499))
      // A request read after it: the abandoned request's failure was handled in an earlier turn
      const after = await raw(c.port, "GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
      const id = /x-request-id: ([0-9a-f-]+)/i.exec(after.head)?.[1]
      await s.waitForLine((l) => l.reqId === id)
      const logged = s.lines.slice(from).filter((l) => l.reqId !== id)
      assert.deepStrictEqual(
        logged.map((l) => [l.level, l.msg, l.method, l.path, l.status]),
        [["info", c.port === s.adminPort ? "admin request" : "request", "POST", c.path, 499]],
        c.path
      )
      assert.notInclude(JSON.stringify(logged), "stack", c.path)
    }
    assert.deepStrictEqual(s.lines.filter(isError), [])
  })
})
