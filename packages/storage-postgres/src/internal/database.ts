/**
 * Connections and transactions: the subset of node-postgres' Pool the adapter calls, and
 * transactions retried on serialization failures and deadlocks (the driver's errors mapped to
 * the core's StorageError by errors.ts).
 */
import { type Audit, FiberSlot, StorageError } from "@latchkey/core"
import { Cause, Clock, Duration, Effect, Exit, Option, Schedule } from "effect"
import { attempt, isConflict, isUnstorableValue, lostConnection } from "./errors.js"
import { send } from "./prepared.js"
import { joinedWrite, lockKey, savepoint } from "./units.js"
import { withEventsText, writeAndEvents } from "./withEvents.js"

/** What a query answers: the rows, and how many rows a write changed. */
export interface QueryResult {
  readonly rows: ReadonlyArray<Record<string, unknown>>
  readonly rowCount: number | null
}

/**
 * A statement with its parameters, and the name it is prepared under (node-postgres'
 * `QueryConfig`): a connection parses a named statement the first time it runs it and then only
 * binds and executes it. A statement without a name is parsed and planned on every run.
 */
export interface QueryConfig {
  readonly name?: string
  readonly text: string
  readonly values?: Array<unknown>
}

/** A connection checked out of a pool (node-postgres' `PoolClient`, or `PgliteClient`'s). */
export interface PoolClient {
  query(text: string, values?: Array<unknown>): Promise<QueryResult>
  query(config: QueryConfig): Promise<QueryResult>
  /** Give the connection back; with an argument the pool closes it instead of keeping it. */
  release(destroy?: Error | boolean): void
  on?(event: "error", listener: (error: Error) => void): unknown
  removeListener?(event: "error", listener: (error: Error) => void): unknown
}

/**
 * The part of a connection pool the adapter uses: node-postgres' `Pool` has it, and so has
 * `PgliteClient.make(db)` for tests over an embedded PGlite.
 */
export interface Pool {
  query(text: string, values?: Array<unknown>): Promise<QueryResult>
  query(config: QueryConfig): Promise<QueryResult>
  connect(): Promise<PoolClient>
  on?(event: "error", listener: (error: Error) => void): unknown
  removeListener?(event: "error", listener: (error: Error) => void): unknown
}

/** How often, and how patiently, a transaction that hit a serialization failure or a deadlock runs again. */
export interface RetryPolicy {
  /** Runs in all, the first included (default 8). */
  readonly attempts: number
  /** Delay before the first rerun, doubled for each next one, with jitter (default 2 ms). */
  readonly baseDelay: Duration.DurationInput
  /** Longest delay between two runs (default 100 ms). */
  readonly maxDelay: Duration.DurationInput
}

export const defaultRetryPolicy: RetryPolicy = { attempts: 8, baseDelay: "2 millis", maxDelay: "100 millis" }

/**
 * Run `effect` again while it fails with a serialization failure (40001) or a deadlock (40P01),
 * at most `policy.attempts` times in all, waiting on `clock` (default: the fiber's Clock) between
 * runs (exponential, with jitter, capped). Past the bound the conflict becomes a StorageError
 * saying so: it is never answered as anything else. The schedule is built once a run conflicted:
 * a run that does not conflict costs one failure handler, nothing more.
 */
export const retryConflicts = <A, E>(
  effect: Effect.Effect<A, E | StorageError.StorageError>,
  policy: RetryPolicy = defaultRetryPolicy,
  clock?: Clock.Clock
): Effect.Effect<A, E | StorageError.StorageError> => {
  const isRetryable = (e: E | StorageError.StorageError): boolean =>
    e instanceof StorageError.StorageError && isConflict(e.cause)
  const rerun = (first: E | StorageError.StorageError) => {
    const cap = Duration.decode(policy.maxDelay)
    const schedule = Schedule.exponential(policy.baseDelay).pipe(
      Schedule.jittered,
      Schedule.modifyDelay((d) => Duration.min(d, cap)),
      Schedule.intersect(Schedule.recurs(Math.max(0, policy.attempts - 1)))
    )
    // The first run's failure, answered again to the schedule as if that run were under it
    let replay: Option.Option<E | StorageError.StorageError> = Option.some(first)
    const runs = Effect.suspend(() => {
      const failed = replay
      replay = Option.none()
      return Option.isSome(failed) ? Effect.fail(failed.value) : effect
    })
    const reruns = runs.pipe(
      Effect.retry({ schedule, while: isRetryable }),
      Effect.catchIf(isRetryable, (e) =>
        Effect.fail(
          new StorageError.StorageError({
            message: `the transaction kept conflicting with concurrent ones; gave up after ${policy.attempts} attempts`,
            cause: e instanceof StorageError.StorageError ? e.cause : e
          })
        )
      )
    )
    return clock === undefined ? reruns : Effect.withClock(reruns, clock)
  }
  return Effect.catchIf(effect, isRetryable, rerun)
}

/** One connection inside a transaction. */
export interface Tx {
  readonly query: (
    text: string,
    values?: ReadonlyArray<unknown>
  ) => Effect.Effect<QueryResult, StorageError.StorageError>
  /**
   * One write statement whose answer the caller does not read, carrying the transaction's audit
   * events (`WITH written AS (text) INSERT INTO audit_events …`) so they need no statement of
   * their own after the body; alone when there are none, or when an earlier statement took them.
   */
  readonly writeWithEvents: (
    text: string,
    values: ReadonlyArray<unknown>
  ) => Effect.Effect<void, StorageError.StorageError>
}

const none: ReadonlyArray<Audit.AuditEvent> = []

/** Audit events to store in the transaction of the next write of this fiber (see `withEvents`). */
const attached = FiberSlot.make(none)

/**
 * The live clock: the delays between reruns of a conflicting transaction are real time (the
 * database's locks are), also under a test clock that only moves when a test moves it.
 */
const liveClock = Clock.make()

const lockSql = (fn: "pg_advisory_lock" | "pg_advisory_unlock") =>
  `SELECT count(${fn}(h)) AS n FROM (SELECT DISTINCT ${lockKey} AS h FROM unnest($1::text[]) AS name ORDER BY h) AS locks`
const lock = lockSql("pg_advisory_lock")
const unlock = lockSql("pg_advisory_unlock")

/** Options of one transaction. */
export interface TransactionOptions {
  /**
   * Names to hold a session-level advisory lock on from before BEGIN until after COMMIT. Taken
   * before the transaction's snapshot, they make callers on the same names queue instead of
   * conflicting: under SERIALIZABLE (or REPEATABLE READ) each one then reads what the one before
   * committed, and hot rows (a throttle counter, the session eviction) are not retried in a herd.
   */
  readonly locks?: ReadonlyArray<string>
}

/** The transactions and single statements of one store, over one pool. */
export interface Database {
  /**
   * One read by values a caller gave: a value no row can hold (`isUnstorableValue`) answers no
   * rows, as any value that matches nothing does, never a StorageError (docs/security.md T13).
   */
  readonly lookup: (
    text: string,
    values: ReadonlyArray<unknown>
  ) => Effect.Effect<QueryResult, StorageError.StorageError>
  /** One statement on a pooled connection, committing on its own (reads, and writes without events). */
  readonly query: (
    text: string,
    values?: ReadonlyArray<unknown>
  ) => Effect.Effect<QueryResult, StorageError.StorageError>
  /**
   * Run `body` in one transaction and commit it; with audit events attached to the fiber
   * (`withEvents`) they are inserted in it after `body` succeeded. A failure of `body` rolls
   * everything back. The whole transaction runs again on a serialization failure or a deadlock.
   */
  readonly transaction: <A, E>(
    body: (tx: Tx) => Effect.Effect<A, E | StorageError.StorageError>,
    options?: TransactionOptions
  ) => Effect.Effect<A, E | StorageError.StorageError>
  /**
   * One write statement, alone when no audit event is attached; with them, one statement that
   * stores them too (`text` and their INSERT as data-modifying CTEs), answering the rows `text`
   * returns and how many rows it changed. One statement is one transaction: no BEGIN or COMMIT.
   */
  readonly write: (
    text: string,
    values?: ReadonlyArray<unknown>
  ) => Effect.Effect<QueryResult, StorageError.StorageError>
  /**
   * One write statement whose answer the caller does not read: alone when no audit event is
   * attached; with them, one statement (`WITH written AS (text) INSERT INTO audit_events …`) that
   * stores them too. One statement is one transaction: no BEGIN or COMMIT round trip.
   */
  readonly writeWithEvents: (
    text: string,
    values: ReadonlyArray<unknown>
  ) => Effect.Effect<void, StorageError.StorageError>
  /** Whether audit events are attached to this fiber's next write. */
  readonly eventsAttached: Effect.Effect<boolean>
  /**
   * Run `effect`, one write, with `events` stored in its transaction (its first write takes them).
   * Events that no write of `effect` took (it failed, or was interrupted, before writing) are
   * dropped when it ends.
   */
  readonly withEvents: <A, E, R>(
    events: ReadonlyArray<Audit.AuditEvent>,
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
  /**
   * Run `unit`, calls of the stores over this database, in one transaction, the whole unit run
   * again on a serialization failure or a deadlock. Inside it every statement goes to that
   * transaction, a `transaction` of a store is a savepoint of it (its advisory locks held until
   * the unit ends), and a lookup by a value no row can hold fails it with StorageError.
   */
  readonly unit: <A, E>(unit: Effect.Effect<A, E>) => Effect.Effect<A, E | StorageError.StorageError>
}

const ignore = (): void => {}

const noRows: QueryResult = { rows: [], rowCount: 0 }

/** A statement and its parameters. */
export interface Statement {
  readonly text: string
  readonly values: ReadonlyArray<unknown>
}

/** How audit events are written: inside a running transaction, or as the tail of one statement. */
export interface EventWrites {
  /** Store `events` inside a running transaction. */
  readonly insert: (
    tx: Tx,
    events: ReadonlyArray<Audit.AuditEvent>
  ) => Effect.Effect<void, StorageError.StorageError>
  /** The INSERT of `events` (at least one), its parameters numbered after `after` others. */
  readonly statement: (events: ReadonlyArray<Audit.AuditEvent>, after: number) => Statement
}

/** How a transaction sends its statements and stores its audit events. */
interface Writes {
  readonly prepare: boolean
  readonly events: EventWrites
}

/** How one run of a transaction ended, and whether its connection may go back to the pool. */
interface Outcome<A, E> {
  readonly clean: boolean
  readonly exit: Exit.Exit<A, E | StorageError.StorageError>
}

/**
 * A connection of `pool`. A checked-out connection has no listener of the pool's: an error while
 * it is out (the server ends the session between two statements) must not be an unhandled
 * 'error' event.
 */
const connect = (pool: Pool): Effect.Effect<PoolClient, StorageError.StorageError> =>
  Effect.flatMap(
    attempt(() => pool.connect()),
    (client) =>
      Effect.sync(() => {
        client.on?.("error", ignore)
        return client
      })
  )

/**
 * Give a connection back. One left in doubt (interrupted mid-statement, or its COMMIT, ROLLBACK
 * or unlock failed) is closed rather than given back: closing it also drops its advisory locks.
 */
const release = (client: PoolClient, clean: boolean): Effect.Effect<void> =>
  Effect.sync(() => {
    client.removeListener?.("error", ignore)
    client.release(clean ? undefined : true)
  })

/**
 * One run of a transaction on `client`: the advisory `locks`, BEGIN, `body`, the `events`, then
 * COMMIT (ROLLBACK on a failure), then the unlock.
 */
const runOn = <A, E>(
  client: PoolClient,
  body: (tx: Tx) => Effect.Effect<A, E | StorageError.StorageError>,
  events: ReadonlyArray<Audit.AuditEvent>,
  locks: ReadonlyArray<string>,
  writes: Writes
): Effect.Effect<Outcome<A, E>> =>
  Effect.gen(function* (): Effect.fn.Return<Outcome<A, E>> {
    const query: Tx["query"] = (text, values = []) =>
      attempt(() => send(client, text, values, writes.prepare))
    // The events no statement of the body has carried yet
    let pending = events
    const tx: Tx = {
      query,
      writeWithEvents: (text, values) =>
        Effect.suspend(() => {
          if (pending.length === 0) return Effect.asVoid(query(text, values))
          const audit = writes.events.statement(pending, values.length)
          pending = []
          return Effect.asVoid(query(withEventsText(text, audit.text), [...values, ...audit.values]))
        })
    }
    if (locks.length > 0) {
      const locked = yield* Effect.exit(tx.query(lock, [locks]))
      if (Exit.isFailure(locked)) return { clean: false, exit: Exit.failCause(locked.cause) }
    }
    const exit = yield* Effect.exit(
      Effect.zipRight(
        tx.query("BEGIN"),
        Effect.flatMap(body(tx), (value) =>
          Effect.suspend(() =>
            pending.length === 0 ? Effect.succeed(value) : Effect.as(writes.events.insert(tx, pending), value)
          )
        )
      )
    )
    // A connection that failed (not a statement the server refused) is not asked to roll back.
    if (Exit.isFailure(exit) && Option.exists(Cause.failureOption(exit.cause), lostConnection)) {
      return { clean: false, exit }
    }
    // A COMMIT that fails (a serialization failure found at commit) ends the transaction as well.
    const ended = yield* Effect.exit(tx.query(Exit.isSuccess(exit) ? "COMMIT" : "ROLLBACK"))
    let clean = Exit.isSuccess(ended) || Exit.isSuccess(yield* Effect.exit(tx.query("ROLLBACK")))
    if (clean && locks.length > 0) clean = Exit.isSuccess(yield* Effect.exit(tx.query(unlock, [locks])))
    return {
      clean,
      exit: Exit.isSuccess(exit) && Exit.isFailure(ended) ? Exit.failCause(ended.cause) : exit
    }
  })

/** One run of a transaction on a connection of `pool`, given back (or closed) after it. */
const once = <A, E>(
  pool: Pool,
  writes: Writes,
  body: (tx: Tx) => Effect.Effect<A, E | StorageError.StorageError>,
  events: ReadonlyArray<Audit.AuditEvent>,
  locks: ReadonlyArray<string>
): Effect.Effect<A, E | StorageError.StorageError> =>
  Effect.acquireUseRelease(
    connect(pool),
    (client) => runOn(client, body, events, locks, writes),
    (client, used) => release(client, Exit.isSuccess(used) && used.value.clean)
  ).pipe(Effect.flatMap(({ exit }) => exit))

/**
 * Transactions over `pool`; `eventWrites` stores audit events in them, or in one statement.
 * `prepare`: statements with parameters go as named prepared statements (see `prepared.ts`).
 */
export const make = (
  pool: Pool,
  eventWrites: EventWrites,
  prepare = true,
  retryPolicy: RetryPolicy = defaultRetryPolicy
): Database => {
  const writes: Writes = { prepare, events: eventWrites }
  const statement = (text: string, values: ReadonlyArray<unknown> = []) =>
    attempt(() => send(pool, text, values, prepare))
  const retrying = <A, E>(effect: Effect.Effect<A, E | StorageError.StorageError>) =>
    retryConflicts(effect, retryPolicy, liveClock)

  // The transaction of the unit this fiber runs, if any: every statement goes to it
  const joined = FiberSlot.make<Tx | null>(null)
  const inUnit = (
    tx: Tx,
    text: string,
    values: ReadonlyArray<unknown>,
    events: ReadonlyArray<Audit.AuditEvent>
  ) => joinedWrite(tx, text, values, events, eventWrites.insert)

  // Each store call reads the fiber's unit and takes its attached events in its one first step
  return {
    lookup: (text, values) =>
      Effect.withFiberRuntime((fiber) => {
        const tx = joined.get(fiber)
        return tx !== null
          ? tx.query(text, values)
          : retrying(statement(text, values)).pipe(
              Effect.catchIf(
                (e) => isUnstorableValue(e.cause),
                () => Effect.succeed(noRows)
              )
            )
      }),
    query: (text, values) =>
      Effect.withFiberRuntime((fiber) => {
        const tx = joined.get(fiber)
        return tx !== null ? tx.query(text, values) : retrying(statement(text, values))
      }),
    transaction: (body, options = {}) =>
      Effect.withFiberRuntime((fiber) => {
        const events = attached.take(fiber)
        const tx = joined.get(fiber)
        return tx !== null
          ? savepoint(tx, body, events, options.locks ?? [], eventWrites.insert)
          : retrying(once(pool, writes, body, events, options.locks ?? []))
      }),
    write: (text, values = []) =>
      Effect.withFiberRuntime((fiber) => {
        const events = attached.take(fiber)
        const tx = joined.get(fiber)
        if (tx !== null) return inUnit(tx, text, values, events)
        if (events.length === 0) return retrying(statement(text, values))
        const audit = eventWrites.statement(events, values.length)
        const both = writeAndEvents(text, audit.text)
        return Effect.map(retrying(statement(both.text, [...values, ...audit.values])), both.answer)
      }),
    writeWithEvents: (text, values) =>
      Effect.withFiberRuntime((fiber) => {
        const events = attached.take(fiber)
        const tx = joined.get(fiber)
        if (tx !== null) return Effect.asVoid(inUnit(tx, text, values, events))
        if (events.length === 0) return Effect.asVoid(retrying(statement(text, values)))
        const audit = eventWrites.statement(events, values.length)
        return Effect.asVoid(
          retrying(statement(withEventsText(text, audit.text), [...values, ...audit.values]))
        )
      }),
    eventsAttached: Effect.withFiberRuntime((fiber) => Exit.succeed(attached.get(fiber).length > 0)),
    withEvents: attached.around,
    unit: (effect) =>
      Effect.withFiberRuntime((fiber) =>
        joined.get(fiber) !== null
          ? effect
          : retrying(once(pool, writes, (tx) => joined.around(tx, effect), attached.take(fiber), []))
      )
  }
}
