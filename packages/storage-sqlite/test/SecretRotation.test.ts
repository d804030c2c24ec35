/**
 * The previous App Secret in SQLite: migration 6, the application cache, and the audit
 * event written with `markPreviousSecretUsed` only when it marks.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, it } from "@effect/vitest"
import { ApplicationStore, type Audit, AuditStore } from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Fixtures } from "@latchkey/storage-testkit"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Layer, Option } from "effect"
import { afterAll } from "vitest"
import { migrations } from "../src/internal/migrations.js"

const dir = mkdtempSync(join(tmpdir(), "latchkey-rotation-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const freshFile = () => join(dir, `db-${files++}.sqlite`)
const T = Fixtures.baseTime

const find = (appKey: string) =>
  Effect.map(
    Effect.flatMap(ApplicationStore.ApplicationStore, (s) => s.find(appKey)),
    (o) => Option.getOrThrow(o)
  )

it.effect("migration 6 keeps the applications of the release before, without a previous secret", () =>
  Effect.gen(function* () {
    const filename = freshFile()
    const app = Fixtures.application()
    const db = new BetterSqlite3(filename)
    db.transaction(() => {
      db.exec(`CREATE TABLE latchkey_schema (version INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL,
        applied_at INTEGER NOT NULL)`)
      for (const m of migrations.filter((m) => m.version <= 5)) {
        db.exec(m.sql)
        db.prepare("INSERT INTO latchkey_schema VALUES (?, ?, 0)").run(m.version, m.name)
      }
      db.prepare(
        `INSERT INTO applications (app_key, name, secret_digest, redirect_uris, scopes, grant_types,
          require_pkce, access_token_ttl, refresh_token_ttl, created_at) VALUES (?, ?, ?, ?, ?, ?, 0, NULL, NULL, ?)`
      ).run(
        app.appKey,
        app.name,
        app.secretDigest,
        JSON.stringify(app.redirectUris),
        JSON.stringify(app.scopes),
        JSON.stringify(app.grantTypes),
        app.createdAt
      )
    })()
    db.close()
    assert.deepStrictEqual(yield* SqliteStorage.migrate({ filename }), {
      from: 5,
      to: SqliteStorage.schemaVersion
    })
    const context = yield* Layer.build(SqliteStorage.layer({ filename }))
    assert.deepStrictEqual(yield* Effect.provide(find(app.appKey), context), app)
    const digest = Fixtures.hash()
    yield* Effect.provide(
      Effect.flatMap(ApplicationStore.ApplicationStore, (s) => s.updateSecret(app.appKey, digest, T + 60)),
      context
    )
    assert.deepStrictEqual(yield* Effect.provide(find(app.appKey), context), {
      ...app,
      secretDigest: digest,
      previousSecretDigest: app.secretDigest,
      previousSecretExpiresAt: T + 60
    })
  }).pipe(Effect.scoped)
)

it.effect("a rotation by another connection is seen at once, past the decoded-application cache", () =>
  Effect.gen(function* () {
    const filename = freshFile()
    const context = yield* Layer.build(SqliteStorage.layer({ filename }))
    const app = Fixtures.application()
    yield* Effect.provide(
      Effect.flatMap(ApplicationStore.ApplicationStore, (s) => s.insert(app)),
      context
    )
    assert.deepStrictEqual(yield* Effect.provide(find(app.appKey), context), app)
    const other = new BetterSqlite3(filename)
    yield* Effect.addFinalizer(() => Effect.sync(() => other.close()))
    other
      .prepare(
        `UPDATE applications SET previous_secret_digest = secret_digest, secret_digest = 'next',
          previous_secret_expires_at = ? WHERE app_key = ?`
      )
      .run(T + 10, app.appKey)
    const seen = yield* Effect.provide(find(app.appKey), context)
    assert.strictEqual(seen.secretDigest, "next")
    assert.strictEqual(seen.previousSecretDigest, app.secretDigest)
    assert.strictEqual(seen.previousSecretExpiresAt, T + 10)
    other
      .prepare("UPDATE applications SET previous_secret_used_at = ? WHERE app_key = ?")
      .run(T + 3, app.appKey)
    assert.strictEqual((yield* Effect.provide(find(app.appKey), context)).previousSecretUsedAt, T + 3)
  }).pipe(Effect.scoped)
)

const used = (appKey: string): Audit.AuditEvent => ({
  at: T,
  type: "client_auth_previous_secret",
  appKey,
  userId: null,
  openId: null,
  address: null,
  requestId: null,
  detail: "previous secret works until …",
  actor: null
})

it.effect(
  "an audit event written with markPreviousSecretUsed is stored once: a refused mark writes no event",
  () =>
    Effect.gen(function* () {
      const apps = yield* ApplicationStore.ApplicationStore
      const audit = yield* AuditStore.AuditStore
      const mark = apps.markPreviousSecretUsed
      if (mark === undefined) return assert.fail("the SQLite store implements markPreviousSecretUsed")
      const app = Fixtures.application()
      yield* apps.insert(app)
      yield* apps.updateSecret(app.appKey, Fixtures.hash(), T + 3600)
      const attempts = yield* Effect.all(
        Array.from({ length: 5 }, () =>
          Effect.either(audit.appendWith([used(app.appKey)], mark(app.appKey, app.secretDigest, T)))
        ),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(attempts.filter((a) => a._tag === "Right").length, 1)
      const events = yield* audit.tail({ limit: 100, appKey: app.appKey })
      assert.deepStrictEqual(events, [used(app.appKey)])
    }).pipe(Effect.provide(SqliteStorage.layer({ filename: ":memory:" })))
)
