/**
 * Forward-only schema migrations, applied when a layer is built: all pending steps in one
 * transaction, under an advisory lock taken before it begins, and recorded in `latchkey_schema`.
 * Tables go to the first schema of the connection's search_path.
 */
import { Migrations, StorageError } from "@latchkey/core"
import { Effect, Either } from "effect"
import type { Tx } from "./database.js"
import { first } from "./schema/first.js"
import { later } from "./schema/later.js"

/** Every migration, in order. Never edit a released one: append a new version. */
export const migrations: ReadonlyArray<Migrations.Migration> = [...first, ...later]

/** The schema version this build writes. */
export const latestVersion: number = Migrations.latestOf(migrations)

/** The database was written by a newer Latchkey than this one. */
export const newerSchema = (found: number): StorageError.StorageError =>
  new StorageError.StorageError({
    message:
      `database schema version ${found} is newer than this build supports (${latestVersion}); ` +
      "upgrade Latchkey, or restore a backup taken before the upgrade"
  })

/** Creates the version table when it is missing; the first statement of every migration run. */
export const createSchemaTable = `CREATE TABLE IF NOT EXISTS latchkey_schema (
  version    integer PRIMARY KEY,
  name       text NOT NULL,
  applied_at bigint NOT NULL
)`

/**
 * Bring the schema up to `latestVersion` inside `tx` (one transaction, under the migration
 * lock): idempotent and forward-only. Returns the version found before migrating; fails with
 * a StorageError naming both versions for a database of a newer build.
 */
export const migrate = (tx: Tx): Effect.Effect<number, StorageError.StorageError> =>
  Effect.gen(function* () {
    yield* tx.query(createSchemaTable)
    const found = yield* tx.query("SELECT coalesce(max(version), 0) AS version FROM latchkey_schema")
    const version = Number(found.rows[0]?.version ?? 0)
    const steps = Migrations.plan(migrations, version)
    if (Either.isLeft(steps)) return yield* Effect.fail(newerSchema(steps.left))
    for (const m of steps.right) {
      yield* tx.query(m.sql)
      yield* tx.query(
        `INSERT INTO latchkey_schema (version, name, applied_at)
          VALUES ($1, $2, floor(extract(epoch FROM now()))::bigint)`,
        [m.version, m.name]
      )
    }
    return version
  })
