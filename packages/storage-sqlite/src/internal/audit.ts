/**
 * The append-only audit record in the `audit_events` table.
 */
import { Audit, AuditStore } from "@latchkey/core"
import type BetterSqlite3 from "better-sqlite3"
import { Context, Schema } from "effect"
import { attempt } from "./database.js"
import type { Writer } from "./writer.js"

const decodeEvent = Schema.decodeUnknownSync(Audit.AuditEvent)
const columns = `at, type, app_key AS appKey, user_id AS userId, open_id AS openId, address,
  request_id AS requestId, detail`

/** The statement appending one event, run inside a writer's transaction. */
export const inserter = (db: BetterSqlite3.Database): ((event: Audit.AuditEvent) => void) => {
  const insert =
    db.prepare(`INSERT INTO audit_events (at, type, app_key, user_id, open_id, address, request_id, detail)
    VALUES (@at, @type, @appKey, @userId, @openId, @address, @requestId, @detail)`)
  return (event) => void insert.run(event)
}

/** Prepare the statements and build the audit store over `db`; appends go through `writer`. */
export const make = (
  db: BetterSqlite3.Database,
  writer: Writer,
  insert: (event: Audit.AuditEvent) => void
): Context.Context<AuditStore.AuditStore> => {
  const tailAll = db.prepare(
    `SELECT ${columns} FROM (SELECT * FROM audit_events ORDER BY id DESC LIMIT ?) ORDER BY id`
  )
  const tailApp = db.prepare(
    `SELECT ${columns} FROM (SELECT * FROM audit_events WHERE app_key = ? ORDER BY id DESC LIMIT ?) ORDER BY id`
  )
  return Context.make(AuditStore.AuditStore, {
    append: (event) => writer.write(() => insert(event)),
    appendWith: (events, write) => writer.withEvents(events, write),
    tail: ({ limit, appKey }) =>
      attempt(() => {
        const n = Math.max(0, Math.floor(limit))
        const rows = appKey === undefined ? tailAll.all(n) : tailApp.all(appKey, n)
        return rows.map((row) => decodeEvent(row))
      })
  })
}
