/**
 * The audit record in the `audit_events` table: append-only, and deleted only once older than
 * the retention in `audit_retention` (both enforced by the trigger of migration 1).
 */
import { type Audit, AuditStore, StorageError } from "@latchkey/core"
import { Context, Effect } from "effect"
import type * as Database from "./database.js"
import type { Tx } from "./database.js"
import { attemptSync } from "./errors.js"
import { cachedTexts } from "./prepared.js"
import * as Rows from "./rows.js"

const eventValues = 9
// The insert of `n` events, its parameters numbered from $(after + 1).
const buildInsertSql = (n: number, after: number): string =>
  `INSERT INTO audit_events (at, type, app_key, user_id, open_id, address, request_id, detail, actor) VALUES ${Array.from(
    { length: n },
    (_, i) =>
      `(${Array.from({ length: eventValues }, (_, k) => `$${after + i * eventValues + k + 1}`).join(", ")})`
  ).join(", ")}`
const insertSqlAfter = cachedTexts((after: number) => cachedTexts((n: number) => buildInsertSql(n, after)))
const insertSql = (n: number, after = 0): string => insertSqlAfter(after)(n)

const eventParams = (events: ReadonlyArray<Audit.AuditEvent>): Array<unknown> =>
  events.flatMap((e) => [
    e.at,
    e.type,
    e.appKey,
    e.userId,
    e.openId,
    e.address,
    e.requestId,
    e.detail,
    e.actor ?? null
  ])

/**
 * The INSERT of `events` (at least one), in order, as a statement whose parameters follow `after`
 * others: the tail of a data-modifying CTE (`Database.writeWithEvents`).
 */
export const eventsStatement = (
  events: ReadonlyArray<Audit.AuditEvent>,
  after: number
): Database.Statement => ({
  text: insertSql(events.length, after),
  values: eventParams(events)
})

/** Append `events`, in order, with one statement of `run` (inside the running transaction). */
export const insertEvents = (
  run: Tx["query"],
  events: ReadonlyArray<Audit.AuditEvent>
): Effect.Effect<void, StorageError.StorageError> =>
  events.length === 0 ? Effect.void : Effect.asVoid(run(insertSql(events.length), eventParams(events)))

// A purge is always bounded; LIMIT 0 deletes nothing.
const bound = (limit: number): number => (limit > 0 ? Math.min(Math.ceil(limit), Number.MAX_SAFE_INTEGER) : 0)

// How many events a read returns: as Array.slice(0, limit) would (NaN and below 1: none).
const taken = (limit: number): number =>
  limit >= 1 ? Math.min(Math.floor(limit), Number.MAX_SAFE_INTEGER) : 0

/**
 * The WHERE clause of `query` and its parameters after the limit ($1), or null when no event can
 * match. Stored times are whole seconds within 2^53, so `at >= since` is `at >= ceil(since)`.
 */
const queryFilter = ({
  appKey,
  type,
  since
}: AuditStore.AuditQuery): { readonly where: string; readonly values: ReadonlyArray<unknown> } | null => {
  const conditions: Array<string> = []
  const values: Array<unknown> = []
  const add = (column: string, operator: string, value: unknown) => {
    values.push(value)
    conditions.push(`${column} ${operator} $${values.length + 1}`)
  }
  if (appKey !== undefined) add("app_key", "=", appKey)
  if (type !== undefined) add("type", "=", type)
  if (since !== undefined && since !== Number.NEGATIVE_INFINITY) {
    if (!(since <= Number.MAX_SAFE_INTEGER)) return null
    add("at", ">=", Math.max(Math.ceil(since), Number.MIN_SAFE_INTEGER))
  }
  return { where: conditions.length === 0 ? "" : `WHERE ${conditions.join(" AND ")}`, values }
}

/** The audit store over `db`. */
export const make = (db: Database.Database): Context.Context<AuditStore.AuditStore> =>
  Context.make(AuditStore.AuditStore, {
    append: (event) =>
      Effect.flatMap(db.eventsAttached, (attached) =>
        attached ? db.transaction((tx) => insertEvents(tx.query, [event])) : insertEvents(db.write, [event])
      ),
    appendWith: (events, write) => db.withEvents(events, write),
    // One statement over audit_events_by_app_at, _by_type_at or _by_at, read backwards.
    query: (filter) => {
      const n = taken(filter.limit)
      const found = queryFilter(filter)
      return n === 0 || found === null
        ? Effect.succeed([])
        : Effect.flatMap(
            db.lookup(
              `SELECT ${Rows.eventColumns} FROM audit_events ${found.where} ORDER BY at DESC, id DESC LIMIT $1`,
              [n, ...found.values]
            ),
            (r) => attemptSync(() => r.rows.map(Rows.event))
          )
    },
    tail: ({ limit, appKey }) => {
      const n = Math.max(0, Math.min(Math.floor(limit), Number.MAX_SAFE_INTEGER))
      return Effect.flatMap(
        appKey === undefined
          ? db.query(
              `SELECT ${Rows.eventColumns} FROM (SELECT * FROM audit_events ORDER BY id DESC LIMIT $1) AS e ORDER BY id`,
              [n]
            )
          : db.lookup(
              `SELECT ${Rows.eventColumns} FROM (SELECT * FROM audit_events WHERE app_key = $2
                ORDER BY id DESC LIMIT $1) AS e ORDER BY id`,
              [n, appKey]
            ),
        (r) => attemptSync(() => r.rows.map(Rows.event))
      )
    },
    // Refused as a whole, before the trigger would refuse a row, when the cutoff is inside the
    // retention by the database's clock (the trigger's now(), the same in this transaction).
    purgeBefore: (cutoff, limit) =>
      db.transaction((tx) =>
        Effect.gen(function* () {
          const found =
            yield* tx.query(`SELECT seconds, floor(extract(epoch FROM now()))::bigint - seconds AS horizon
            FROM audit_retention WHERE id = 1`)
          const row = found.rows[0]
          if (row === undefined) {
            return yield* Effect.fail(
              new StorageError.StorageError({ message: "the audit retention is missing from the database" })
            )
          }
          const { seconds, horizon } = yield* attemptSync(() => ({
            seconds: Rows.count(row.seconds),
            horizon: Rows.count(row.horizon)
          }))
          if (!(cutoff <= horizon)) {
            return yield* Effect.fail(
              new StorageError.StorageError({
                message: `audit events inside the retention (${seconds / 86400} days) cannot be purged`
              })
            )
          }
          const deleted = yield* tx.query(
            `DELETE FROM audit_events WHERE id IN
              (SELECT id FROM audit_events WHERE at < $1 ORDER BY at, id LIMIT $2 FOR UPDATE SKIP LOCKED)`,
            [cutoff, bound(limit)]
          )
          return deleted.rowCount ?? 0
        })
      )
  })
