import { assert, it } from "@effect/vitest"
import {
  ApplicationStore,
  type Audit,
  AuditStore,
  CodeStore,
  SessionStore,
  StorageError,
  Throttle,
  TokenStore,
  UserStore
} from "@latchkey/core"
import { PgliteClient, PostgresStorage } from "@latchkey/storage-postgres"
import { Fixtures } from "@latchkey/storage-testkit"
import { Cause, Effect, Exit, Fiber, Layer, Option, TestClock } from "effect"
import type pg from "pg"
import { afterAll } from "vitest"
import { retryConflicts } from "../src/internal/database.js"
import { isConflict, toStorageError } from "../src/internal/errors.js"
import { createSchemaTable, migrations } from "../src/internal/migrations.js"
import { freshSchema, pglite, pgliteLayer, pglitePool } from "./support/pglite.js"

afterAll(async () => (await pglite()).close())

// node-postgres' pool is what the layer's `pool` option takes (checked by the compiler).
const takesPgPool: pg.Pool extends PostgresStorage.Pool ? true : false = true
assert.isTrue(takesPgPool)

/** Build `layer` and close it again; the StorageError it failed with, if any. */
const buildError = <A>(layer: Layer.Layer<A, StorageError.StorageError>) =>
  Effect.flip(Effect.scoped(Layer.build(layer)))

/** Raw SQL in `schema` of this file's PGlite. */
const sql = (schema: string, text: string, values?: Array<unknown>) =>
  Effect.flatMap(pglitePool(schema), (pool) => Effect.promise(() => pool.query(text, values)))

const sqlFails = (schema: string, text: string) =>
  Effect.flatMap(pglitePool(schema), (pool) =>
    Effect.promise(() =>
      pool.query(text).then(
        () => "succeeded",
        (e: unknown) => (e instanceof Error ? e.message : String(e))
      )
    )
  )

it.effect("rejects invalid options with StorageError, before touching the database", () =>
  Effect.gen(function* () {
    const pool = yield* pglitePool()
    for (const options of [
      { sessions: { maxSessions: 0 } },
      { sessions: { maxPending: 2.5 } },
      { sessions: { maxPendingBytes: 0 } },
      { sessions: { maxPendingBytes: Number.POSITIVE_INFINITY } },
      { auditRetentionDays: 0 },
      { auditRetentionDays: 1.5 },
      { auditRetentionDays: 3651 },
      { auditRetentionDays: Number.NaN }
    ]) {
      const err = yield* buildError(PostgresStorage.layer({ ...options, pool }))
      assert.strictEqual(err._tag, "StorageError")
    }
    for (const options of [
      { connectionString: "postgres://127.0.0.1:1/none", pool },
      { schema: "other", pool },
      { poolMax: 3, pool },
      { schema: "Not-A-Name" },
      { schema: "x; DROP TABLE users" },
      { poolMax: 0 },
      { poolMax: 1.5 },
      { connectionTimeoutMs: -1 },
      { statementTimeoutMs: Number.NaN },
      { idleTimeoutMs: 2 ** 31 }
    ] satisfies ReadonlyArray<PostgresStorage.Options>) {
      const err = yield* buildError(PostgresStorage.layer(options))
      assert.strictEqual(err._tag, "StorageError")
      assert.notMatch(err.message, /postgres storage failed/)
    }
  })
)

it.effect("migrations run once, forward only, and a second run changes nothing", () =>
  Effect.gen(function* () {
    const schema = freshSchema()
    const pool = yield* pglitePool(schema)
    assert.deepStrictEqual(yield* PostgresStorage.migrate({ pool }), {
      from: 0,
      to: PostgresStorage.schemaVersion
    })
    assert.deepStrictEqual(yield* PostgresStorage.migrate({ pool }), {
      from: PostgresStorage.schemaVersion,
      to: PostgresStorage.schemaVersion
    })
    const versions = yield* sql(schema, "SELECT version FROM latchkey_schema ORDER BY version")
    assert.deepStrictEqual(
      versions.rows.map((r) => r.version),
      Array.from({ length: PostgresStorage.schemaVersion }, (_, i) => i + 1)
    )
    // A layer over the migrated schema keeps what an earlier one wrote.
    const token = Fixtures.token()
    yield* Effect.provide(
      Effect.flatMap(TokenStore.TokenStore, (s) => s.insert([token])),
      PostgresStorage.layer({ pool })
    )
    const found = yield* Effect.provide(
      Effect.flatMap(TokenStore.TokenStore, (s) => s.find("access", token.tokenHash)),
      PostgresStorage.layer({ pool })
    )
    assert.deepStrictEqual(found, Option.some(token))
  })
)

it.effect("a database written by a newer version is refused with a clear StorageError", () =>
  Effect.gen(function* () {
    const schema = freshSchema()
    const pool = yield* pglitePool(schema)
    yield* PostgresStorage.migrate({ pool })
    yield* sql(schema, "INSERT INTO latchkey_schema (version, name, applied_at) VALUES (999, 'future', 0)")
    const err = yield* buildError(PostgresStorage.layer({ pool }))
    assert.strictEqual(err._tag, "StorageError")
    assert.strictEqual(
      err.message,
      `database schema version 999 is newer than this build supports (${PostgresStorage.schemaVersion}); ` +
        "upgrade Latchkey, or restore a backup taken before the upgrade"
    )
    assert.strictEqual((yield* Effect.flip(PostgresStorage.migrate({ pool }))).message, err.message)
  })
)

it.effect("auditRetentionDays takes 1 to 3650 days (90 by default) and every layer writes them", () =>
  Effect.gen(function* () {
    const schema = freshSchema()
    const pool = yield* pglitePool(schema)
    const stored = Effect.map(sql(schema, "SELECT seconds FROM audit_retention"), (r) =>
      r.rows.map((row) => Number(row.seconds))
    )
    for (const [auditRetentionDays, days] of [
      [undefined, PostgresStorage.defaultAuditRetentionDays],
      [1, 1],
      [PostgresStorage.maxAuditRetentionDays, 3650],
      [undefined, 90]
    ] as const) {
      yield* Effect.scoped(
        Layer.build(
          PostgresStorage.layer({ pool, ...(auditRetentionDays !== undefined ? { auditRetentionDays } : {}) })
        )
      )
      assert.deepStrictEqual(yield* stored, [days * 86_400])
    }
    // A refused option leaves the database as it was.
    yield* buildError(PostgresStorage.layer({ pool, auditRetentionDays: 0 }))
    assert.deepStrictEqual(yield* stored, [90 * 86_400])
  })
)

const day = 86_400
const nowSeconds = () => Math.floor(Date.now() / 1000)
const eventAt = (at: number, requestId: string): Audit.AuditEvent => ({
  at,
  type: "token_issued",
  appKey: "app-a",
  userId: null,
  openId: null,
  address: "127.0.0.1",
  requestId,
  detail: null
})

it.effect(
  "the audit table refuses updates, truncation, and deletes of events inside the retention, to any connection",
  () =>
    Effect.gen(function* () {
      const schema = freshSchema()
      const pool = yield* pglitePool(schema)
      // The database counts the retention on its own clock: events are placed days from its bounds.
      const now = nowSeconds()
      yield* Effect.provide(
        Effect.flatMap(AuditStore.AuditStore, (a) =>
          Effect.forEach([eventAt(now - 89 * day, "inside"), eventAt(now - 91 * day, "outside")], (e) =>
            a.append(e)
          )
        ),
        PostgresStorage.layer({ pool })
      )
      assert.match(yield* sqlFails(schema, "UPDATE audit_events SET detail = 'x'"), /append-only/)
      assert.match(
        yield* sqlFails(schema, "UPDATE audit_events SET detail = 'x' WHERE request_id = 'outside'"),
        /append-only/
      )
      assert.match(
        yield* sqlFails(schema, "DELETE FROM audit_events WHERE request_id = 'inside'"),
        /append-only/
      )
      assert.match(yield* sqlFails(schema, "DELETE FROM audit_events"), /append-only/)
      assert.match(yield* sqlFails(schema, "TRUNCATE audit_events"), /cannot be truncated/)
      assert.strictEqual(
        yield* sqlFails(schema, "DELETE FROM audit_events WHERE request_id = 'outside'"),
        "succeeded"
      )
      const left = yield* sql(schema, "SELECT request_id FROM audit_events ORDER BY id")
      assert.deepStrictEqual(
        left.rows.map((r) => r.request_id),
        ["inside"]
      )
      // Without the retention row nothing may be deleted.
      yield* sql(schema, "DELETE FROM audit_retention")
      yield* sql(schema, "INSERT INTO audit_events (at, type) VALUES (1000, 'token_issued')")
      assert.match(yield* sqlFails(schema, "DELETE FROM audit_events WHERE at = 1000"), /append-only/)
    })
)

it.effect("purgeBefore refuses a cutoff inside the retention as a whole, and deletes nothing", () =>
  Effect.gen(function* () {
    const audit = yield* AuditStore.AuditStore
    const now = nowSeconds()
    const old = [eventAt(now - 200 * day, "old-1"), eventAt(now - 100 * day, "old-2")]
    yield* Effect.forEach([...old, eventAt(now - 10 * day, "recent")], (e) => audit.append(e))
    const err = yield* Effect.flip(audit.purgeBefore(now - 5 * day, 1000))
    assert.strictEqual(err._tag, "StorageError")
    assert.match(err.message, /inside the retention \(90 days\)/)
    assert.strictEqual((yield* audit.tail({ limit: 10 })).length, 3)
    assert.strictEqual(yield* audit.purgeBefore(now - 91 * day, 1000), 2)
    assert.deepStrictEqual(
      (yield* audit.tail({ limit: 10 })).map((e) => e.requestId),
      ["recent"]
    )
  }).pipe(Effect.provide(pgliteLayer()))
)

it.effect(
  "appendWith: a refused markPreviousSecretUsed stores no event; an accepted one stores it once",
  () =>
    Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const apps = yield* ApplicationStore.ApplicationStore
      const app = Fixtures.application()
      yield* apps.insert(app)
      yield* apps.updateSecret(app.appKey, Fixtures.hash(), Fixtures.baseTime + 3600)
      const event = { ...eventAt(Fixtures.baseTime, "mark"), appKey: app.appKey }
      const mark = () =>
        audit.appendWith([event], apps.markPreviousSecretUsed(app.appKey, app.secretDigest, 1))
      yield* mark()
      assert.strictEqual((yield* Effect.flip(mark()))._tag, "PreviousSecretMarked")
      // Stored without an actor, the event reads back with a null one.
      assert.deepStrictEqual(yield* audit.tail({ limit: 10, appKey: app.appKey }), [
        { ...event, actor: null }
      ])
    }).pipe(Effect.provide(pgliteLayer()))
)

it.effect("a version-1 database is upgraded in place: its users enabled, its events without an actor", () =>
  Effect.gen(function* () {
    const schema = freshSchema()
    yield* sql(schema, createSchemaTable)
    for (const m of migrations.filter((m) => m.version === 1)) {
      yield* sql(schema, m.sql)
      yield* sql(schema, "INSERT INTO latchkey_schema (version, name, applied_at) VALUES ($1, $2, 0)", [
        m.version,
        m.name
      ])
    }
    const user = Fixtures.user()
    yield* sql(
      schema,
      "INSERT INTO users (user_id, username, password_hash, created_at) VALUES ($1, $2, $3, $4)",
      [user.userId, user.username, user.passwordHash, user.createdAt]
    )
    // Inside the retention: adding the column must not touch the append-only rows.
    const at = nowSeconds() - day
    yield* sql(schema, "INSERT INTO audit_events (at, type, app_key) VALUES ($1, 'token_issued', 'app-v1')", [
      at
    ])
    const pool = yield* pglitePool(schema)
    assert.deepStrictEqual(yield* PostgresStorage.migrate({ pool }), {
      from: 1,
      to: PostgresStorage.schemaVersion
    })
    yield* Effect.gen(function* () {
      const users = yield* UserStore.UserStore
      const tokens = yield* TokenStore.TokenStore
      const audit = yield* AuditStore.AuditStore
      assert.deepStrictEqual(yield* users.findById(user.userId), Option.some({ ...user, disabledAt: null }))
      assert.deepStrictEqual(yield* audit.query({ limit: 10, appKey: "app-v1" }), [
        {
          at,
          type: "token_issued",
          appKey: "app-v1",
          userId: null,
          openId: null,
          address: null,
          requestId: null,
          detail: null,
          actor: null
        }
      ])
      const token = Fixtures.token({ userId: user.userId })
      yield* tokens.insert([token])
      assert.isTrue(yield* users.setDisabled(user.userId, true, Fixtures.baseTime + 5))
      assert.strictEqual(
        Option.getOrThrow(yield* users.findById(user.userId)).disabledAt,
        Fixtures.baseTime + 5
      )
      assert.strictEqual(
        Option.getOrThrow(yield* tokens.find("access", token.tokenHash)).revokedAt,
        Fixtures.baseTime + 5
      )
    }).pipe(Effect.provide(PostgresStorage.layer({ pool })))
  })
)

it.effect(
  "query takes any number as since and limit, as the memory store does, never a malformed bigint",
  () =>
    Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const appKey = Fixtures.id("app")
      const events = [0, 1, 2].map((i) => ({
        ...eventAt(Fixtures.baseTime + i, `q-${i}`),
        appKey,
        actor: null
      }))
      yield* Effect.forEach(events, (e) => audit.append(e))
      const ids = (filter: Omit<AuditStore.AuditQuery, "appKey">) =>
        Effect.map(audit.query({ ...filter, appKey }), (found) => found.map((e) => e.requestId))
      assert.deepStrictEqual(yield* ids({ limit: 10, since: Fixtures.baseTime + 0.5 }), ["q-2", "q-1"])
      assert.deepStrictEqual(yield* ids({ limit: 10, since: Fixtures.baseTime + 2 }), ["q-2"])
      assert.deepStrictEqual(yield* ids({ limit: 10, since: Number.NEGATIVE_INFINITY }), [
        "q-2",
        "q-1",
        "q-0"
      ])
      assert.deepStrictEqual(yield* ids({ limit: 10, since: -1e300 }), ["q-2", "q-1", "q-0"])
      for (const since of [Number.NaN, Number.POSITIVE_INFINITY, 1e300]) {
        assert.deepStrictEqual(yield* ids({ limit: 10, since }), [])
      }
      assert.deepStrictEqual(yield* ids({ limit: 2.7 }), ["q-2", "q-1"])
      assert.deepStrictEqual(yield* ids({ limit: Number.POSITIVE_INFINITY }), ["q-2", "q-1", "q-0"])
      for (const limit of [0, 0.5, -3, Number.NaN]) {
        assert.deepStrictEqual(yield* ids({ limit }), [])
      }
    }).pipe(Effect.provide(pgliteLayer()))
)

it.effect("ping succeeds on a migrated database", () => Effect.provide(PostgresStorage.ping, pgliteLayer()))

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
    assert.match(err.message, /duplicate key/)
    assert.deepStrictEqual(yield* codes.find(code.codeHash), Option.some(code))
    assert.isTrue(Option.isNone(yield* tokens.find("access", fresh.tokenHash)))
    yield* codes.redeem(code.codeHash, Fixtures.baseTime, [fresh])
  }).pipe(Effect.provide(pgliteLayer()))
)

it.effect("sweep purges what expired by the clock, bounded per run, and keeps live tombstones", () =>
  Effect.gen(function* () {
    const codes = yield* CodeStore.CodeStore
    const tokens = yield* TokenStore.TokenStore
    const sessions = yield* SessionStore.SessionStore
    const throttle = yield* Throttle.ThrottleStore
    const now = Fixtures.baseTime + 10_000
    yield* TestClock.setTime(now * 1000)
    const expired = Array.from({ length: 5 }, () => Fixtures.token({ expiresAt: now - 1 }))
    const tombstone = Fixtures.token({ kind: "refresh", expiresAt: now + 1 })
    yield* tokens.insert([...expired, tombstone])
    yield* tokens.rotate(tombstone.tokenHash, now - 5, 0, [])
    yield* codes.insert(Fixtures.code({ expiresAt: now }))
    const oldSession = Fixtures.session({ expiresAt: now })
    const liveSession = Fixtures.signedInSession({ expiresAt: now + 1 })
    yield* sessions.save(oldSession)
    yield* sessions.save(liveSession)
    yield* sessions.addPending(Fixtures.pending({ sessionHash: oldSession.idHash, expiresAt: now + 1 }))
    const livePending = Fixtures.pending({ sessionHash: liveSession.idHash, expiresAt: now + 1 })
    yield* sessions.addPending(Fixtures.pending({ sessionHash: liveSession.idHash, expiresAt: now - 1 }))
    yield* sessions.addPending(livePending)
    const key = { key: Fixtures.id("sweep"), kind: "identifier" } as const
    yield* throttle.fail([key], now - 2 * Throttle.defaultPolicy.window, Throttle.defaultPolicy)
    assert.deepStrictEqual(yield* PostgresStorage.sweep({ limit: 3 }), {
      codes: 1,
      tokens: 3,
      sessions: 2,
      throttle: 1,
      keys: 0,
      devices: 0,
      registrationTokens: 0
    })
    assert.deepStrictEqual(yield* PostgresStorage.sweep({ limit: 3 }), {
      codes: 0,
      tokens: 2,
      sessions: 0,
      throttle: 0,
      keys: 0,
      devices: 0,
      registrationTokens: 0
    })
    assert.isTrue(Option.isSome(yield* tokens.find("refresh", tombstone.tokenHash)))
    assert.isTrue(Option.isSome(yield* sessions.findPending(liveSession.idHash, livePending.txn, now)))
    yield* TestClock.setTime((now + 1) * 1000)
    assert.deepStrictEqual(yield* PostgresStorage.sweep(), {
      codes: 0,
      tokens: 1,
      sessions: 1,
      throttle: 0,
      keys: 0,
      devices: 0,
      registrationTokens: 0
    })
    assert.isTrue(Option.isNone(yield* sessions.findPending(liveSession.idHash, livePending.txn, now)))
  }).pipe(Effect.provide(pgliteLayer()))
)

it.effect("the pending characters are kept exact by the trigger for any writer, in characters", () =>
  Effect.gen(function* () {
    const schema = freshSchema()
    const context = yield* Layer.build(pgliteLayer({ schema }))
    const stats = Effect.provide(
      Effect.flatMap(SessionStore.SessionStore, (s) => s.stats()),
      context
    )
    const insert = (txn: string, rawQuery: string) =>
      sql(
        schema,
        `INSERT INTO pending_authorizations (session_hash, txn, raw_query, csrf_hash, step, created_at, expires_at)
          VALUES ('s', $1, $2, 'c', 'login', 1, 2)`,
        [txn, rawQuery]
      )
    yield* insert("a", "a".repeat(120))
    // "é" is one character, as length() counts it.
    yield* insert("b", "é".repeat(10))
    assert.deepStrictEqual(yield* stats, { sessions: 0, pendingBytes: 130 })
    yield* sql(schema, "UPDATE pending_authorizations SET raw_query = $1 WHERE txn = 'a'", ["d".repeat(5)])
    assert.strictEqual((yield* stats).pendingBytes, 15)
    yield* sql(schema, "DELETE FROM pending_authorizations WHERE txn = 'b'")
    assert.strictEqual((yield* stats).pendingBytes, 5)
    assert.match(yield* sqlFails(schema, "TRUNCATE pending_authorizations"), /cannot be truncated/)
  }).pipe(Effect.scoped)
)

// A pool over PGlite whose COMMIT fails with a serialization failure (after rolling back) while `failing()` says so.
const conflictingPool = (pool: PostgresStorage.Pool, failing: () => boolean): PostgresStorage.Pool => ({
  query: (statement: string | PostgresStorage.QueryConfig, values?: Array<unknown>) =>
    typeof statement === "string" ? pool.query(statement, values) : pool.query(statement),
  connect: async () => {
    const client = await pool.connect()
    return {
      query: async (statement: string | PostgresStorage.QueryConfig, values?: Array<unknown>) => {
        if (statement === "COMMIT" && failing()) {
          await client.query("ROLLBACK")
          throw Object.assign(new Error("could not serialize access due to concurrent update"), {
            code: "40001"
          })
        }
        return typeof statement === "string" ? client.query(statement, values) : client.query(statement)
      },
      release: (destroy) => client.release(destroy)
    }
  }
})

it.live(
  "a serialization failure at COMMIT runs the whole transaction again; past 8 attempts it is a StorageError",
  () =>
    Effect.gen(function* () {
      const schema = freshSchema()
      const base = yield* pglitePool(schema)
      yield* PostgresStorage.migrate({ pool: base })
      let commits = 0
      let failures = 3
      const pool = conflictingPool(base, () => {
        commits++
        return failures-- > 0
      })
      const context = yield* Layer.build(PostgresStorage.layer({ pool }))
      const codes = yield* Effect.provide(CodeStore.CodeStore, context)
      const tokens = yield* Effect.provide(TokenStore.TokenStore, context)
      const code = Fixtures.code()
      yield* Effect.provide(Fixtures.insertCode(code), context)
      const issued = Fixtures.pair({ familyId: code.familyId })
      commits = 0
      failures = 3
      yield* codes.redeem(code.codeHash, Fixtures.baseTime, issued)
      assert.strictEqual(commits, 4, "three rolled-back runs, then the one that commits")
      for (const t of issued) assert.isTrue(Option.isSome(yield* tokens.find(t.kind, t.tokenHash)))
      assert.strictEqual(Option.getOrThrow(yield* codes.find(code.codeHash)).usedAt, Fixtures.baseTime)

      const other = Fixtures.code()
      yield* Effect.provide(Fixtures.insertCode(other), context)
      commits = 0
      failures = Number.POSITIVE_INFINITY
      const err = yield* Effect.flip(codes.redeem(other.codeHash, Fixtures.baseTime, []))
      assert.strictEqual(err._tag, "StorageError")
      assert.match(err.message, /gave up after 8 attempts/)
      assert.strictEqual(commits, 8)
      failures = 0
      // Nothing was written: the code is still unused and redeemable.
      assert.deepStrictEqual(yield* codes.find(other.codeHash), Option.some(other))
      yield* codes.redeem(other.codeHash, Fixtures.baseTime, [])
    }).pipe(Effect.scoped)
)

const conflict = () =>
  new StorageError.StorageError({
    message: "serialization",
    cause: Object.assign(new Error("could not serialize"), { code: "40001" })
  })

it.effect("retryConflicts waits on the Clock between runs, exponentially, capped at 100 ms", () =>
  Effect.gen(function* () {
    let runs = 0
    const fiber = yield* Effect.fork(
      retryConflicts(
        Effect.suspend(() => {
          runs++
          return runs < 8 ? Effect.fail(conflict()) : Effect.succeed("done")
        })
      )
    )
    yield* TestClock.adjust("1 millis")
    assert.strictEqual(runs, 1, "the first rerun waits about 2 ms")
    // 2, 4, 8, 16, 32, 64, then 100 (capped), each with up to 20% jitter either way.
    yield* TestClock.adjust("400 millis")
    assert.strictEqual(yield* Fiber.join(fiber), "done")
    assert.strictEqual(runs, 8)
  })
)

it.effect(
  "retryConflicts gives up after its attempts with a StorageError, and never retries anything else",
  () =>
    Effect.gen(function* () {
      let runs = 0
      const fiber = yield* Effect.fork(
        Effect.flip(
          retryConflicts(
            Effect.suspend(() => {
              runs++
              return Effect.fail(conflict())
            }),
            { attempts: 5, baseDelay: "2 millis", maxDelay: "100 millis" }
          )
        )
      )
      yield* TestClock.adjust("10 seconds")
      const err = yield* Fiber.join(fiber)
      assert.strictEqual(runs, 5)
      assert.match(err.message, /gave up after 5 attempts/)
      assert.isTrue(isConflict(err.cause))

      let plain = 0
      const other = yield* Effect.exit(
        retryConflicts(
          Effect.suspend(() => {
            plain++
            return Effect.fail(new StorageError.StorageError({ message: "disk full" }))
          })
        )
      )
      assert.strictEqual(plain, 1)
      assert.isTrue(Exit.isFailure(other) && Option.isSome(Cause.failureOption(other.cause)))
    })
)

it("maps driver errors to fixed StorageError messages that never quote the server's text", () => {
  const cases: ReadonlyArray<readonly [unknown, RegExp]> = [
    [
      Object.assign(new Error("duplicate key value (token_hash)=(secret)"), { code: "23505" }),
      /duplicate key/
    ],
    [Object.assign(new Error("x"), { code: "40001" }), /serialization failure/],
    [Object.assign(new Error("x"), { code: "40P01" }), /deadlock/],
    [Object.assign(new Error("terminating connection"), { code: "57P01" }), /ended the connection/],
    [Object.assign(new Error("x"), { code: "57014" }), /statement timed out/],
    [Object.assign(new Error("x"), { code: "08006" }), /connection to the database failed/],
    [
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }),
      /cannot be reached/
    ],
    [new Error("timeout exceeded when trying to connect"), /connection timeout/],
    [new Error("Connection terminated unexpectedly"), /connection to the database was lost/],
    [Object.assign(new Error("x"), { code: "XX000" }), /postgres error XX000/],
    ["something", /postgres storage failed/]
  ]
  for (const [cause, message] of cases) {
    const err = toStorageError(cause)
    assert.strictEqual(err._tag, "StorageError")
    assert.match(err.message, message)
    assert.notMatch(err.message, /secret/)
    assert.strictEqual(err.cause, cause)
  }
})

it.effect("a PgliteClient pool refuses a schema that is not a plain identifier", () =>
  Effect.gen(function* () {
    const db = yield* Effect.promise(() => pglite())
    assert.throws(() => PgliteClient.make(db, { schema: "a-b" }), /schema must be/)
  })
)
