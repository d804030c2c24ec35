/**
 * Forward-only schema migrations, applied at open inside one BEGIN IMMEDIATE
 * transaction and recorded in `latchkey_schema`.
 */
import { Migrations } from "@latchkey/core"
import type BetterSqlite3 from "better-sqlite3"
import { Either } from "effect"
import { first } from "./schema/first.js"
import { later } from "./schema/later.js"

/** Every migration, in order. Never edit a released one: append a new version. */
export const migrations: ReadonlyArray<Migrations.Migration> = [...first, ...later]

/** The schema version this build writes. */
export const latestVersion: number = Migrations.latestOf(migrations)

/** The database was written by a newer Latchkey than this one. */
export class NewerSchemaError extends Error {
  constructor(readonly found: number) {
    super(
      `the database has schema version ${found}, newer than this @latchkey/storage-sqlite supports ` +
        `(${latestVersion}); upgrade Latchkey, or restore a backup taken before the upgrade`
    )
    this.name = "NewerSchemaError"
  }
}
