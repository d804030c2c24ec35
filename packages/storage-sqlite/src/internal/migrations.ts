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

/**
 * Bring the schema up to `latestVersion`: idempotent, forward-only, all steps in
 * one BEGIN IMMEDIATE transaction so concurrent openers apply each step once.
 * Returns the version found before migrating.
 */
export const migrate = (db: BetterSqlite3.Database, now: number): number =>
  db
    .transaction(() => {
      db.exec(`CREATE TABLE IF NOT EXISTS latchkey_schema (
        version    INTEGER PRIMARY KEY NOT NULL,
        name       TEXT NOT NULL,
        applied_at INTEGER NOT NULL
      )`)
      const row = db.prepare("SELECT coalesce(max(version), 0) AS version FROM latchkey_schema").get() as {
        version: number
      }
      const steps = Migrations.plan(migrations, row.version)
      if (Either.isLeft(steps)) throw new NewerSchemaError(steps.left)
      const record = db.prepare("INSERT INTO latchkey_schema (version, name, applied_at) VALUES (?, ?, ?)")
      for (const m of steps.right) {
        db.exec(m.sql)
        record.run(m.version, m.name, now)
      }
      return row.version
    })
    .immediate()
