import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import {
  Audit,
  Config,
  Entropy,
  Memory,
  SessionStore,
  StorageError,
  Throttle,
  TokenStore
} from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as App from "../src/App.js"
import * as Log from "../src/Log.js"
import * as ScryptHasher from "../src/ScryptHasher.js"
import { sweepOnce, sweepSessions } from "../src/Server.js"

const runtimeWith = (healthy: boolean) =>
  ManagedRuntime.make(
    Layer.mergeAll(
      Memory.layer,
      Config.layer({ issuer: "http://127.0.0.1", serverKey: "k".repeat(32) }),
      Entropy.layer,
      ScryptHasher.layer({ N: 1024, r: 8, p: 1 }),
      Throttle.layer(),
      Layer.succeed(Audit.AuditLog, { record: () => Effect.void, recordWith: (_events, write) => write }),
      Memory.auditLayer,
      Layer.succeed(SqliteStorage.Health, {
        ping: healthy ? Effect.void : Effect.fail(new StorageError.StorageError({ message: "disk gone" }))
      })
    )
  )

const serve = async (healthy: boolean) => {
  const runtime = runtimeWith(healthy)
  const app = App.make({
    runtime,
    issuer: "http://127.0.0.1",
    log: Log.make("silent"),
    scopeDescriptions: {},
    trustProxy: false
  })
  const server = createServer(app)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    base,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await runtime.dispose()
    }
  }
}

describe("App", () => {
  it("answers /readyz 503 when the storage ping fails, while /healthz stays 200", async () => {
    const s = await serve(false)
    try {
      const ready = await fetch(`${s.base}/readyz`)
      assert.strictEqual(ready.status, 503)
      assert.deepStrictEqual(await ready.json(), { status: "unavailable" })
      assert.strictEqual((await fetch(`${s.base}/healthz`)).status, 200)
    } finally {
      await s.close()
    }
  })

  it("answers malformed paths with a 4xx JSON error, never a stack trace", async () => {
    const s = await serve(true)
    try {
      const res = await fetch(`${s.base}/%E0%A4%A`)
      assert.isTrue(res.status >= 400 && res.status < 500)
      assert.notInclude(await res.text(), "at ")
      assert.isNotNull(res.headers.get("x-request-id"))
    } finally {
      await s.close()
    }
  })
})

describe("sweepOnce", () => {
  it("deletes expired codes and tokens only", async () => {
    const runtime = runtimeWith(true)
    try {
      const now = Math.floor(Date.now() / 1000)
      const token = (hash: string, expiresAt: number) => ({
        tokenHash: hash,
        kind: "access" as const,
        appKey: "a",
        userId: null,
        openId: null,
        scope: [] as never,
        familyId: "f",
        parentHash: null,
        issuedAt: now - 10,
        expiresAt,
        revokedAt: null,
        rotatedAt: null
      })
      await runtime.runPromise(
        Effect.flatMap(TokenStore.TokenStore, (s) =>
          s.insert([token("old", now - 1), token("new", now + 3600)])
        )
      )
      assert.deepStrictEqual(await runtime.runPromise(sweepOnce), { codes: 0, tokens: 1 })
      assert.deepStrictEqual(await runtime.runPromise(sweepOnce), { codes: 0, tokens: 0 })
    } finally {
      await runtime.dispose()
    }
  })
})

describe("sweepSessions", () => {
  it("deletes expired sign-in sessions only", async () => {
    const runtime = runtimeWith(true)
    try {
      const now = Math.floor(Date.now() / 1000)
      const session = (idHash: string, expiresAt: number) => ({
        idHash,
        userId: null,
        username: null,
        expiresAt
      })
      await runtime.runPromise(
        Effect.flatMap(SessionStore.SessionStore, (s) =>
          Effect.zipRight(s.save(session("old", now - 1)), s.save(session("new", now + 3600)))
        )
      )
      assert.strictEqual(await runtime.runPromise(sweepSessions), 1)
      assert.strictEqual(await runtime.runPromise(sweepSessions), 0)
      const left = await runtime.runPromise(
        Effect.flatMap(SessionStore.SessionStore, (s) => s.find("new", now))
      )
      assert.isTrue(left._tag === "Some")
    } finally {
      await runtime.dispose()
    }
  })
})
