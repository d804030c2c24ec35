import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, it } from "@effect/vitest"
import { CodeStore, SessionStore, Throttle, TokenStore } from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Fixtures } from "@latchkey/storage-testkit"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Exit, Layer, Option, TestClock } from "effect"
import { afterAll } from "vitest"
import { openSync } from "../src/internal/database.js"
import { migrations } from "../src/internal/migrations.js"

const dir = mkdtempSync(join(tmpdir(), "latchkey-sqlite-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const freshFile = () => join(dir, `db-${files++}.sqlite`)

const withRaw = <A>(filename: string, f: (db: BetterSqlite3.Database) => A): A => {
  const db = new BetterSqlite3(filename)
  try {
    return f(db)
  } finally {
    db.close()
  }
}

it("opens with WAL, synchronous=FULL, foreign keys and a busy timeout by default", () => {
  const { db } = openSync({ filename: freshFile() })
  try {
    assert.strictEqual(db.pragma("journal_mode", { simple: true }), "wal")
    assert.strictEqual(db.pragma("synchronous", { simple: true }), 2)
    assert.strictEqual(db.pragma("foreign_keys", { simple: true }), 1)
    assert.strictEqual(db.pragma("busy_timeout", { simple: true }), 5000)
  } finally {
    db.close()
  }
  const normal = openSync({ filename: freshFile(), synchronous: "NORMAL", busyTimeoutMs: 250 }).db
  try {
    assert.strictEqual(normal.pragma("synchronous", { simple: true }), 1)
    assert.strictEqual(normal.pragma("busy_timeout", { simple: true }), 250)
  } finally {
    normal.close()
  }
})

it.effect("rejects invalid options with StorageError", () =>
  Effect.gen(function* () {
    for (const options of [
      { filename: freshFile(), synchronous: "OFF" as "FULL" },
      { filename: freshFile(), busyTimeoutMs: -1 },
      { filename: freshFile(), busyTimeoutMs: 1.5 },
      { filename: freshFile(), sessions: { maxSessions: 0 } },
      { filename: freshFile(), sessions: { maxPending: 2.5 } },
      { filename: freshFile(), sessions: { maxPendingBytes: 0 } },
      { filename: freshFile(), sessions: { maxPendingBytes: 1.5 } },
      { filename: freshFile(), sessions: { maxPendingBytes: Number.POSITIVE_INFINITY } },
      { filename: freshFile(), auditRetentionDays: 0 },
      { filename: freshFile(), auditRetentionDays: -1 },
      { filename: freshFile(), auditRetentionDays: 1.5 },
      { filename: freshFile(), auditRetentionDays: 3651 },
      { filename: freshFile(), auditRetentionDays: Number.NaN },
      { filename: freshFile(), auditRetentionDays: Number.POSITIVE_INFINITY }
    ]) {
      const err = yield* Effect.flip(Layer.build(SqliteStorage.layer(options)).pipe(Effect.scoped))
      assert.strictEqual(err._tag, "StorageError")
    }
  })
)

it.effect("auditRetentionDays takes 1 to 3650 days (90 by default) and writes them to the database", () =>
  Effect.gen(function* () {
    const filename = freshFile()
    const stored = () =>
      withRaw(filename, (db) => db.prepare("SELECT seconds FROM audit_retention").pluck().all())
    for (const [auditRetentionDays, days] of [
      [undefined, SqliteStorage.defaultAuditRetentionDays],
      [1, 1],
      [SqliteStorage.maxAuditRetentionDays, 3650],
      [undefined, 90]
    ] as const) {
      yield* Layer.build(
        SqliteStorage.layer({ filename, ...(auditRetentionDays !== undefined ? { auditRetentionDays } : {}) })
      ).pipe(Effect.scoped)
      assert.deepStrictEqual(stored(), [days * 86_400])
    }
    // A refused option leaves the database as it was.
    yield* Effect.flip(
      Layer.build(SqliteStorage.layer({ filename, auditRetentionDays: 0 })).pipe(Effect.scoped)
    )
    assert.deepStrictEqual(stored(), [90 * 86_400])
  })
)

it.effect("migration 7 lets the audit events of a database from before go once outside the retention", () =>
  Effect.gen(function* () {
    const filename = freshFile()
    const now = Math.floor(Date.now() / 1000)
    // A database of the release before: migrations 1 to 6, with audit events old and new.
    withRaw(filename, (db) =>
      db.transaction(() => {
        db.exec(`CREATE TABLE latchkey_schema (version INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL,
          applied_at INTEGER NOT NULL)`)
        for (const m of migrations.filter((m) => m.version <= 6)) {
          db.exec(m.sql)
          db.prepare("INSERT INTO latchkey_schema VALUES (?, ?, 0)").run(m.version, m.name)
        }
        const insert = db.prepare(
          "INSERT INTO audit_events (at, type, request_id) VALUES (?, 'token_issued', ?)"
        )
        insert.run(now - 400 * 86_400, "old")
        insert.run(now - 10 * 86_400, "new")
        assert.throws(
          () => db.prepare("DELETE FROM audit_events WHERE request_id = 'old'").run(),
          /append-only/
        )
      })()
    )
    assert.deepStrictEqual(yield* SqliteStorage.migrate({ filename }), {
      from: 6,
      to: SqliteStorage.schemaVersion
    })
    withRaw(filename, (db) => {
      // The retention is 90 days until a layer opens the file with another.
      assert.strictEqual(db.prepare("SELECT seconds FROM audit_retention").pluck().get(), 90 * 86_400)
      assert.throws(() => db.prepare("UPDATE audit_events SET detail = 'x'").run(), /append-only/)
      assert.throws(
        () => db.prepare("DELETE FROM audit_events WHERE request_id = 'new'").run(),
        /append-only/
      )
      assert.strictEqual(db.prepare("DELETE FROM audit_events WHERE request_id = 'old'").run().changes, 1)
      assert.deepStrictEqual(db.prepare("SELECT request_id FROM audit_events").pluck().all(), ["new"])
    })
  })
)

it.effect("migrations run once, forward only, and survive reopening", () =>
  Effect.gen(function* () {
    const filename = join(dir, "deep", "er", "migrations.sqlite")
    assert.deepStrictEqual(yield* SqliteStorage.migrate({ filename }), {
      from: 0,
      to: SqliteStorage.schemaVersion
    })
    assert.deepStrictEqual(yield* SqliteStorage.migrate({ filename }), {
      from: SqliteStorage.schemaVersion,
      to: SqliteStorage.schemaVersion
    })
    const token = Fixtures.token()
    yield* Effect.provide(
      Effect.flatMap(TokenStore.TokenStore, (s) => s.insert([token])),
      SqliteStorage.layer({ filename })
    )
    const found = yield* Effect.provide(
      Effect.flatMap(TokenStore.TokenStore, (s) => s.find("access", token.tokenHash)),
      SqliteStorage.layer({ filename })
    )
    assert.deepStrictEqual(found, Option.some(token))
    const versions = withRaw(filename, (db) =>
      db.prepare("SELECT version FROM latchkey_schema").pluck().all()
    )
    assert.deepStrictEqual(
      versions,
      Array.from({ length: SqliteStorage.schemaVersion }, (_, i) => i + 1)
    )
  })
)

it.effect("a database written by a newer version is refused with a clear StorageError", () =>
  Effect.gen(function* () {
    const filename = freshFile()
    yield* SqliteStorage.migrate({ filename })
    withRaw(filename, (db) =>
      db.prepare("INSERT INTO latchkey_schema (version, name, applied_at) VALUES (999, 'future', 0)").run()
    )
    const err = yield* Effect.flip(Layer.build(SqliteStorage.layer({ filename })).pipe(Effect.scoped))
    assert.strictEqual(err._tag, "StorageError")
    assert.match(err.message, /schema version 999, newer than/)
  })
)

it.effect("ping succeeds on an open database", () =>
  Effect.provide(SqliteStorage.ping, SqliteStorage.layer({ filename: ":memory:" }))
)

it.effect("SQLITE_BUSY past the timeout is a StorageError, never a silent success, and changes nothing", () =>
  Effect.gen(function* () {
    const filename = freshFile()
    const context = yield* Layer.build(SqliteStorage.layer({ filename, busyTimeoutMs: 50 }))
    const codes = yield* Effect.provide(CodeStore.CodeStore, context)
    const tokens = yield* Effect.provide(TokenStore.TokenStore, context)
    const code = Fixtures.code()
    yield* Effect.provide(Fixtures.insertCode(code), context)
    const [access, refresh] = Fixtures.pair()
    yield* tokens.insert([refresh])

    const other = new BetterSqlite3(filename)
    yield* Effect.addFinalizer(() => Effect.sync(() => other.close()))
    other.exec("BEGIN IMMEDIATE")
    const attempts: ReadonlyArray<Effect.Effect<void, { readonly _tag: string; readonly message: string }>> =
      [
        codes.redeem(code.codeHash, Fixtures.baseTime, [access]),
        tokens.rotate(refresh.tokenHash, Fixtures.baseTime, 0, [access]),
        tokens.insert([access]),
        tokens.insert([access, Fixtures.token()]),
        Effect.asVoid(tokens.revokeFamily(refresh.familyId, Fixtures.baseTime))
      ]
    for (const attempt of attempts) {
      const exit = yield* Effect.exit(attempt)
      assert.isTrue(Exit.isFailure(exit))
      const err = yield* Effect.flip(exit)
      assert.strictEqual(err._tag, "StorageError")
      assert.match(err.message, /busy/)
    }
    other.exec("ROLLBACK")

    assert.deepStrictEqual(yield* codes.find(code.codeHash), Option.some(code))
    assert.deepStrictEqual(yield* tokens.find("refresh", refresh.tokenHash), Option.some(refresh))
    assert.isTrue(Option.isNone(yield* tokens.find("access", access.tokenHash)))
    yield* codes.redeem(code.codeHash, Fixtures.baseTime, [access])
  }).pipe(Effect.scoped)
)

it.effect("a failing insert inside redeem rolls the whole redemption back", () =>
  Effect.gen(function* () {
    const codes = yield* CodeStore.CodeStore
    const tokens = yield* TokenStore.TokenStore
    const existing = Fixtures.token()
    yield* tokens.insert([existing])
    const code = Fixtures.code()
    yield* Fixtures.insertCode(code)
    const fresh = Fixtures.token({ familyId: code.familyId })
    const err = yield* Effect.flip(codes.redeem(code.codeHash, Fixtures.baseTime, [fresh, existing]))
    assert.strictEqual(err._tag, "StorageError")
    assert.deepStrictEqual(yield* codes.find(code.codeHash), Option.some(code))
    assert.isTrue(Option.isNone(yield* tokens.find("access", fresh.tokenHash)))
    yield* codes.redeem(code.codeHash, Fixtures.baseTime, [fresh])
  }).pipe(Effect.provide(SqliteStorage.layer({ filename: ":memory:" })))
)

it.effect(
  "sweep purges what expired by the clock, bounded per run, and keeps live tombstones and counters",
  () =>
    Effect.gen(function* () {
      const codes = yield* CodeStore.CodeStore
      const tokens = yield* TokenStore.TokenStore
      const sessions = yield* SessionStore.SessionStore
      const now = Fixtures.baseTime + 10_000
      yield* TestClock.setTime(now * 1000)
      const expired = Array.from({ length: 5 }, () => Fixtures.token({ expiresAt: now - 1 }))
      const tombstone = Fixtures.token({ kind: "refresh", expiresAt: now + 1 })
      yield* tokens.insert([...expired, tombstone])
      yield* tokens.rotate(tombstone.tokenHash, now - 5, 0, [])
      const oldCode = Fixtures.code({ expiresAt: now })
      yield* codes.insert(oldCode)
      const oldSession = Fixtures.session({ expiresAt: now })
      const liveSession = Fixtures.signedInSession({ expiresAt: now + 1 })
      yield* sessions.save(oldSession)
      yield* sessions.save(liveSession)
      yield* sessions.addPending(Fixtures.pending({ sessionHash: oldSession.idHash, expiresAt: now + 1 }))
      const oldPending = Fixtures.pending({ sessionHash: liveSession.idHash, expiresAt: now - 1 })
      const livePending = Fixtures.pending({ sessionHash: liveSession.idHash, expiresAt: now + 1 })
      yield* sessions.addPending(oldPending)
      yield* sessions.addPending(livePending)
      const throttle = yield* Throttle.ThrottleStore
      const policy = Throttle.defaultPolicy
      const counter = (key: string) => ({ key, kind: "identifier" }) as const
      yield* throttle.fail(
        [counter("old-1"), counter("old-2"), counter("old-3")],
        now - policy.window,
        policy
      )
      yield* throttle.fail([counter("live")], now - policy.window + 1, policy)
      assert.deepStrictEqual(yield* SqliteStorage.sweep({ limit: 3 }), {
        codes: 1,
        tokens: 3,
        sessions: 2,
        throttle: 3,
        keys: 0,
        devices: 0,
        registrationTokens: 0
      })
      assert.deepStrictEqual(yield* SqliteStorage.sweep({ limit: 3 }), {
        codes: 0,
        tokens: 2,
        sessions: 0,
        throttle: 0,
        keys: 0,
        devices: 0,
        registrationTokens: 0
      })
      assert.deepStrictEqual(yield* SqliteStorage.sweep(), {
        codes: 0,
        tokens: 0,
        sessions: 0,
        throttle: 0,
        keys: 0,
        devices: 0,
        registrationTokens: 0
      })
      assert.isTrue(Option.isSome(yield* tokens.find("refresh", tombstone.tokenHash)))
      assert.isTrue(Option.isSome(yield* sessions.findPending(liveSession.idHash, livePending.txn, now)))
      yield* TestClock.setTime((now + 1) * 1000)
      // The live session and its request expire now: the request goes with its session.
      assert.deepStrictEqual(yield* SqliteStorage.sweep(), {
        codes: 0,
        tokens: 1,
        sessions: 1,
        throttle: 1,
        keys: 0,
        devices: 0,
        registrationTokens: 0
      })
      assert.isTrue(Option.isNone(yield* sessions.find(liveSession.idHash, now)))
      assert.isTrue(Option.isNone(yield* sessions.findPending(liveSession.idHash, livePending.txn, now)))
    }).pipe(Effect.provide(SqliteStorage.layer({ filename: ":memory:" })))
)

it("the session queries of the hot path, eviction and the sweep use the indexes", () => {
  const { db } = openSync({ filename: ":memory:" })
  try {
    const plan = (sql: string) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>)
        .map((r) => r.detail)
        .join("; ")
    assert.match(
      plan("SELECT * FROM sessions WHERE id_hash = 'x' AND expires_at > 1"),
      /USING INDEX sqlite_autoindex_sessions_1/
    )
    assert.match(
      plan(
        "SELECT rowid FROM sessions WHERE user_id IS NULL AND id_hash <> 'x' ORDER BY expires_at, rowid LIMIT 1"
      ),
      /USING INDEX sessions_anonymous_by_expires_at/
    )
    assert.notMatch(
      plan(
        "SELECT rowid FROM sessions WHERE user_id IS NULL AND id_hash <> 'x' ORDER BY expires_at, rowid LIMIT 1"
      ),
      /TEMP B-TREE/
    )
    assert.match(plan("SELECT rowid FROM sessions WHERE expires_at <= 1 LIMIT 1"), /sessions_by_expires_at/)
    assert.match(
      plan("SELECT session_hash, txn FROM pending_authorizations WHERE expires_at <= 1 LIMIT 1"),
      /pending_authorizations_by_expires_at/
    )
    assert.match(
      plan("SELECT * FROM pending_authorizations WHERE session_hash = 'x' AND txn = 'y'"),
      /USING PRIMARY KEY \(session_hash=\? AND txn=\?\)/
    )
    // Eviction past maxPendingBytes reads the oldest requests in index order, never sorting the table.
    const oldestAnonymous = `SELECT session_hash, txn FROM pending_authorizations AS p
      WHERE NOT EXISTS (SELECT 1 FROM sessions WHERE id_hash = p.session_hash AND user_id IS NOT NULL)
      ORDER BY created_at, seq, session_hash, txn LIMIT 16`
    assert.match(plan(oldestAnonymous), /pending_authorizations_by_created_at/)
    assert.notMatch(plan(oldestAnonymous), /TEMP B-TREE/)
    assert.match(plan("SELECT chars FROM pending_totals WHERE id = 1"), /INTEGER PRIMARY KEY/)
  } finally {
    db.close()
  }
})

it.live("50 writes queued in one turn share one commit, and each caller resumes only after that commit", () =>
  Effect.gen(function* () {
    const filename = join(dir, "grouped.sqlite")
    const tokens = yield* TokenStore.TokenStore
    const other = new BetterSqlite3(filename, { readonly: true })
    yield* Effect.addFinalizer(() => Effect.sync(() => other.close()))
    const visible = other.prepare("SELECT count(*) FROM tokens WHERE token_hash = ?").pluck()
    const version = () => other.pragma("data_version", { simple: true }) as number
    const before = version()
    const issued = Array.from({ length: 50 }, () => Fixtures.token())
    const seen = yield* Effect.all(
      issued.map((t) =>
        Effect.zipRight(
          tokens.insert([t]),
          Effect.sync(() => ({ rows: visible.get(t.tokenHash), version: version() }))
        )
      ),
      { concurrency: "unbounded" }
    )
    // Another connection sees each row as soon as its caller resumes: it was committed.
    assert.deepStrictEqual(
      seen.map((s) => s.rows),
      issued.map(() => 1)
    )
    // Every caller saw the same new data version: one commit for all 50.
    assert.strictEqual(new Set(seen.map((s) => s.version)).size, 1)
    assert.notStrictEqual(seen[0]?.version, before)
  }).pipe(Effect.scoped, Effect.provide(SqliteStorage.layer({ filename: join(dir, "grouped.sqlite") })))
)

const pendingRow = (sessionHash: string, rawQuery: string, seq: number) => ({
  sessionHash,
  txn: Fixtures.id("txn"),
  seq,
  rawQuery,
  createdAt: Fixtures.baseTime + seq,
  expiresAt: Fixtures.baseTime + 3600
})
const insertPendingRow = `INSERT INTO pending_authorizations (session_hash, txn, seq, raw_query, csrf_hash, step,
  created_at, expires_at) VALUES (@sessionHash, @txn, @seq, @rawQuery, 'csrf', 'login', @createdAt, @expiresAt)`
const stats = Effect.flatMap(SessionStore.SessionStore, (s) => s.stats())

it.effect(
  "migration 4 counts the queries already pending, and its triggers keep the count exact for every writer",
  () =>
    Effect.gen(function* () {
      const filename = freshFile()
      // A database of the release before: migrations 1 to 3, with requests pending.
      const session = Fixtures.hash()
      const before = ["a".repeat(120), "b".repeat(7), "é".repeat(10)]
      withRaw(filename, (db) =>
        db.transaction(() => {
          db.exec(`CREATE TABLE latchkey_schema (version INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL,
            applied_at INTEGER NOT NULL)`)
          for (const m of migrations.filter((m) => m.version <= 3)) {
            db.exec(m.sql)
            db.prepare("INSERT INTO latchkey_schema VALUES (?, ?, 0)").run(m.version, m.name)
          }
          db.prepare("INSERT INTO sessions VALUES (?, NULL, NULL, ?)").run(session, Fixtures.baseTime + 3600)
          const insert = db.prepare(insertPendingRow)
          for (const [i, q] of before.entries()) insert.run(pendingRow(session, q, i + 1))
        })()
      )
      assert.deepStrictEqual(yield* SqliteStorage.migrate({ filename }), {
        from: 3,
        to: SqliteStorage.schemaVersion
      })
      const context = yield* Layer.build(SqliteStorage.layer({ filename }))
      const read = () => Effect.provide(stats, context)
      // Characters as SQLite's length() counts them: "é" is one.
      assert.deepStrictEqual(yield* read(), { sessions: 1, pendingBytes: 137 })
      // Another connection's plain SQL: insert, replace a query, delete.
      const other = new BetterSqlite3(filename)
      yield* Effect.addFinalizer(() => Effect.sync(() => other.close()))
      const extra = pendingRow(Fixtures.hash(), "c".repeat(50), 9)
      other.prepare(insertPendingRow).run(extra)
      assert.strictEqual((yield* read()).pendingBytes, 187)
      other
        .prepare("UPDATE pending_authorizations SET raw_query = ? WHERE txn = ?")
        .run("d".repeat(5), extra.txn)
      assert.strictEqual((yield* read()).pendingBytes, 142)
      other.prepare("DELETE FROM pending_authorizations WHERE session_hash = ?").run(session)
      assert.deepStrictEqual(yield* read(), { sessions: 1, pendingBytes: 5 })
      const sum = other
        .prepare("SELECT coalesce(sum(length(raw_query)), 0) FROM pending_authorizations")
        .pluck()
      assert.strictEqual(sum.get(), 5)
      // A rolled-back change leaves the count as it was.
      other.exec("BEGIN")
      other.prepare(insertPendingRow).run(pendingRow(Fixtures.hash(), "e".repeat(500), 10))
      other.exec("ROLLBACK")
      assert.strictEqual((yield* read()).pendingBytes, 5)
    }).pipe(Effect.scoped)
)

it.live("two connections on one file adding at once: the count is exact and within maxPendingBytes", () =>
  Effect.gen(function* () {
    const filename = freshFile()
    const limit = 5000
    const open = () => Layer.build(SqliteStorage.layer({ filename, sessions: { maxPendingBytes: limit } }))
    const contexts = [yield* open(), yield* open()]
    const signedIn = Fixtures.signedInSession()
    const mine = Fixtures.pending({ sessionHash: signedIn.idHash, rawQuery: "s".repeat(1000) })
    yield* Effect.provide(
      Effect.flatMap(SessionStore.SessionStore, (s) => Effect.zipRight(s.save(signedIn), s.addPending(mine))),
      contexts[0]!
    )
    yield* Effect.all(
      Array.from({ length: 200 }, (_, i) =>
        Effect.provide(
          Effect.flatMap(SessionStore.SessionStore, (s) =>
            s.addPending(
              Fixtures.pending({
                rawQuery: "q".repeat(50 + (i % 7) * 10),
                createdAt: Fixtures.baseTime + 1 + i
              })
            )
          ),
          contexts[i % 2]!
        )
      ),
      { concurrency: "unbounded" }
    )
    const exact = withRaw(filename, (db) =>
      db.prepare("SELECT coalesce(sum(length(raw_query)), 0) FROM pending_authorizations").pluck().get()
    ) as number
    assert.isAtMost(exact, limit)
    assert.isAbove(exact, limit - 200)
    for (const context of contexts)
      assert.strictEqual((yield* Effect.provide(stats, context)).pendingBytes, exact)
    const kept = yield* Effect.provide(
      Effect.flatMap(SessionStore.SessionStore, (s) =>
        s.findPending(mine.sessionHash, mine.txn, Fixtures.baseTime)
      ),
      contexts[1]!
    )
    assert.isTrue(
      Option.isSome(kept),
      "the signed-in session's request survives the other connection's flood"
    )
  }).pipe(Effect.scoped)
)
