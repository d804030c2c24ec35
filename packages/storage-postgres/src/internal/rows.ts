/**
 * Rows ↔ records: one mapping per table, from the core's `Tables` (the columns both SQL adapters
 * keep), with column values as the drivers return them converted to what the core's Schemas
 * decode (every row read is decoded, so a malformed row is a StorageError).
 */
import { Audit, StorageError, Tables, type Throttle, type Token } from "@latchkey/core"
import { type Effect, Option, Schema } from "effect"
import { attemptSync } from "./errors.js"
import { cachedTexts } from "./prepared.js"

type Row = Record<string, unknown>

/** `$n` for every parameter, typed `jsonb` for a JSON column: PostgreSQL's placeholders. */
const param = (n: number, column: Tables.Column): string =>
  `$${n + 1}${column.kind === "json" ? "::jsonb" : ""}`

const inserts = new WeakMap<Tables.Table<unknown>, (rows: number) => string>()

/** The statement inserting `rows` rows of `t`, their parameters from `params` one after the other. */
export const insertSql = (t: Tables.Table<unknown>, rows = 1): string => {
  let of = inserts.get(t)
  if (of === undefined) {
    of = cachedTexts((n: number) => Tables.insertSql(t, param, n))
    inserts.set(t, of)
  }
  return of(rows)
}

/** The parameters of `record` for `insertSql(t)`. */
export const params = <A>(t: Tables.Table<A>, record: A): ReadonlyArray<unknown> => Tables.values(t, record)

/** A token's parameters for `insertSql(Tables.tokens, n)`. */
export const tokenParams = (t: Token.Token): ReadonlyArray<unknown> => params(Tables.tokens, t)

/** `SELECT <every column of t> FROM <t>` and what follows it. */
export const selectFrom = (t: Tables.Table<unknown>, rest: string): string =>
  `SELECT ${Tables.selectList(t)} FROM ${t.name} ${rest}`

/** The record of the first of `rows` (read with `selectFrom(t, ...)`), none when there is none. */
export const first = <A>(
  t: Tables.Table<A>,
  rows: ReadonlyArray<Row>
): Effect.Effect<Option.Option<A>, StorageError.StorageError> =>
  attemptSync(() => {
    const row = rows[0]
    return row === undefined ? Option.none() : Option.some(Tables.fromRow(t, row))
  })

/** The records of `rows` (read with `selectFrom(t, ...)`). */
export const all = <A>(
  t: Tables.Table<A>,
  rows: ReadonlyArray<Row>
): Effect.Effect<ReadonlyArray<A>, StorageError.StorageError> =>
  attemptSync(() => rows.map((row) => Tables.fromRow(t, row)))

/** How many rows a statement changed. */
export const changed = (r: { readonly rowCount: number | null }): number => r.rowCount ?? 0

/** The LIMIT of a purge of at most `limit` rows: always bounded, LIMIT 0 deletes nothing. */
export const bound = (limit: number): number =>
  limit > 0 ? Math.min(Math.ceil(limit), Number.MAX_SAFE_INTEGER) : 0

/** A count or other bigint the adapter itself computes; a number, never a wrong one. */
export const count = (value: unknown): number => {
  const n = Tables.num(value)
  if (typeof n !== "number" || !Number.isSafeInteger(n)) {
    throw new StorageError.StorageError({ message: "the database answered a count that is not a number" })
  }
  return n
}

const decodeEvent = Schema.decodeUnknownSync(Audit.AuditEvent)

/** The columns of a throttle entry, for a SELECT. */
export const throttleColumns = `key, failures, last_failure AS "lastFailure", locked_until AS "lockedUntil"`
/** The columns of an audit event, for a SELECT. */
export const eventColumns = `at, type, app_key AS "appKey", user_id AS "userId", open_id AS "openId", address,
  request_id AS "requestId", detail, actor`

/** An audit event. */
export const event = (row: Row): Audit.AuditEvent => decodeEvent({ ...row, at: Tables.num(row.at) })

/** A throttle entry; the counters are the adapter's own, so they are checked, not decoded. */
export const throttleEntry = (row: Row): Throttle.Entry => ({
  failures: count(row.failures),
  lastFailure: count(row.lastFailure),
  lockedUntil: count(row.lockedUntil)
})

/**
 * The statement deleting at most $2 rows of `table` (by `key`, the columns of its primary key)
 * expired at $1, skipping rows another transaction holds: several instances may sweep at once.
 */
export const purgeSql = (table: string, key: ReadonlyArray<string>): string => {
  const columns = key.join(", ")
  return `DELETE FROM ${table} WHERE ${key.length > 1 ? `(${columns})` : columns} IN (SELECT ${columns}
    FROM ${table} WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`
}
