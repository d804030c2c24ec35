/**
 * The audit record in the `audit_events` table: append-only, and deleted only once older
 * than the retention in `audit_retention` (both enforced by triggers, migrations 2 and 7).
 */
import { Audit, AuditStore, StorageError } from "@latchkey/core"
import type BetterSqlite3 from "better-sqlite3"
import { Context, Schema } from "effect"
import { attempt } from "./database.js"
import type { Writer } from "./writer.js"

const decodeEvent = Schema.decodeUnknownSync(Audit.AuditEvent)
const columns = `at, type, app_key AS appKey, user_id AS userId, open_id AS openId, address,
  request_id AS requestId, detail, actor`

/**
 * The statements appending events, run inside a writer's transaction: a write's two events (a
 * refresh token's rotation and its new tokens) in one statement, others one statement each.
 */
export const inserter = (db: BetterSqlite3.Database): ((events: ReadonlyArray<Audit.AuditEvent>) => void) => {
  const rows = (n: number) => Array.from({ length: n }, () => "(?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")
  const names = "at, type, app_key, user_id, open_id, address, request_id, detail, actor"
  const one = db.prepare(`INSERT INTO audit_events (${names}) VALUES ${rows(1)}`)
  const two = db.prepare(`INSERT INTO audit_events (${names}) VALUES ${rows(2)}`)
  // Positional parameters: binding by name looks each one up on every insert. An event without
  // an actor (built before events had one) is stored with NULL.
  const values = (event: Audit.AuditEvent): Array<unknown> => [
    event.at,
    event.type,
    event.appKey,
    event.userId,
    event.openId,
    event.address,
    event.requestId,
    event.detail,
    event.actor ?? null
  ]
  return (events) => {
    const [first, second] = events
    if (events.length === 2 && first !== undefined && second !== undefined)
      two.run([...values(first), ...values(second)])
    else for (const event of events) one.run(values(event))
  }
}

// A purge is always bounded (SQLite reads a negative LIMIT as "no limit").
const bound = (limit: number): number => (limit > 0 ? Math.min(Math.ceil(limit), Number.MAX_SAFE_INTEGER) : 0)
// How many events a read returns: a limit that is not positive returns none, a fraction rounds down.
const count = (limit: number): number =>
  limit > 0 ? Math.min(Math.floor(limit), Number.MAX_SAFE_INTEGER) : 0

/**
 * The statements of `AuditStore.query`, one per combination of filters, each prepared at open so
 * that it can use its index: `audit_events_by_at` without a filter, `audit_events_by_type`
 * (type, at) for one type, `audit_events_by_app` for one application.
 */
const queries = (
  db: BetterSqlite3.Database
): ((filter: AuditStore.AuditQuery) => BetterSqlite3.Statement) => {
  const conditions = ["app_key = @appKey", "type = @type", "at >= @since"] as const
  const statements = Array.from({ length: 8 }, (_, bits) => {
    const where = conditions.filter((_, i) => (bits & (1 << i)) !== 0)
    return db.prepare(`SELECT ${columns} FROM audit_events
      ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY at DESC, id DESC LIMIT @limit`)
  })
  return (filter) =>
    statements[
      (filter.appKey !== undefined ? 1 : 0) |
        (filter.type !== undefined ? 2 : 0) |
        (filter.since !== undefined ? 4 : 0)
    ] as BetterSqlite3.Statement
}

/** Prepare the statements and build the audit store over `db`; appends go through `writer`. */
export const make = (
  db: BetterSqlite3.Database,
  writer: Writer,
  insert: (events: ReadonlyArray<Audit.AuditEvent>) => void
): Context.Context<AuditStore.AuditStore> => {
  const tailAll = db.prepare(
    `SELECT ${columns} FROM (SELECT * FROM audit_events ORDER BY id DESC LIMIT ?) ORDER BY id`
  )
  const tailApp = db.prepare(
    `SELECT ${columns} FROM (SELECT * FROM audit_events WHERE app_key = ? ORDER BY id DESC LIMIT ?) ORDER BY id`
  )
  // The oldest instant still inside the retention, by the database's clock (as the trigger reads it).
  const retention = db.prepare(`SELECT seconds, CAST(strftime('%s', 'now') AS INTEGER) - seconds AS horizon
    FROM audit_retention WHERE id = 1`)
  const query = queries(db)
  const purge = db.prepare(`DELETE FROM audit_events WHERE id IN
    (SELECT id FROM audit_events WHERE at < ? ORDER BY at, id LIMIT ?)`)
  return Context.make(AuditStore.AuditStore, {
    append: (event) => writer.write(() => insert([event])),
    appendWith: (events, write) => writer.withEvents(events, write),
    tail: ({ limit, appKey }) =>
      attempt(() => {
        const n = count(limit)
        const rows = appKey === undefined ? tailAll.all(n) : tailApp.all(appKey, n)
        return rows.map((row) => decodeEvent(row))
      }),
    // Newest first: by at, then by id, the order appended.
    query: (filter) =>
      attempt(() =>
        query(filter)
          .all({
            limit: count(filter.limit),
            ...(filter.appKey !== undefined ? { appKey: filter.appKey } : {}),
            ...(filter.type !== undefined ? { type: filter.type } : {}),
            ...(filter.since !== undefined ? { since: filter.since } : {})
          })
          .map((row) => decodeEvent(row))
      ),
    // Refused as a whole, before the trigger would refuse a row, when the cutoff is inside the
    // retention: nothing is deleted, even the rows that are outside it.
    purgeBefore: (cutoff, limit) =>
      writer.write(() => {
        const found = retention.get() as { seconds: number; horizon: number } | undefined
        if (found === undefined) {
          throw new StorageError.StorageError({ message: "the audit retention is missing from the database" })
        }
        if (!(cutoff <= found.horizon)) {
          throw new StorageError.StorageError({
            message: `audit events inside the retention (${found.seconds / 86400} days) cannot be purged`
          })
        }
        return purge.run(cutoff, bound(limit)).changes
      })
  })
}
