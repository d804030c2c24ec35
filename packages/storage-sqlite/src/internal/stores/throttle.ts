/** The SQLite store of throttle counters; every rule is the core's (`Throttle`). */
import { Throttle } from "@latchkey/core"
import { attempt } from "../database.js"
import { bound } from "../rows.js"
import type { Over } from "./shared.js"

const prepare = ({ db }: Over) => ({
  find: db.prepare(
    "SELECT failures, last_failure AS lastFailure, locked_until AS lockedUntil FROM throttle WHERE key = ?"
  ),
  put: db.prepare(`INSERT INTO throttle (key, failures, last_failure, locked_until)
    VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET failures = excluded.failures,
    last_failure = excluded.last_failure, locked_until = excluded.locked_until`),
  remove: db.prepare("DELETE FROM throttle WHERE key = ?"),
  purge: db.prepare(`DELETE FROM throttle WHERE key IN (SELECT key FROM throttle
    WHERE last_failure <= ? AND locked_until <= ? LIMIT ?)`)
})

/** Counters in the `throttle` table; each change reads and writes them in one write transaction. */
export const throttleStore = (over: Over): Throttle.ThrottleStore["Type"] => {
  const { write } = over
  const q = prepare(over)
  // Throttle entries of `keys`, in order; written back inside the same write transaction.
  const read = (keys: ReadonlyArray<Throttle.Key>) =>
    keys.map((k) => q.find.get(k.key) as Throttle.Entry | undefined)
  const store = (keys: ReadonlyArray<Throttle.Key>, next: ReadonlyArray<Throttle.Entry | null>) =>
    keys.forEach((k, i) => {
      const e = next[i] ?? null
      if (e === null) q.remove.run(k.key)
      else q.put.run(k.key, e.failures, e.lastFailure, e.lockedUntil)
    })
  return {
    // The application store of the same database reads these counters with an application
    counters: over.db,
    lockedFor: (keys, now) => attempt(() => Throttle.lockWait(keys, read(keys), now)),
    fail: (keys, now, policy) =>
      write(() => {
        const { next, started } = Throttle.countFailure(keys, read(keys), now, policy)
        store(keys, next)
        return started
      }),
    // The read and the write are one transaction: attempts from every process are all counted.
    reserve: (keys, now, policy) =>
      write(() => {
        const { reservation, next } = Throttle.reserveAttempt(keys, read(keys), now, policy)
        if (next !== null) store(keys, next)
        return reservation
      }),
    settle: (keys, policy) =>
      write(() => {
        const prev = read(keys)
        store(
          keys,
          keys.map((k, i) => Throttle.afterSuccess(prev[i], k, policy))
        )
      }),
    purgeExpired: (now, window, limit) => write(() => q.purge.run(now - window, now, bound(limit)).changes)
  }
}
