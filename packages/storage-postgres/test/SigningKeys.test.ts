/**
 * What OpenID Connect, JWT access tokens and public clients store in PostgreSQL (on PGlite):
 * migration 4 over a database of the release before, signing keys another layer over the same
 * schema reads, and their sweep.
 */
import { assert, it } from "@effect/vitest"
import { ApplicationStore, CodeStore, KeyStore } from "@latchkey/core"
import { PostgresStorage } from "@latchkey/storage-postgres"
import { Fixtures } from "@latchkey/storage-testkit"
import { Effect, Option, TestClock } from "effect"
import { afterAll } from "vitest"
import { createSchemaTable, migrations } from "../src/internal/migrations.js"
import { freshSchema, pglite, pgliteLayer, pglitePool } from "./support/pglite.js"

afterAll(async () => (await pglite()).close())

const T = Fixtures.baseTime

const sql = (schema: string, text: string, values?: Array<unknown>) =>
  Effect.flatMap(pglitePool(schema), (pool) => Effect.promise(() => pool.query(text, values)))

const keyList = Effect.flatMap(KeyStore.KeyStore, (s) => s.list())

it.effect(
  "migration 4 keeps the applications and codes of the release before: confidential, opaque, no audience, no nonce",
  () =>
    Effect.gen(function* () {
      const schema = freshSchema()
      yield* sql(schema, createSchemaTable)
      for (const m of migrations.filter((m) => m.version <= 3)) {
        yield* sql(schema, m.sql)
        yield* sql(schema, "INSERT INTO latchkey_schema (version, name, applied_at) VALUES ($1, $2, 0)", [
          m.version,
          m.name
        ])
      }
      const app = Fixtures.application()
      yield* sql(
        schema,
        `INSERT INTO applications (app_key, name, secret_digest, redirect_uris, scopes, grant_types,
          require_pkce, access_token_ttl, refresh_token_ttl, created_at)
          VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6::jsonb, false, NULL, NULL, $7)`,
        [
          app.appKey,
          app.name,
          app.secretDigest,
          JSON.stringify(app.redirectUris),
          JSON.stringify(app.scopes),
          JSON.stringify(app.grantTypes),
          app.createdAt
        ]
      )
      const code = Fixtures.code({ appKey: app.appKey })
      yield* sql(
        schema,
        `INSERT INTO authorization_codes (code_hash, app_key, redirect_uri, user_id, open_id, scope,
          family_id, issued_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9)`,
        [
          code.codeHash,
          code.appKey,
          code.redirectUri,
          code.userId,
          code.openId,
          JSON.stringify(code.scope),
          code.familyId,
          code.issuedAt,
          code.expiresAt
        ]
      )
      const pool = yield* pglitePool(schema)
      assert.deepStrictEqual(yield* PostgresStorage.migrate({ pool }), {
        from: 3,
        to: PostgresStorage.schemaVersion
      })
      yield* Effect.gen(function* () {
        assert.deepStrictEqual(
          yield* Effect.flatMap(ApplicationStore.ApplicationStore, (s) => s.find(app.appKey)),
          Option.some(app)
        )
        assert.deepStrictEqual(
          yield* Effect.flatMap(CodeStore.CodeStore, (s) => s.find(code.codeHash)),
          Option.some(code)
        )
        const key = Fixtures.signingKey()
        const keys = yield* KeyStore.KeyStore
        yield* keys.initialize(key)
        yield* keys.initialize(Fixtures.signingKey())
        assert.deepStrictEqual(yield* keys.list(), [key])
      }).pipe(Effect.provide(pgliteLayer({ schema })))
    })
)

it.effect("the signing key and the retired keys are read by another layer over the same schema", () =>
  Effect.gen(function* () {
    const schema = freshSchema()
    const first = Fixtures.signingKey()
    const next = Fixtures.signingKey({ createdAt: T + 10 })
    yield* Effect.provide(
      Effect.flatMap(KeyStore.KeyStore, (s) =>
        Effect.zipRight(s.initialize(first), s.rotate(next, T + 10, T + 100))
      ),
      pgliteLayer({ schema })
    )
    const other = yield* Effect.provide(
      Effect.flatMap(KeyStore.KeyStore, (s) =>
        Effect.zipRight(s.initialize(Fixtures.signingKey()), s.list())
      ),
      pgliteLayer({ schema })
    )
    assert.deepStrictEqual(other, [next, { ...first, retiredAt: T + 10, publishUntil: T + 100 }])
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
      assert.strictEqual((yield* PostgresStorage.sweep()).keys, 1, "the key published until now")
      assert.strictEqual((yield* PostgresStorage.sweep()).keys, 0)
      yield* TestClock.setTime((now + 1) * 1000)
      assert.strictEqual((yield* PostgresStorage.sweep()).keys, 1)
      assert.deepStrictEqual(yield* keyList, [c])
    }).pipe(Effect.provide(pgliteLayer()))
)
