/**
 * Statements of a unit (`Database.unit`): every store call of it runs in the unit's one
 * transaction, a store's own transaction as a savepoint of it.
 */
import type { Audit, StorageError } from "@latchkey/core"
import { Effect, Exit } from "effect"
import type { EventWrites, QueryResult, Tx } from "./database.js"

type InsertEvents = EventWrites["insert"]

// Advisory locks on names (`Database`'s session-level ones, a unit's transaction-level ones), taken
// in one order (of their 64-bit hash) so two callers never wait for each other in a cycle. Names
// are per schema (the one the tables are in, or the search_path while it does not exist yet), so
// stores in different schemas of one database do not wait for each other.
export const lockKey = `hashtextextended('latchkey:' || coalesce(current_schema(), current_setting('search_path'))
  || ':' || name, 0)`
// Inside a unit's transaction: held until it ends
const xactLock = `SELECT count(pg_advisory_xact_lock(h)) AS n FROM (SELECT DISTINCT ${lockKey} AS h
  FROM unnest($1::text[]) AS name ORDER BY h) AS locks`

/**
 * `body` as a savepoint of the unit's transaction `tx`, after the advisory `locks` (held until
 * that transaction ends), with `events` inserted after it: a failure undoes only what it wrote.
 */
export const savepoint = <A, E>(
  tx: Tx,
  body: (tx: Tx) => Effect.Effect<A, E | StorageError.StorageError>,
  events: ReadonlyArray<Audit.AuditEvent>,
  locks: ReadonlyArray<string>,
  insertEvents: InsertEvents
): Effect.Effect<A, E | StorageError.StorageError> =>
  Effect.gen(function* () {
    if (locks.length > 0) yield* tx.query(xactLock, [locks])
    yield* tx.query("SAVEPOINT latchkey")
    const exit = yield* Effect.exit(
      Effect.flatMap(body(tx), (value) =>
        events.length === 0 ? Effect.succeed(value) : Effect.as(insertEvents(tx, events), value)
      )
    )
    yield* tx.query(Exit.isSuccess(exit) ? "RELEASE SAVEPOINT latchkey" : "ROLLBACK TO SAVEPOINT latchkey")
    return yield* exit
  })

/** One write statement in the unit's transaction `tx`, with `events` inserted after it. */
export const joinedWrite = (
  tx: Tx,
  text: string,
  values: ReadonlyArray<unknown>,
  events: ReadonlyArray<Audit.AuditEvent>,
  insertEvents: InsertEvents
): Effect.Effect<QueryResult, StorageError.StorageError> =>
  events.length === 0
    ? tx.query(text, values)
    : Effect.tap(tx.query(text, values), () => insertEvents(tx, events))
