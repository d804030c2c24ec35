/**
 * The forward-only schema migrations of the SQL stores, as a pure plan: each adapter keeps its
 * own SQL and runs the plan in one transaction of its own, recording each step it applies.
 */
import { Either } from "effect"

/** One schema step; `sql` runs once, in the migration transaction. */
export interface Migration {
  readonly version: number
  readonly name: string
  readonly sql: string
}

/** The schema version `migrations` bring a database to. */
export const latestOf = (migrations: ReadonlyArray<Migration>): number =>
  migrations.reduce((v, m) => Math.max(v, m.version), 0)

/**
 * The steps to run, in order, on a database whose schema is at version `found` (0 when new):
 * every migration above it. A database at a version above the latest was written by a newer
 * build: that version, on the left, is refused by the adapter with a message of its own.
 */
export const plan = (
  migrations: ReadonlyArray<Migration>,
  found: number
): Either.Either<ReadonlyArray<Migration>, number> =>
  found > latestOf(migrations)
    ? Either.left(found)
    : Either.right(migrations.filter((m) => m.version > found))
