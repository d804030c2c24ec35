/**
 * The fetch sender of back-channel logout tokens against a real listener on 127.0.0.1: the form
 * it posts, the status it answers, no redirect followed, and null (never a failure) when nobody
 * answers.
 */
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LogoutSender from "../src/LogoutSender.js"

interface Received {
  readonly method: string | undefined
  readonly type: string | undefined
  readonly body: string
}

/** A listener on 127.0.0.1 answering `status` (and `location`) and recording each request. */
const listener = (status: number, headers: Record<string, string> = {}) =>
  Effect.acquireRelease(
    Effect.async<{ server: Server; url: string; received: Array<Received> }>((resume) => {
      const received: Array<Received> = []
      const server = createServer((req: IncomingMessage, res) => {
        let body = ""
        req.on("data", (c) => {
          body += c
        })
        req.on("end", () => {
          received.push({ method: req.method, type: req.headers["content-type"], body })
          res.writeHead(status, headers).end()
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ server, url: `http://127.0.0.1:${port}/bc`, received }))
      })
    }),
    ({ server }) => Effect.promise(() => new Promise<void>((done) => server.close(() => done())))
  )

describe("LogoutSender over fetch", () => {
  it.scoped("posts logout_token as a form and answers the status", () =>
    Effect.gen(function* () {
      const { url, received } = yield* listener(200)
      const result = yield* LogoutSender.make().send(url, "a.b+c/=")
      assert.deepStrictEqual(result, { status: 200 })
      assert.deepStrictEqual(received, [
        { method: "POST", type: "application/x-www-form-urlencoded", body: "logout_token=a.b%2Bc%2F%3D" }
      ])
    })
  )

  it.scoped("does not follow a redirect: its status is the answer", () =>
    Effect.gen(function* () {
      const target = yield* listener(200)
      const { url } = yield* listener(302, { location: target.url })
      assert.deepStrictEqual(yield* LogoutSender.make().send(url, "t"), { status: 302 })
      assert.strictEqual(target.received.length, 0)
    })
  )

  it.scoped("answers null, without failing, when nobody listens", () =>
    Effect.gen(function* () {
      const { url, server } = yield* listener(200)
      yield* Effect.promise(() => new Promise<void>((done) => server.close(() => done())))
      assert.deepStrictEqual(yield* LogoutSender.make().send(url, "t"), { status: null })
    })
  )
})
