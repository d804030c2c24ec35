import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import {
  Audit,
  AuditStore,
  Config,
  Entropy,
  Memory,
  SessionStore,
  StorageError,
  StorageHealth,
  Throttle,
  TokenStore
} from "@latchkey/core"
import { ScryptHasher } from "@latchkey/node"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Layer, ManagedRuntime, TestClock } from "effect"
import * as App from "../src/App.js"
import * as Env from "../src/Env.js"
import * as Log from "../src/Log.js"
import { sweepAudit, sweepExpired, sweepLimit } from "../src/Server.js"
import * as Services from "../src/Services.js"

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
      Layer.succeed(StorageHealth.StorageHealth, {
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

describe("sweepExpired", () => {
  it("deletes expired tokens only", async () => {
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
      const swept = {
        codes: 0,
        tokens: 1,
        sessions: 0,
        throttle: 0,
        keys: 0,
        devices: 0,
        registrationTokens: 0
      }
      assert.deepStrictEqual(await runtime.runPromise(sweepExpired), swept)
      assert.deepStrictEqual(await runtime.runPromise(sweepExpired), { ...swept, tokens: 0 })
    } finally {
      await runtime.dispose()
    }
  })

  it("deletes expired sign-in sessions only", async () => {
    const runtime = runtimeWith(true)
    try {
      const now = Math.floor(Date.now() / 1000)
      const session = (idHash: string, expiresAt: number) => ({
        idHash,
        userId: null,
        username: null,
        authenticatedAt: null,
        expiresAt
      })
      await runtime.runPromise(
        Effect.flatMap(SessionStore.SessionStore, (s) =>
          Effect.zipRight(s.save(session("old", now - 1)), s.save(session("new", now + 3600)))
        )
      )
      assert.strictEqual((await runtime.runPromise(sweepExpired)).sessions, 1)
      assert.strictEqual((await runtime.runPromise(sweepExpired)).sessions, 0)
      const left = await runtime.runPromise(
        Effect.flatMap(SessionStore.SessionStore, (s) => s.find("new", now))
      )
      assert.isTrue(left._tag === "Some")
    } finally {
      await runtime.dispose()
    }
  })
})

describe("sweepAudit", () => {
  const day = 86_400
  const event = (at: number, requestId: string): Audit.AuditEvent => ({
    at,
    type: "token_issued",
    appKey: "a",
    userId: null,
    openId: null,
    address: "127.0.0.1",
    requestId,
    detail: null
  })
  const appendAll = (events: ReadonlyArray<Audit.AuditEvent>) =>
    Effect.flatMap(AuditStore.AuditStore, (a) =>
      Effect.forEach(events, (e) => a.append(e), { discard: true })
    )
  const left = Effect.flatMap(AuditStore.AuditStore, (a) =>
    Effect.map(a.tail({ limit: 10_000 }), (events) => events.map((e) => e.requestId))
  )

  it.effect("deletes the events older than the retention by the clock, at most sweepLimit per run", () =>
    Effect.gen(function* () {
      const now = 200 * day
      yield* TestClock.setTime(now * 1000)
      const old = Array.from({ length: sweepLimit + 1 }, (_, i) => event(now - 100 * day + i, `old-${i}`))
      yield* appendAll([
        ...old,
        event(now - 90 * day, "at-the-bound"),
        event(now - 90 * day + 1, "inside"),
        event(now - day, "recent")
      ])
      assert.strictEqual(yield* sweepAudit(90), sweepLimit)
      assert.strictEqual(yield* sweepAudit(90), 1)
      assert.strictEqual(yield* sweepAudit(90), 0)
      assert.deepStrictEqual(yield* left, ["at-the-bound", "inside", "recent"])
      // Exactly 90 days old a second later: it goes; the next one a second after that.
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* sweepAudit(90), 1)
      assert.deepStrictEqual(yield* left, ["inside", "recent"])
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* sweepAudit(90), 1)
      // A shorter retention reaches further.
      assert.strictEqual(yield* sweepAudit(2), 0)
      assert.strictEqual(yield* sweepAudit(1), 1)
      assert.deepStrictEqual(yield* left, [])
    }).pipe(Effect.provide(Memory.auditLayer))
  )

  it.live("over SQLite: purges what is past the database's retention, which refuses a shorter one", () =>
    Effect.gen(function* () {
      // The database counts its retention by the wall clock: the events lie days from its bounds.
      const now = Math.floor(Date.now() / 1000)
      yield* appendAll([event(now - 31 * day, "31d"), event(now - 29 * day, "29d"), event(now - day, "1d")])
      assert.strictEqual(yield* sweepAudit(30), 1)
      assert.deepStrictEqual(yield* left, ["29d", "1d"])
      // Asked for less than the database was opened with (30 days): refused, nothing deleted.
      const refused = yield* Effect.flip(sweepAudit(20))
      assert.strictEqual(refused._tag, "StorageError")
      assert.deepStrictEqual(yield* left, ["29d", "1d"])
    }).pipe(Effect.provide(SqliteStorage.layer({ filename: ":memory:", auditRetentionDays: 30 })))
  )

  it("the server's database is opened with LATCHKEY_AUDIT_RETENTION_DAYS", async () => {
    const dir = mkdtempSync(join(tmpdir(), "latchkey-retention-"))
    try {
      for (const [raw, days] of [
        ["30", 30],
        [undefined, 90]
      ] as const) {
        const env = Env.read({
          LATCHKEY_DB: join(dir, "latchkey.sqlite"),
          ...(raw !== undefined ? { LATCHKEY_AUDIT_RETENTION_DAYS: raw } : {})
        })
        const runtime = ManagedRuntime.make(
          Services.layer(env, "http://127.0.0.1", Log.make("silent"), {
            hasher: ScryptHasher.layer({ N: 1024, r: 8, p: 1 })
          })
        )
        try {
          await runtime.runtime()
          const db = new BetterSqlite3(env.dbPath, { readonly: true })
          try {
            assert.strictEqual(db.prepare("SELECT seconds FROM audit_retention").pluck().get(), days * 86_400)
          } finally {
            db.close()
          }
        } finally {
          await runtime.dispose()
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
