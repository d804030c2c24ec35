/**
 * Group commit: the writes queued within one turn of the event loop run in one
 * transaction, each in its own savepoint, and commit together with one fsync.
 * Every caller resumes only after that commit is durable, so no response can be sent
 * for a write that a crash could still lose.
 *
 * With a `WalSync` (a database file in WAL mode with synchronous=FULL), the group transaction
 * commits with synchronous=NORMAL (its WAL frames written, not yet flushed) and the WAL file is
 * then flushed off the event loop (fdatasync on the thread pool): the callers resume once that
 * flush is done, exactly when FULL's own flush at commit would have let them, while the event
 * loop goes on parsing and answering other requests instead of waiting for the disk.
 */
import { type Audit, FiberSlot, type StorageError as StorageErrors } from "@latchkey/core"
import type BetterSqlite3 from "better-sqlite3"
import { Cause, Effect, Exit, type Fiber, FiberRef, type FiberStatus, Option, Runtime } from "effect"
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

const none: ReadonlyArray<Audit.AuditEvent> = []

/** Audit events to store in the transaction of the next write of this fiber (see `withEvents`). */
const attached = FiberSlot.make(none)

/** The group-commit queue of one connection. */
export interface Writer {
  /**
   * Run `work` in the next group transaction and succeed with its result once that
   * transaction has committed. A thrown `refuse(e)` fails with `e`; anything else
   * thrown, or a failed commit, fails with StorageError. Audit events attached with
   * `withEvents` are inserted in the same savepoint, after `work` succeeded (the first write of
   * the attached effect takes them).
   */
  readonly write: <A, E = never>(work: () => A) => Effect.Effect<A, E | StorageErrors.StorageError>
  /**
   * Run `unit`, store calls of this connection and synchronous steps, as one write: synchronously
   * inside one job of the next group transaction, each of its writes in a savepoint of that job.
   * A failure of `unit` rolls back all it wrote; a `unit` that suspends fails with StorageError.
   */
  readonly unit: <A, E>(unit: Effect.Effect<A, E>) => Effect.Effect<A, E | StorageErrors.StorageError>
  /**
   * Run `effect`, one write, with `events` stored in its transaction. Events that no write of
   * `effect` took (it failed, or was interrupted, before writing) are dropped when it ends.
   */
  readonly withEvents: <A, E, R>(
    events: ReadonlyArray<Audit.AuditEvent>,
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
  /** Commit whatever is queued now, then refuse further writes. */
  readonly close: () => void
}

/**
 * Flushes the WAL file to disk off the event loop: `flush(done)` calls `done` once every WAL
 * frame written before the call is durable (or with the error), `close()` once no flush is pending.
 */
export interface WalSync {
  readonly flush: (done: (error: Error | null) => void) => void
  readonly close: () => void
}

/** The statements of the group transactions of `db`, prepared once. */
const statementsOf = (db: BetterSqlite3.Database) => ({
  deferSync: db.prepare("PRAGMA synchronous = NORMAL"),
  fullSync: db.prepare("PRAGMA synchronous = FULL"),
  begin: db.prepare("BEGIN IMMEDIATE"),
  commit: db.prepare("COMMIT"),
  rollback: db.prepare("ROLLBACK"),
  savepoint: db.prepare("SAVEPOINT job"),
  release: db.prepare("RELEASE job"),
  rollbackTo: db.prepare("ROLLBACK TO job")
})

type Statements = ReturnType<typeof statementsOf>

/** The result of a failed job: its refusal, or a StorageError. */
const fail = (error: unknown): Result => ({
  ok: false,
  error: error instanceof Refusal ? error : toStorageError(error)
})

/** One job in its own savepoint: a failure undoes only what this job wrote. */
const inSavepoint = (s: Statements, job: Job): Result => {
  s.savepoint.run()
  try {
    const value = job.run()
    s.release.run()
    return { ok: true, value }
  } catch (e) {
    s.rollbackTo.run()
    s.release.run()
    return fail(e)
  }
}

/**
 * Every job in one transaction (a lone job needs no savepoint: the transaction is its own).
 * Throws, after rolling back, when the transaction as a whole fails.
 */
const transact = (
  db: BetterSqlite3.Database,
  s: Statements,
  jobs: ReadonlyArray<Job>
): ReadonlyArray<Result> => {
  s.begin.run()
  try {
    const results =
      jobs.length === 1
        ? [{ ok: true, value: (jobs[0] as Job).run() } as const]
        : jobs.map((job) => inSavepoint(s, job))
    s.commit.run()
    return results
  } catch (e) {
    try {
      if (db.inTransaction) s.rollback.run()
    } catch {
      // the connection already rolled back (e.g. after an I/O error)
    }
    throw e
  }
}

/** The results of `jobs` run in one transaction: each its own, or all the failure of the transaction. */
const runAll = (
  db: BetterSqlite3.Database,
  s: Statements,
  jobs: ReadonlyArray<Job>
): ReadonlyArray<Result> => {
  try {
    return transact(db, s, jobs)
  } catch (e) {
    const failed = fail(e)
    return jobs.map(() => failed)
  }
}

/** What a write runs: `work`, then the insertion of the audit events attached to it. */
const withAttached = <A>(
  work: () => A,
  events: ReadonlyArray<Audit.AuditEvent>,
  insertEvents: (events: ReadonlyArray<Audit.AuditEvent>) => void
): (() => A) =>
  events.length === 0
    ? work
    : () => {
        const value = work()
        insertEvents(events)
        return value
      }

/** `work` in a savepoint of the running transaction: its result, or its failure with nothing it wrote kept. */
const nested = <A, E>(
  db: BetterSqlite3.Database,
  work: () => A
): Exit.Exit<A, E | StorageErrors.StorageError> => {
  try {
    return Exit.succeed(db.transaction(work)())
  } catch (e) {
    return Exit.fail(e instanceof Refusal ? (e.error as E) : toStorageError(e))
  }
}

/** The outcome of a write from its job's result: its value, its refusal's error, or a StorageError. */
const outcome = <A, E>(result: Result): Effect.Effect<A, E | StorageErrors.StorageError> =>
  result.ok
    ? Effect.succeed(result.value as A)
    : Effect.fail(
        result.error instanceof Refusal
          ? (result.error.error as E)
          : (result.error as StorageErrors.StorageError)
      )

/** Hand each job its result. */
const settle = (jobs: ReadonlyArray<Job>, results: ReadonlyArray<Result>): void => {
  for (let i = 0; i < jobs.length; i++) (jobs[i] as Job).done(results[i] as Result)
}

/**
 * The results of `jobs`, committed with synchronous=NORMAL, handed over once `wal` flushed the
 * frames of that commit; every job fails with StorageError when the flush fails (its commit may or
 * may not survive a power loss, so it is not answered as done).
 */
const runDeferred = (
  db: BetterSqlite3.Database,
  s: Statements,
  jobs: ReadonlyArray<Job>,
  wal: WalSync
): void => {
  s.deferSync.run()
  let results: ReadonlyArray<Result>
  try {
    results = runAll(db, s, jobs)
  } finally {
    s.fullSync.run()
  }
  if (!results.some((r) => r.ok)) {
    // Nothing was committed: nothing to wait for
    settle(jobs, results)
    return
  }
  wal.flush((error) => {
    if (error === null) settle(jobs, results)
    else
      settle(
        jobs,
        results.map(() => fail(error))
      )
  })
}

/** What a unit's job answers for the unit's exit: its value, a refusal with its failure, or a throw. */
const unitResult = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isSuccess(exit)) return exit.value
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) return refuse(failure.value)
  throw Cause.squash(exit.cause)
}

/**
 * A runtime with the services, FiberRefs and runtime flags of `fiber`: a unit runs on a fiber of
 * its own (synchronously, inside its job) as if it ran on the caller's.
 */
const callerRuntime = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  status: FiberStatus.Running
): Runtime.Runtime<never> =>
  Runtime.make({
    context: fiber.getFiberRef(FiberRef.currentContext),
    runtimeFlags: status.runtimeFlags,
    fiberRefs: fiber.getFiberRefs()
  })

/**
 * A writer over `db`; `insertEvents` stores audit events (inside the running transaction). With
 * `wal`, each group transaction's flush to disk happens off the event loop (see the module).
 */
export const make = (
  db: BetterSqlite3.Database,
  insertEvents: (events: ReadonlyArray<Audit.AuditEvent>) => void,
  wal: WalSync | null = null
): Writer => {
  const s = statementsOf(db)
  let queue: Array<Job> = []
  let scheduled = false
  let closed = false
  // Set while a unit runs inside a job (synchronously): its writes run at once, in the job's
  // transaction. Nothing else runs meanwhile, so whatever writes then is part of that unit.
  let inUnit = false

  const flush = (): void => {
    scheduled = false
    const jobs = queue
    queue = []
    if (jobs.length === 0) return
    if (wal === null || closed) settle(jobs, runAll(db, s, jobs))
    else runDeferred(db, s, jobs, wal)
  }

  const enqueue = (job: Job): void => {
    queue.push(job)
    if (!scheduled) {
      scheduled = true
      // After the current turn's I/O callbacks: everything they queued shares one commit.
      setImmediate(flush)
    }
  }

  /** `run` as a job of the next group transaction, or at once inside the running unit's. */
  const submit = <A, E>(run: () => A): Effect.Effect<A, E | StorageErrors.StorageError> =>
    inUnit
      ? nested<A, E>(db, run)
      : Effect.async<A, E | StorageErrors.StorageError>((resume) => {
          if (closed) {
            resume(Effect.fail(toStorageError(new Error("the database is closed"))))
            return
          }
          enqueue({ run, done: (result) => resume(outcome<A, E>(result)) })
        })

  const write = <A, E = never>(work: () => A): Effect.Effect<A, E | StorageErrors.StorageError> =>
    Effect.withFiberRuntime<A, E | StorageErrors.StorageError>((fiber) =>
      submit<A, E>(withAttached(work, attached.take(fiber), insertEvents))
    )

  /** Run `effect` synchronously, as the running unit (see `unitResult`). */
  const runUnit = <A, E>(runtime: Runtime.Runtime<never>, effect: Effect.Effect<A, E>): A => {
    inUnit = true
    try {
      return unitResult(Runtime.runSyncExit(runtime, effect))
    } finally {
      inUnit = false
    }
  }

  const unit = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | StorageErrors.StorageError> =>
    Effect.withFiberRuntime<A, E | StorageErrors.StorageError>((fiber, status) => {
      if (inUnit) return effect
      // Taken before the unit's fiber copies this one's FiberRefs: stored once, by the job
      const events = attached.take(fiber)
      const runtime = callerRuntime(fiber, status)
      return submit<A, E>(withAttached(() => runUnit(runtime, effect), events, insertEvents))
    })

  return {
    write,
    unit,
    withEvents: attached.around,
    close: () => {
      // The last group commits with synchronous=FULL, on the spot
      closed = true
      flush()
      wal?.close()
    }
  }
}
