/** `backup <file>`: a consistent copy of the SQLite database (PostgreSQL is backed up with pg_dump). */
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Effect, Either } from "effect"
import * as Env from "../Env.js"
import { type Command, Failure, one, parse } from "./common.js"

/** The commands on the database. */
export const commands: Record<string, Command> = {
  backup: {
    run: async (args, _runtime, io) => {
      const { values, positionals } = parse(args, {})
      const file = one(positionals, "backup file")
      const env = Env.read(io.env)
      if (env.databaseUrl !== null) {
        throw new Failure(
          `the database is PostgreSQL (${Env.describeStore(env)}): take backups with pg_dump, e.g. pg_dump --format=custom --file=latchkey.dump "$DATABASE_URL"`
        )
      }
      if (env.dbPath === ":memory:") throw new Failure("LATCHKEY_DB is :memory:; there is nothing to back up")
      if (!existsSync(env.dbPath)) throw new Failure(`there is no database at ${env.dbPath} (LATCHKEY_DB)`)
      io.stderr(`latchkey: database ${env.dbPath}\n`)
      const destination = resolve(Env.baseDirectory(io.env), file)
      const done = await Effect.runPromise(
        Effect.either(SqliteStorage.backup({ filename: env.dbPath }, destination))
      )
      if (Either.isLeft(done)) throw new Failure(`the backup failed: ${done.left.message}`)
      io.stdout(
        values.json === true
          ? `${JSON.stringify({ database: env.dbPath, backup: destination })}\n`
          : `Backed up ${env.dbPath} to ${destination}.\n`
      )
    }
  }
}
