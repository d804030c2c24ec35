/**
 * Group commit: the writes queued within one turn of the event loop run in one
 * transaction, each in its own savepoint, and commit together with one fsync.
 * Every caller resumes only after that commit, so no response can be sent for a
 * write that a crash could still lose.
 */
import type { Audit, StorageError as StorageErrors } from "@latchkey/core"
import type BetterSqlite3 from "better-sqlite3"
import { Effect, FiberRef } from "effect"
import { toStorageError } from "./database.js"

/** Thrown inside a job to refuse the write with a domain outcome: its savepoint is rolled back. */
class Refusal<E> {
  constructor(readonly error: E) {}
}

/** Refuse the current job with a domain error (e.g. `CodeAlreadyUsed`); nothing it wrote is kept. */
export const refuse = <E>(error: E): never => {
  throw new Refusal(error)
}

type Result = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown }

interface Job {
  readonly run: () => unknown
  readonly done: (result: Result) => void
}

/** Audit events to store in the transaction of the next write of this fiber (see `withEvents`). */
const attached = FiberRef.unsafeMake<ReadonlyArray<Audit.AuditEvent>>([])

/** The group-commit queue of one connection. */
export interface Writer {
  /**
   * Run `work` in the next group transaction and succeed with its result once that
   * transaction has committed. A thrown `refuse(e)` fails with `e`; anything else
   * thrown, or a failed commit, fails with StorageError. Audit events attached with
   * `withEvents` are inserted in the same savepoint, after `work` succeeded.
   */
  readonly write: <A, E = never>(work: () => A) => Effect.Effect<A, E | StorageErrors.StorageError>
  /** Run `effect`, one write, with `events` stored in its transaction. */
  readonly withEvents: <A, E>(
    events: ReadonlyArray<Audit.AuditEvent>,
    effect: Effect.Effect<A, E>
  ) => Effect.Effect<A, E>
  /** Commit whatever is queued now, then refuse further writes. */
  readonly close: () => void
}

/** A writer over `db`; `insertEvent` stores one audit event (inside the running transaction). */
export const make = (db: BetterSqlite3.Database, insertEvent: (event: Audit.AuditEvent) => void): Writer => {
  const begin = db.prepare("BEGIN IMMEDIATE")
  const commit = db.prepare("COMMIT")
  const rollback = db.prepare("ROLLBACK")
  const savepoint = db.prepare("SAVEPOINT job")
  const release = db.prepare("RELEASE job")
  const rollbackTo = db.prepare("ROLLBACK TO job")
  let queue: Array<Job> = []
  let scheduled = false
  let closed = false

  const fail = (error: unknown): Result => ({
    ok: false,
    error: error instanceof Refusal ? error : toStorageError(error)
  })

  // One job in its own savepoint: a failure undoes only what this job wrote.
  const inSavepoint = (job: Job): Result => {
    savepoint.run()
    try {
      const value = job.run()
      release.run()
      return { ok: true, value }
    } catch (e) {
      rollbackTo.run()
      release.run()
      return fail(e)
    }
  }

  // Every job in one transaction (a lone job needs no savepoint: the transaction is its own).
  // Throws, after rolling back, when the transaction as a whole fails.
  const transact = (jobs: ReadonlyArray<Job>): ReadonlyArray<Result> => {
    begin.run()
    try {
      const results =
        jobs.length === 1 ? [{ ok: true, value: (jobs[0] as Job).run() } as const] : jobs.map(inSavepoint)
      commit.run()
      return results
    } catch (e) {
      try {
        if (db.inTransaction) rollback.run()
      } catch {
        // the connection already rolled back (e.g. after an I/O error)
      }
      throw e
    }
  }

  const flush = (): void => {
    scheduled = false
    const jobs = queue
    queue = []
    if (jobs.length === 0) return
    let results: ReadonlyArray<Result>
    try {
      results = transact(jobs)
    } catch (e) {
      const failed = fail(e)
      results = jobs.map(() => failed)
    }
    for (let i = 0; i < jobs.length; i++) (jobs[i] as Job).done(results[i] as Result)
  }

  const enqueue = (job: Job): void => {
    queue.push(job)
    if (!scheduled) {
      scheduled = true
      // After the current turn's I/O callbacks: everything they queued shares one commit.
      setImmediate(flush)
    }
  }

  return {
    write: <A, E = never>(work: () => A): Effect.Effect<A, E | StorageErrors.StorageError> =>
      Effect.flatMap(FiberRef.get(attached), (events) =>
        Effect.async<A, E | StorageErrors.StorageError>((resume) => {
          if (closed) {
            resume(Effect.fail(toStorageError(new Error("the database is closed"))))
            return
          }
          const run =
            events.length === 0
              ? work
              : () => {
                  const value = work()
                  for (const event of events) insertEvent(event)
                  return value
                }
          enqueue({
            run,
            done: (result) =>
              resume(
                result.ok
                  ? Effect.succeed(result.value as A)
                  : Effect.fail(
                      result.error instanceof Refusal
                        ? (result.error.error as E)
                        : (result.error as StorageErrors.StorageError)
                    )
              )
          })
        })
      ),
    withEvents: (events, effect) => Effect.locally(effect, attached, events),
    close: () => {
      flush()
      closed = true
    }
  }
}
