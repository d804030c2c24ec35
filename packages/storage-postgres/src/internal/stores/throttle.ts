/** The PostgreSQL store of throttle counters; every rule is the core's (`Throttle`). */
import { type StorageError, Throttle } from "@latchkey/core"
import { Effect } from "effect"
import type { Database, Tx } from "../database.js"
import { attemptSync } from "../errors.js"
import { bound, changed, throttleColumns, throttleEntry } from "../rows.js"
import type { Over } from "./shared.js"

// Throttle entries of `keys`, in order (a key given twice reads the same entry).
const readThrottle = (
  q: Pick<Tx, "query">,
  keys: ReadonlyArray<Throttle.Key>
): Effect.Effect<ReadonlyArray<Throttle.Entry | undefined>, StorageError.StorageError> =>
  Effect.flatMap(
    q.query(`SELECT ${throttleColumns} FROM throttle WHERE key = ANY($1::text[])`, [keys.map((k) => k.key)]),
    (r) =>
      attemptSync(() => {
        const found = new Map(r.rows.map((row) => [String(row.key), throttleEntry(row)]))
        return keys.map((k) => found.get(k.key))
      })
  )

// The new entries of `keys` (null: delete); of a key given twice the last one counts.
const writeThrottle = (
  tx: Tx,
  keys: ReadonlyArray<Throttle.Key>,
  next: ReadonlyArray<Throttle.Entry | null>
) =>
  Effect.gen(function* () {
    const last = new Map<string, Throttle.Entry | null>()
    keys.forEach((k, i) => {
      last.delete(k.key)
      last.set(k.key, next[i] ?? null)
    })
    const put = [...last].flatMap(([key, e]) => (e === null ? [] : [{ key, ...e }]))
    const drop = [...last].flatMap(([key, e]) => (e === null ? [key] : []))
    if (put.length > 0) {
      yield* tx.query(
        `INSERT INTO throttle (key, failures, last_failure, locked_until)
          SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[])
          ON CONFLICT (key) DO UPDATE SET failures = excluded.failures,
            last_failure = excluded.last_failure, locked_until = excluded.locked_until`,
        [
          put.map((e) => e.key),
          put.map((e) => e.failures),
          put.map((e) => e.lastFailure),
          put.map((e) => e.lockedUntil)
        ]
      )
    }
    if (drop.length > 0) yield* tx.query("DELETE FROM throttle WHERE key = ANY($1::text[])", [drop])
  })

// Read, compute with the core's rules and write back in one transaction, holding the keys'
// advisory locks: attempts on the same keys from every instance queue and are all counted.
const throttled = <A>(
  db: Database,
  keys: ReadonlyArray<Throttle.Key>,
  step: (entries: ReadonlyArray<Throttle.Entry | undefined>) => {
    readonly result: A
    readonly next: ReadonlyArray<Throttle.Entry | null> | null
  }
) =>
  db.transaction(
    (tx) =>
      Effect.gen(function* () {
        const { result, next } = step(yield* readThrottle(tx, keys))
        if (next !== null) yield* writeThrottle(tx, keys, next)
        return result
      }),
    { locks: keys.map((k) => `throttle:${k.key}`) }
  )

/** Counters in the `throttle` table, each change under the advisory locks of its keys. */
export const throttleStore = ({ db }: Over): Throttle.ThrottleStore["Type"] => ({
  // The application store of the same pool reads these counters with an application
  counters: db,
  lockedFor: (keys, now) =>
    Effect.map(readThrottle(db, keys), (entries) => Throttle.lockWait(keys, entries, now)),
  fail: (keys, now, policy) =>
    throttled(db, keys, (entries) => {
      const { next, started } = Throttle.countFailure(keys, entries, now, policy)
      return { result: started, next }
    }),
  reserve: (keys, now, policy) =>
    throttled(db, keys, (entries) => {
      const { reservation, next } = Throttle.reserveAttempt(keys, entries, now, policy)
      return { result: reservation, next }
    }),
  settle: (keys, policy) =>
    throttled(db, keys, (entries) => ({
      result: undefined,
      next: keys.map((k, i) => Throttle.afterSuccess(entries[i], k, policy))
    })),
  purgeExpired: (now, window, limit) =>
    Effect.map(
      db.write(
        `DELETE FROM throttle WHERE key IN (SELECT key FROM throttle
          WHERE last_failure <= $1::bigint - $2::bigint AND locked_until <= $1::bigint
          LIMIT $3 FOR UPDATE SKIP LOCKED)`,
        [now, window, bound(limit)]
      ),
      changed
    )
})
