import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, it } from "@effect/vitest"
import { AuditStore, ConsentStore, TokenStore, UserStore } from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Fixtures } from "@latchkey/storage-testkit"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Layer, Option } from "effect"
import { afterAll } from "vitest"
import { openSync } from "../src/internal/database.js"
import { migrations } from "../src/internal/migrations.js"

const dir = mkdtempSync(join(tmpdir(), "latchkey-admin-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const freshFile = () => join(dir, `db-${files++}.sqlite`)
const T = Fixtures.baseTime

const withRaw = <A>(filename: string, f: (db: BetterSqlite3.Database) => A): A => {
  const db = new BetterSqlite3(filename)
  try {
    return f(db)
  } finally {
    db.close()
  }
}

it.effect(
  "migration 9 keeps the rows of a database from before: users read as enabled, events without an actor, still append-only",
  () =>
    Effect.gen(function* () {
      const filename = freshFile()
      const user = Fixtures.user()
      const appKey = Fixtures.id("app")
      // A database of the release before: migrations 1 to 8, with a user and an audit event.
      withRaw(filename, (db) =>
        db.transaction(() => {
          db.exec(`CREATE TABLE latchkey_schema (version INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL,
            applied_at INTEGER NOT NULL)`)
          for (const m of migrations.filter((m) => m.version <= 8)) {
            db.exec(m.sql)
            db.prepare("INSERT INTO latchkey_schema VALUES (?, ?, 0)").run(m.version, m.name)
          }
          db.prepare(
            "INSERT INTO users (user_id, username, password_hash, created_at) VALUES (?, ?, ?, ?)"
          ).run(user.userId, user.username, user.passwordHash, user.createdAt)
          db.prepare(
            "INSERT INTO audit_events (at, type, app_key, request_id) VALUES (?, 'token_issued', ?, 'before')"
          ).run(T, appKey)
        })()
      )
      assert.deepStrictEqual(yield* SqliteStorage.migrate({ filename }), {
        from: 8,
        to: SqliteStorage.schemaVersion
      })
      const context = yield* Layer.build(SqliteStorage.layer({ filename }))
      const users = yield* Effect.provide(UserStore.UserStore, context)
      const audit = yield* Effect.provide(AuditStore.AuditStore, context)
      assert.deepStrictEqual(yield* users.findById(user.userId), Option.some(user))
      assert.deepStrictEqual(yield* audit.query({ limit: 10, appKey }), [
        {
          at: T,
          type: "token_issued",
          appKey,
          userId: null,
          openId: null,
          address: null,
          requestId: "before",
          detail: null,
          actor: null
        }
      ])
      withRaw(filename, (db) => {
        assert.throws(() => db.prepare("UPDATE audit_events SET actor = 'cli'").run(), /append-only/)
      })
    }).pipe(Effect.scoped)
)

it.effect(
  "setDisabled and withdraw are one transaction each: when revoking fails, the account stays enabled and the consent stays",
  () =>
    Effect.gen(function* () {
      const filename = freshFile()
      const context = yield* Layer.build(SqliteStorage.layer({ filename }))
      const users = yield* Effect.provide(UserStore.UserStore, context)
      const consents = yield* Effect.provide(ConsentStore.ConsentStore, context)
      const tokens = yield* Effect.provide(TokenStore.TokenStore, context)
      const user = Fixtures.user()
      const appKey = Fixtures.id("app")
      yield* users.insert(user)
      yield* consents.grant(user.userId, appKey, Fixtures.scope("read"), T)
      const issued = Fixtures.pair({ appKey, userId: user.userId })
      yield* tokens.insert(issued)
      const revokedAt = Effect.forEach(issued, (t) =>
        Effect.map(tokens.find(t.kind, t.tokenHash), (o) => Option.map(o, (x) => x.revokedAt))
      )

      // Every revocation fails, whoever writes it.
      withRaw(filename, (db) =>
        db.exec(`CREATE TRIGGER tokens_refuse_revoke BEFORE UPDATE OF revoked_at ON tokens
          BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`)
      )
      const disabling = yield* Effect.flip(users.setDisabled(user.userId, true, T + 5))
      assert.strictEqual(disabling._tag, "StorageError")
      assert.deepStrictEqual(yield* users.findById(user.userId), Option.some(user))
      const withdrawing = yield* Effect.flip(consents.withdraw(user.userId, appKey, T + 5))
      assert.strictEqual(withdrawing._tag, "StorageError")
      assert.deepStrictEqual(yield* consents.find(user.userId, appKey), Option.some(Fixtures.scope("read")))
      assert.deepStrictEqual(yield* revokedAt, [Option.some(null), Option.some(null)])

      withRaw(filename, (db) => db.exec("DROP TRIGGER tokens_refuse_revoke"))
      assert.isTrue(yield* users.setDisabled(user.userId, true, T + 6))
      assert.deepStrictEqual(yield* users.findById(user.userId), Option.some({ ...user, disabledAt: T + 6 }))
      assert.deepStrictEqual(yield* revokedAt, [Option.some(T + 6), Option.some(T + 6)])
      assert.isTrue(yield* consents.withdraw(user.userId, appKey, T + 7))
      assert.isTrue(Option.isNone(yield* consents.find(user.userId, appKey)))
    }).pipe(Effect.scoped)
)

it("the audit query, revokeSubject and the consent list read in index order", () => {
  const { db } = openSync({ filename: ":memory:" })
  try {
    const plan = (sql: string) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>)
        .map((r) => r.detail)
        .join("; ")
    for (const sql of [
      "SELECT * FROM audit_events WHERE type = 'token_issued' ORDER BY at DESC, id DESC LIMIT 10",
      "SELECT * FROM audit_events WHERE type = 'token_issued' AND at >= 5 ORDER BY at DESC, id DESC LIMIT 10"
    ]) {
      assert.match(plan(sql), /INDEX audit_events_by_type/)
      assert.notMatch(plan(sql), /TEMP B-TREE/)
    }
    const newest = "SELECT * FROM audit_events ORDER BY at DESC, id DESC LIMIT 10"
    assert.match(plan(newest), /INDEX audit_events_by_at/)
    assert.notMatch(plan(newest), /TEMP B-TREE/)
    assert.match(
      plan("UPDATE tokens SET revoked_at = 1 WHERE app_key = 'a' AND open_id = 'o' AND revoked_at IS NULL"),
      /INDEX tokens_by_app_open_id \(app_key=\? AND open_id=\?\)/
    )
    // The index that replaced tokens_by_app serves the revocation of an application's tokens.
    assert.match(
      plan("UPDATE tokens SET revoked_at = 1 WHERE app_key = 'a' AND revoked_at IS NULL"),
      /INDEX tokens_by_app_open_id \(app_key=\?\)/
    )
    const consents = "SELECT app_key, scope, updated_at FROM consents WHERE user_id = 'u' ORDER BY app_key"
    assert.match(plan(consents), /PRIMARY KEY \(user_id=\?\)/)
    assert.notMatch(plan(consents), /TEMP B-TREE/)
  } finally {
    db.close()
  }
})
