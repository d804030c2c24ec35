/**
 * Rows ↔ records: one mapping per table, from the core's `Tables` (the columns both SQL adapters
 * keep). Every row read is decoded, so a malformed row is a StorageError (see `toStorageError`).
 */
import { Tables, type Token } from "@latchkey/core"
import { Option } from "effect"

/** `?` for every parameter: SQLite's placeholders. */
const param = () => "?"

/** The statement inserting `rows` rows of `t` (one by default), their parameters from `params`, one after the other. */
export const insertSql = (t: Tables.Table<unknown>, rows = 1): string => Tables.insertSql(t, param, rows)

/** The parameters of `record` for `insertSql(t)`: SQLite has no boolean, so true and false are 1 and 0. */
export const params = <A>(t: Tables.Table<A>, record: A): Array<unknown> => [
  ...Tables.asIntegers(Tables.values(t, record))
]

/** A token's parameters for `insertSql(Tables.tokens)`. */
export const tokenParams = (t: Token.Token): Array<unknown> => params(Tables.tokens, t)

/** `SELECT <every column of t> FROM <t>` and what follows it. */
export const selectFrom = (t: Tables.Table<unknown>, rest: string): string =>
  `SELECT ${Tables.selectList(t)} FROM ${t.name} ${rest}`

/** The record of a row read with `selectFrom(t, ...)`, none when there is no row. */
export const optional = <A>(t: Tables.Table<A>, row: unknown): Option.Option<A> =>
  row === undefined ? Option.none() : Option.some(Tables.fromRow(t, row as Record<string, unknown>))

/** The records of rows read with `selectFrom(t, ...)`. */
export const all = <A>(t: Tables.Table<A>, rows: ReadonlyArray<unknown>): Array<A> =>
  rows.map((row) => Tables.fromRow(t, row as Record<string, unknown>))

// SQLite reads a negative LIMIT as "no limit"; a purge is always bounded.
/** The LIMIT of a purge of at most `limit` rows. */
export const bound = (limit: number): number => (limit > 0 ? Math.ceil(limit) : 0)

/** The statement deleting at most `?` (the second parameter) rows of `table` expired at `?` (the first). */
export const purgeSql = (table: string): string =>
  `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE expires_at <= ? LIMIT ?)`
