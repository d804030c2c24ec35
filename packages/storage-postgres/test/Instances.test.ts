/**
 * Several instances on one real PostgreSQL database (`DATABASE_URL`): each layer has a pool of
 * its own, as each server process would. Run once at READ COMMITTED and once with every
 * transaction SERIALIZABLE.
 */
import { assert, describe, it } from "@effect/vitest"
import { CodeStore, TokenStore } from "@latchkey/core"
import { PostgresStorage } from "@latchkey/storage-postgres"
import { Fixtures } from "@latchkey/storage-testkit"
import { Array as Arr, Context, Effect, Exit, Layer, Option } from "effect"
import { freshSchema } from "./support/pglite.js"
import { databaseUrl, rawClient, useDatabase } from "./support/postgres.js"

const T = Fixtures.baseTime

for (const serializable of [false, true]) {
  const isolation = serializable ? "serializable" : "read committed"
  describe.skipIf(databaseUrl === undefined)(`instances on real PostgreSQL, ${isolation}`, () => {
    const database = useDatabase({ serializable })
    const options = (schema: string) => ({ connectionString: database.get().url, schema })
    const raw = <A>(
      schema: string | undefined,
      f: (client: Awaited<ReturnType<typeof rawClient>>) => Promise<A>
    ) =>
      Effect.acquireUseRelease(
        Effect.promise(() => rawClient(database.get(), schema)),
        (client) => Effect.promise(() => f(client)),
        (client) => Effect.promise(() => client.end())
      )

    it.effect("the connections run at the database's isolation, with the pool's settings", () =>
      Effect.gen(function* () {
        const schema = freshSchema()
        const context = yield* Layer.build(PostgresStorage.layer(options(schema)))
        assert.isTrue(Context.getOption(context, PostgresStorage.Health).pipe(Option.isSome))
        const settings = yield* raw(undefined, (c) =>
          c.query(
            `SELECT setting FROM pg_settings WHERE name = 'default_transaction_isolation'
              UNION ALL SELECT count(*)::text FROM pg_stat_activity
              WHERE application_name = 'latchkey' AND datname = current_database()`
          )
        )
        assert.strictEqual(settings.rows[0]?.setting, isolation)
        assert.isAtLeast(
          Number(settings.rows[1]?.setting),
          1,
          "the pool's connections name themselves latchkey"
        )
        yield* Effect.provide(PostgresStorage.ping, context)
      }).pipe(Effect.scoped)
    )

    it.effect("four instances starting together on an empty schema migrate it exactly once", () =>
      Effect.gen(function* () {
        const schema = freshSchema()
        const runs = yield* Effect.all(
          Arr.makeBy(4, () => PostgresStorage.migrate(options(schema))),
          {
            concurrency: "unbounded"
          }
        )
        assert.deepStrictEqual(runs.map((r) => r.from).sort(), [
          0,
          PostgresStorage.schemaVersion,
          PostgresStorage.schemaVersion,
          PostgresStorage.schemaVersion
        ])
        // Four layers at once on another empty schema: all open, one migration recorded.
        const other = freshSchema()
        const contexts = yield* Effect.all(
          Arr.makeBy(4, () => Layer.build(PostgresStorage.layer(options(other)))),
          {
            concurrency: "unbounded"
          }
        )
        assert.strictEqual(contexts.length, 4)
        for (const s of [schema, other]) {
          const versions = yield* raw(s, (c) =>
            c.query("SELECT version FROM latchkey_schema ORDER BY version")
          )
          assert.deepStrictEqual(
            versions.rows.map((r) => r.version),
            Arr.makeBy(PostgresStorage.schemaVersion, (i) => i + 1)
          )
        }
      }).pipe(Effect.scoped)
    )

    it.effect("a database written by a newer version is refused with a clear StorageError", () =>
      Effect.gen(function* () {
        const schema = freshSchema()
        yield* PostgresStorage.migrate(options(schema))
        yield* raw(schema, (c) =>
          c.query("INSERT INTO latchkey_schema (version, name, applied_at) VALUES (42, 'future', 0)")
        )
        const err = yield* Effect.flip(Effect.scoped(Layer.build(PostgresStorage.layer(options(schema)))))
        assert.strictEqual(err._tag, "StorageError")
        assert.match(
          err.message,
          new RegExp(
            `^database schema version 42 is newer than this build supports \\(${PostgresStorage.schemaVersion}\\); upgrade Latchkey`
          )
        )
      })
    )

    it.effect(
      "two instances race 50 redeems of one code and 50 rotations of one refresh token: one winner each, and the reuse revokes the family",
      () =>
        Effect.gen(function* () {
          const schema = freshSchema()
          const instances = yield* Effect.all(
            [
              Layer.build(PostgresStorage.layer(options(schema))),
              Layer.build(PostgresStorage.layer(options(schema)))
            ],
            { concurrency: "unbounded" }
          )
          const stores = instances.map((context) => ({
            codes: Context.get(context, CodeStore.CodeStore),
            tokens: Context.get(context, TokenStore.TokenStore)
          }))
          const on = (i: number) => stores[i % 2] as (typeof stores)[number]
          const now = T + 1

          // As the grant does: a reused code revokes everything issued from it.
          const code = Fixtures.code()
          yield* Effect.provide(Fixtures.insertCode(code), instances[0] as (typeof instances)[number])
          const redemptions = Arr.makeBy(50, () =>
            Fixtures.pair({ familyId: code.familyId, appKey: code.appKey })
          )
          const redeemed = yield* Effect.all(
            redemptions.map((issued, i) =>
              on(i)
                .codes.redeem(code.codeHash, now, issued)
                .pipe(
                  Effect.as("won" as const),
                  Effect.catchTag("CodeAlreadyUsed", (e) =>
                    Effect.as(on(i + 1).tokens.revokeFamily(e.familyId, now), "reused" as const)
                  ),
                  Effect.exit
                )
            ),
            { concurrency: "unbounded" }
          )
          const outcomes = redeemed.map((e) => (Exit.isSuccess(e) ? e.value : "failed"))
          assert.strictEqual(outcomes.filter((o) => o === "won").length, 1)
          assert.strictEqual(outcomes.filter((o) => o === "reused").length, 49)
          const winner = outcomes.indexOf("won")
          for (const [i, issued] of redemptions.entries()) {
            for (const t of issued) {
              for (const s of stores) {
                const found = yield* s.tokens.find(t.kind, t.tokenHash)
                assert.strictEqual(Option.isSome(found), i === winner)
                if (Option.isSome(found))
                  assert.strictEqual(found.value.revokedAt, now, "revoked by the reuse")
              }
            }
          }

          // The same for a refresh token rotated by every attempt at once.
          const [access, refresh] = Fixtures.pair()
          yield* on(1).tokens.insert([access, refresh])
          const rotations = Arr.makeBy(50, () =>
            Fixtures.pair({
              familyId: refresh.familyId,
              appKey: refresh.appKey,
              parentHash: refresh.tokenHash
            })
          )
          const rotated = yield* Effect.all(
            rotations.map((issued, i) =>
              on(i)
                .tokens.rotate(refresh.tokenHash, now, 0, issued)
                .pipe(
                  Effect.as("won" as const),
                  Effect.catchTags({
                    RefreshAlreadyRotated: (e) =>
                      Effect.as(on(i + 1).tokens.revokeFamily(e.familyId, now), "reused" as const),
                    // The family was revoked by a reuse before this attempt: the token is inactive now.
                    TokenInactive: () => Effect.succeed("inactive" as const)
                  }),
                  Effect.exit
                )
            ),
            { concurrency: "unbounded" }
          )
          const rotatedOutcomes = rotated.map((e) => (Exit.isSuccess(e) ? e.value : "failed"))
          assert.strictEqual(rotatedOutcomes.filter((o) => o === "won").length, 1)
          assert.isAtLeast(rotatedOutcomes.filter((o) => o === "reused").length, 1)
          assert.strictEqual(rotatedOutcomes.filter((o) => o === "reused" || o === "inactive").length, 49)
          const rotationWinner = rotatedOutcomes.indexOf("won")
          for (const [i, issued] of rotations.entries()) {
            for (const t of issued) {
              const found = yield* on(i).tokens.find(t.kind, t.tokenHash)
              assert.strictEqual(Option.isSome(found), i === rotationWinner)
              if (Option.isSome(found)) assert.strictEqual(found.value.revokedAt, now)
            }
          }
          for (const t of [access, refresh]) {
            const found = Option.getOrThrow(yield* on(0).tokens.find(t.kind, t.tokenHash))
            assert.strictEqual(found.revokedAt, now)
          }
          assert.strictEqual(
            Option.getOrThrow(yield* on(1).tokens.find("refresh", refresh.tokenHash)).rotatedAt,
            now
          )
        }).pipe(Effect.scoped)
    )
  })
}
