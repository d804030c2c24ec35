import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ApplicationStore, Config, Entropy, Memory, StorageError, Throttle } from "@latchkey/core"
import { Context, Effect, Layer, ManagedRuntime } from "effect"
import express from "express"
import { oauthRouter } from "../src/index.js"
import { basic, testHasher } from "./helpers.js"

// Stores whose application lookups fail, as when the database is unreachable
const broken = Layer.effectContext(
  Effect.sync(() => {
    const down = () => Effect.fail(new StorageError.StorageError({ message: "database is down" }))
    return Context.add(Memory.make(), ApplicationStore.ApplicationStore, {
      insert: down,
      find: down,
      webOriginRegistered: down,
      list: down,
      updateSecret: down,
      markPreviousSecretUsed: down,
      update: down,
      setStatus: down,
      owners: down,
      addOwner: down,
      removeOwner: down,
      ownedBy: down,
      remove: down
    })
  })
)

let base: string
let close: () => Promise<void>
const errors: Array<unknown> = []

beforeAll(async () => {
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      broken,
      Config.layer({ issuer: "http://127.0.0.1", serverKey: "k".repeat(32) }),
      Entropy.layer,
      testHasher,
      Throttle.layer()
    )
  )
  const app = express()
  // a body parser mounted before the router by mistake
  app.use(
    "/parsed",
    express.urlencoded({ extended: false }),
    oauthRouter(runtime, { onError: (e) => errors.push(e) })
  )
  app.use(oauthRouter(runtime))
  const server = createServer(app)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  close = async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await runtime.dispose()
  }
})
afterAll(() => close())

describe("when storage is unavailable", () => {
  it("the token endpoint answers 503 temporarily_unavailable with Retry-After", async () => {
    const res = await fetch(`${base}/oauth2/oauth2/token`, {
      method: "POST",
      headers: { authorization: basic("a", "b"), "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials"
    })
    assert.strictEqual(res.status, 503)
    assert.strictEqual(res.headers.get("retry-after"), "1")
    assert.strictEqual(res.headers.get("cache-control"), "no-store")
    const body = (await res.json()) as { error: string; error_description: string }
    assert.strictEqual(body.error, "temporarily_unavailable")
    assert.notInclude(body.error_description, "database is down")
  })

  it("the authorize endpoint answers a 503 page, never a redirect", async () => {
    const res = await fetch(
      `${base}/oauth2/oauth2/authorize?response_type=code&client_id=a&redirect_uri=https%3A%2F%2Fa.example%2Fcb`,
      {
        redirect: "manual"
      }
    )
    assert.strictEqual(res.status, 503)
    assert.isNull(res.headers.get("location"))
    assert.strictEqual(res.headers.get("retry-after"), "1")
    const html = await res.text()
    assert.include(html, "Temporarily unavailable")
    assert.notInclude(html, "database is down")
  })
})

describe("a body parser mounted before the router", () => {
  it("is reported, and the client gets a 500 without details", async () => {
    const res = await fetch(`${base}/parsed/oauth2/oauth2/token`, {
      method: "POST",
      headers: { authorization: basic("a", "b"), "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials"
    })
    assert.strictEqual(res.status, 500)
    assert.deepStrictEqual(await res.json(), {
      error: "server_error",
      error_description: "internal server error"
    })
    assert.match(String(errors[0]), /body parser/)
  })
})
