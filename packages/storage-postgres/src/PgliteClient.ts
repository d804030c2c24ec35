/**
 * A `PostgresStorage.Pool` over an embedded PGlite database (`@electric-sql/pglite`, PostgreSQL
 * compiled to WebAssembly), so tests run the real SQL without a database server. PGlite has one
 * connection: a checked-out client holds it until released, and every other caller waits its
 * turn. Typed structurally: this package does not depend on PGlite.
 *
 * ```ts
 * const db = await PGlite.create()
 * const Storage = PostgresStorage.layer({ pool: PgliteClient.make(db) })
 * ```
 */
import type { Pool, PoolClient, QueryConfig, QueryResult } from "./PostgresStorage.js"

/** A result of PGlite's `query` and `exec`. */
export interface PgliteResults {
  readonly rows: ReadonlyArray<Record<string, unknown>>
  readonly affectedRows?: number | undefined
}

/** The part of a `PGlite` instance the adapter calls. */
export interface Pglite {
  /** One statement, with parameters (the extended protocol). */
  query(text: string, params?: Array<unknown>): Promise<PgliteResults>
  /** Statements without parameters, several allowed (the simple protocol: migrations). */
  exec(text: string): Promise<ReadonlyArray<PgliteResults>>
}

/** How the pool uses the database. */
export interface Options {
  /**
   * Schema to work in: created when missing and set as the search_path whenever this pool takes
   * the connection, so several pools (several empty stores) can share one PGlite instance.
   */
  readonly schema?: string
}

/** The one connection of a PGlite instance, shared by every pool made over it. */
interface Connection {
  /** Resolves once the connection is free; the caller then holds it until it calls the returned function. */
  readonly acquire: () => Promise<() => void>
  searchPath: string | null
}

const connections = new WeakMap<Pglite, Connection>()

const connectionOf = (db: Pglite): Connection => {
  const found = connections.get(db)
  if (found !== undefined) return found
  let tail: Promise<void> = Promise.resolve()
  const connection: Connection = {
    acquire: () => {
      let free: () => void = () => {}
      const turn = new Promise<void>((resolve) => {
        free = resolve
      })
      const before = tail
      tail = before.then(() => turn)
      return before.then(() => {
        let freed = false
        return () => {
          if (!freed) {
            freed = true
            free()
          }
        }
      })
    },
    searchPath: null
  }
  connections.set(db, connection)
  return connection
}

const schemaName = /^[a-z_][a-z0-9_]{0,62}$/

// PGlite runs one statement at a time in this process: a statement's name changes nothing there.
const statementOf = (
  statement: string | QueryConfig,
  values?: ReadonlyArray<unknown>
): { readonly text: string; readonly values?: ReadonlyArray<unknown> | undefined } =>
  typeof statement === "string" ? { text: statement, values } : statement

const run = async (db: Pglite, text: string, values: ReadonlyArray<unknown> = []): Promise<QueryResult> => {
  if (values.length > 0) {
    const r = await db.query(text, [...values])
    return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length }
  }
  const results = await db.exec(text)
  const last = results[results.length - 1]
  return { rows: last?.rows ?? [], rowCount: last?.affectedRows ?? last?.rows.length ?? 0 }
}

/** A pool over `db`; `PostgresStorage.layer({ pool })` takes it. */
export const make = (db: Pglite, options: Options = {}): Pool => {
  const connection = connectionOf(db)
  const schema = options.schema ?? null
  if (schema !== null && !schemaName.test(schema)) {
    throw new Error("schema must be a lowercase identifier (letters, digits and _, at most 63)")
  }

  // Take the connection and point it at this pool's schema.
  const take = async (): Promise<() => void> => {
    const free = await connection.acquire()
    try {
      if (schema !== null && connection.searchPath !== schema) {
        await run(db, `CREATE SCHEMA IF NOT EXISTS ${schema}; SET search_path TO ${schema}`)
        connection.searchPath = schema
      }
      return free
    } catch (e) {
      free()
      throw e
    }
  }

  return {
    query: async (statement: string | QueryConfig, params?: Array<unknown>) => {
      const { text, values } = statementOf(statement, params)
      const free = await take()
      try {
        return await run(db, text, values)
      } finally {
        free()
      }
    },
    connect: async (): Promise<PoolClient> => {
      const free = await take()
      let pending: Promise<unknown> = Promise.resolve()
      let released = false
      return {
        query: (statement: string | QueryConfig, params?: Array<unknown>) => {
          if (released) return Promise.reject(new Error("Client was closed and is not queryable"))
          const { text, values } = statementOf(statement, params)
          const result = run(db, text, values)
          pending = result.catch(() => undefined)
          return result
        },
        // Closing is not possible (the connection is the database): a client given back in doubt
        // is rolled back and its advisory locks dropped once its last statement ended.
        release: (destroy) => {
          if (released) return
          released = true
          if (destroy === undefined || destroy === false) {
            free()
            return
          }
          void pending
            .then(() => run(db, "ROLLBACK").catch(() => undefined))
            .then(() => run(db, "SELECT pg_advisory_unlock_all()").catch(() => undefined))
            .finally(free)
        }
      }
    }
  }
}
