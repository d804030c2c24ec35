/**
 * What OpenID Connect, JWT access tokens and public clients store in SQLite: migration 11 over a
 * database of the release before, signing keys that outlive the process, and their sweep.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, it } from "@effect/vitest"
import { ApplicationStore, CodeStore, Config, Jwt, KeyStore, Keys } from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Fixtures } from "@latchkey/storage-testkit"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Layer, Option, TestClock } from "effect"
import { afterAll } from "vitest"
import { openSync } from "../src/internal/database.js"
import { migrations } from "../src/internal/migrations.js"

const dir = mkdtempSync(join(tmpdir(), "latchkey-keys-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const freshFile = () => join(dir, `db-${files++}.sqlite`)
const T = Fixtures.baseTime

const keyList = Effect.flatMap(KeyStore.KeyStore, (s) => s.list())

/** A database of the release before (migrations 1 to 10) holding one application and one code. */
const previousRelease = (
  filename: string,
  app: ReturnType<typeof Fixtures.application>,
  code: ReturnType<typeof Fixtures.code>
): void => {
  const db = new BetterSqlite3(filename)
  db.transaction(() => {
    db.exec(`CREATE TABLE latchkey_schema (version INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL,
      applied_at INTEGER NOT NULL)`)
    for (const m of migrations.filter((m) => m.version <= 10)) {
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
    db.prepare(
      `INSERT INTO authorization_codes (code_hash, app_key, redirect_uri, user_id, open_id, scope,
        family_id, issued_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
    ).run(
      code.codeHash,
      code.appKey,
      code.redirectUri,
      code.userId,
      code.openId,
      JSON.stringify(code.scope),
      code.familyId,
      code.issuedAt,
      code.expiresAt
    )
  })()
  db.close()
}

it.effect(
  "migration 11 keeps the applications and codes of the release before: confidential, opaque, no audience, no nonce",
  () =>
    Effect.gen(function* () {
      const filename = freshFile()
      const app = Fixtures.application()
      const code = Fixtures.code({ appKey: app.appKey })
      previousRelease(filename, app, code)
      assert.deepStrictEqual(yield* SqliteStorage.migrate({ filename }), {
        from: 10,
        to: SqliteStorage.schemaVersion
      })
      const context = yield* Layer.build(SqliteStorage.layer({ filename }))
      const found = yield* Effect.provide(
        Effect.flatMap(ApplicationStore.ApplicationStore, (s) => s.find(app.appKey)),
        context
      )
      assert.deepStrictEqual(found, Option.some(app))
      const foundCode = yield* Effect.provide(
        Effect.flatMap(CodeStore.CodeStore, (s) => s.find(code.codeHash)),
        context
      )
      assert.deepStrictEqual(foundCode, Option.some(code))
      // The migrated table holds signing keys, one signing key at most.
      const key = Fixtures.signingKey()
      yield* Effect.provide(
        Effect.flatMap(KeyStore.KeyStore, (s) =>
          Effect.zipRight(s.initialize(key), s.initialize(Fixtures.signingKey()))
        ),
        context
      )
      assert.deepStrictEqual(yield* Effect.provide(keyList, context), [key])
    }).pipe(Effect.scoped)
)

it.effect("the signing key and the retired keys survive closing and reopening the file", () =>
  Effect.gen(function* () {
    const filename = freshFile()
    const first = Fixtures.signingKey()
    const next = Fixtures.signingKey({ createdAt: T + 10 })
    yield* Effect.provide(
      Effect.flatMap(KeyStore.KeyStore, (s) =>
        Effect.zipRight(s.initialize(first), s.rotate(next, T + 10, T + 100))
      ),
      SqliteStorage.layer({ filename })
    )
    const reopened = yield* Effect.provide(keyList, SqliteStorage.layer({ filename }))
    assert.deepStrictEqual(reopened, [next, { ...first, retiredAt: T + 10, publishUntil: T + 100 }])
    // A starter on the reopened file keeps the stored signing key.
    const again = yield* Effect.provide(
      Effect.flatMap(KeyStore.KeyStore, (s) =>
        Effect.zipRight(s.initialize(Fixtures.signingKey()), s.list())
      ),
      SqliteStorage.layer({ filename })
    )
    assert.deepStrictEqual(again, reopened)
  })
)

it.effect(
  "sweep removes the retired signing keys no longer published by the clock, never the signing key",
  () =>
    Effect.gen(function* () {
      const keys = yield* KeyStore.KeyStore
      const now = T + 10_000
      yield* TestClock.setTime(now * 1000)
      const a = Fixtures.signingKey({ createdAt: now - 100 })
      const b = Fixtures.signingKey({ createdAt: now - 99 })
      const c = Fixtures.signingKey({ createdAt: now - 98 })
      yield* keys.initialize(a)
      yield* keys.rotate(b, now - 99, now)
      yield* keys.rotate(c, now - 98, now + 1)
      assert.strictEqual((yield* SqliteStorage.sweep()).keys, 1, "the key published until now")
      assert.strictEqual((yield* SqliteStorage.sweep()).keys, 0)
      yield* TestClock.setTime((now + 1) * 1000)
      assert.strictEqual((yield* SqliteStorage.sweep()).keys, 1)
      assert.deepStrictEqual(yield* keys.list(), [c])
    }).pipe(Effect.provide(SqliteStorage.layer({ filename: ":memory:" })))
)

it("the sweep of signing keys reads the retired keys by their index", () => {
  const { db } = openSync({ filename: ":memory:" })
  try {
    const plan = db
      .prepare(
        "EXPLAIN QUERY PLAN DELETE FROM signing_keys WHERE retired_at IS NOT NULL AND publish_until <= 1"
      )
      .all() as Array<{ detail: string }>
    assert.match(plan.map((r) => r.detail).join("; "), /USING INDEX signing_keys_by_publish_until/)
  } finally {
    db.close()
  }
})

it.effect(
  "a rotation made by one process reaches another on the same file within Keys.refreshSeconds: it signs with the new key from then on, and verifies both",
  () =>
    Effect.gen(function* () {
      const filename = freshFile()
      const settings = Config.layer({ issuer: "https://auth.example", serverKey: "k".repeat(32) })
      // Two processes: two store layers over one file, each with its own key cache
      const a = yield* Layer.build(Layer.merge(SqliteStorage.layer({ filename }), settings))
      const b = yield* Layer.build(Layer.merge(SqliteStorage.layer({ filename }), settings))
      const kidOf = (token: string) => JSON.parse(atob(token.split(".")[0] as string)).kid as string
      const sign = Jwt.sign({ iss: "https://auth.example", iat: 0, exp: 3600 }, Jwt.idTokenType)
      const before = yield* Effect.provide(sign, b)
      const rotated = yield* Effect.provide(Keys.rotate(), a)
      assert.strictEqual(kidOf(yield* Effect.provide(sign, a)), rotated.kid, "the rotating process at once")
      yield* TestClock.setTime((Keys.refreshSeconds - 1) * 1000)
      assert.notStrictEqual(
        kidOf(yield* Effect.provide(sign, b)),
        rotated.kid,
        "the other still holds its copy"
      )
      yield* TestClock.setTime(Keys.refreshSeconds * 1000)
      const after = yield* Effect.provide(sign, b)
      assert.strictEqual(kidOf(after), rotated.kid, "the other after refreshSeconds")
      for (const token of [before, after])
        yield* Effect.provide(Jwt.verify(token, { typ: Jwt.idTokenType }), a)
    }).pipe(Effect.scoped)
)
