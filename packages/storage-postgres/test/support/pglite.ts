/**
 * Stores over an embedded PGlite, one instance per test file: each layer works in a schema of
 * its own, so every layer is a new, empty store without another WebAssembly start.
 */
import { randomUUID } from "node:crypto"
import { PGlite } from "@electric-sql/pglite"
import { PgliteClient, PostgresStorage } from "@latchkey/storage-postgres"
import { Effect, Layer } from "effect"

let instance: Promise<PGlite> | undefined

/** The PGlite instance of this test file. */
export const pglite = (): Promise<PGlite> => {
  instance ??= PGlite.create()
  return instance
}

/** A schema name nobody used yet. */
export const freshSchema = (): string => `t_${randomUUID().replaceAll("-", "")}`

/** Options of a layer over PGlite (the pool is the adapter's). */
export type PgliteOptions = Omit<PostgresStorage.Options, "pool"> & { readonly schema?: string }

/** A pool over this file's PGlite instance, in `schema` (a fresh one by default). */
export const pglitePool = (schema: string = freshSchema()) =>
  Effect.map(
    Effect.promise(() => pglite()),
    (db) => PgliteClient.make(db, { schema })
  )

/** A layer over this file's PGlite instance, in a fresh schema unless `schema` is given. */
export const pgliteLayer = ({ schema, ...options }: PgliteOptions = {}) =>
  Layer.unwrapEffect(Effect.map(pglitePool(schema), (pool) => PostgresStorage.layer({ ...options, pool })))
