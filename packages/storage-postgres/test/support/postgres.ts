/**
 * A real PostgreSQL server for the tests that need one: `DATABASE_URL` names it (skipped
 * without). Each test file gets a database of its own, created before its tests and dropped
 * after them, so runs never see each other's rows.
 */
import { randomUUID } from "node:crypto"
import { PostgresStorage } from "@latchkey/storage-postgres"
import { Effect, Layer } from "effect"
import pg from "pg"
import { afterAll, beforeAll } from "vitest"
import { freshSchema } from "./pglite.js"

/** The server to test against, if any. */
export const databaseUrl: string | undefined = process.env.DATABASE_URL

const admin = async <A>(f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** A database of this run. */
export interface TestDatabase {
  readonly name: string
  /** Its connection URI. */
  readonly url: string
  /** Host and port of the server. */
  readonly host: string
  readonly port: number
}

/** Create an empty database; with `serializable` every transaction in it is SERIALIZABLE by default. */
export const createDatabase = async (
  options: { readonly serializable?: boolean } = {}
): Promise<TestDatabase> => {
  if (databaseUrl === undefined) throw new Error("DATABASE_URL is not set")
  const name = `latchkey_test_${randomUUID().replaceAll("-", "").slice(0, 20)}`
  await admin(async (client) => {
    await client.query(`CREATE DATABASE ${name}`)
    if (options.serializable === true) {
      await client.query(`ALTER DATABASE ${name} SET default_transaction_isolation = 'serializable'`)
    }
  })
  const url = new URL(databaseUrl)
  url.pathname = `/${name}`
  return { name, url: url.toString(), host: url.hostname, port: Number(url.port || 5432) }
}

/** Drop a database of this run, closing whoever is still connected. */
export const dropDatabase = (name: string): Promise<void> =>
  admin(async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  })

/**
 * A database for the tests of the enclosing `describe`: created before them, dropped after.
 * `get()` answers it inside the tests (and layers built there).
 */
export const useDatabase = (options: { readonly serializable?: boolean } = {}) => {
  let database: TestDatabase | undefined
  beforeAll(async () => {
    database = await createDatabase(options)
  })
  afterAll(async () => {
    if (database !== undefined) await dropDatabase(database.name)
  })
  return {
    get: (): TestDatabase => {
      if (database === undefined) throw new Error("the test database is not created yet")
      return database
    }
  }
}

/** A client of `database`, in `schema` when given. */
export const rawClient = async (database: TestDatabase, schema?: string): Promise<pg.Client> => {
  const client = new pg.Client({
    connectionString: database.url,
    ...(schema !== undefined ? { options: `-c search_path=${schema}` } : {})
  })
  await client.connect()
  return client
}

/** A layer over `database()` (read when the layer is built), in a fresh schema unless `schema` is given. */
export const postgresLayer = (
  database: () => TestDatabase,
  options: Omit<PostgresStorage.Options, "pool" | "connectionString"> = {}
) =>
  Layer.unwrapEffect(
    Effect.sync(() =>
      PostgresStorage.layer({ schema: freshSchema(), ...options, connectionString: database().url })
    )
  )
