/**
 * The network between the pool and a real PostgreSQL server (`DATABASE_URL`) fails and comes
 * back, through a TCP proxy on 127.0.0.1: every store operation fails with a StorageError (never
 * a defect, never a hang past the timeouts) while it is down, and the same layer works again
 * once it is back.
 */
import { assert, describe, it } from "@effect/vitest"
import { AuditStore, CodeStore, SessionStore, type StorageError, Throttle, TokenStore } from "@latchkey/core"
import { PostgresStorage } from "@latchkey/storage-postgres"
import { Fixtures } from "@latchkey/storage-testkit"
import * as TcpProxy from "@latchkey/storage-testkit/TcpProxy"
import { Cause, Context, Effect, Exit, Layer, Option } from "effect"
import { afterAll, beforeAll } from "vitest"
import { lockKey } from "../src/internal/units.js"
import { freshSchema } from "./support/pglite.js"
import { databaseUrl, rawClient, useDatabase } from "./support/postgres.js"

const T = Fixtures.baseTime
// Short timeouts: a connection attempt gives up after 1 s, a query without an answer after 3 s.
const connectionTimeoutMs = 1000
const statementTimeoutMs = 1000
const poolMax = 3

describe.skipIf(databaseUrl === undefined)("connection loss on real PostgreSQL", () => {
  const database = useDatabase()
  let proxy: TcpProxy.TcpProxy | undefined
  beforeAll(async () => {
    proxy = await TcpProxy.start({ host: database.get().host, port: database.get().port })
  })
  afterAll(() => proxy?.close())
  const theProxy = () => {
    if (proxy === undefined) throw new Error("the proxy is not started")
    return proxy
  }

  /** A layer whose pool connects through the proxy. */
  const throughProxy = (schema: string) => {
    const url = new URL(database.get().url)
    url.hostname = "127.0.0.1"
    url.port = String(theProxy().port)
    return PostgresStorage.layer({
      connectionString: url.toString(),
      schema,
      connectionTimeoutMs,
      statementTimeoutMs,
      poolMax
    })
  }

  /** One of each kind of operation: reads, single statements, transactions (with locks), audit. */
  const operations = (
    context: Context.Context<
      | PostgresStorage.Health
      | CodeStore.CodeStore
      | TokenStore.TokenStore
      | SessionStore.SessionStore
      | Throttle.ThrottleStore
      | AuditStore.AuditStore
    >
  ) => {
    const codes = Context.get(context, CodeStore.CodeStore)
    const tokens = Context.get(context, TokenStore.TokenStore)
    const sessions = Context.get(context, SessionStore.SessionStore)
    const throttle = Context.get(context, Throttle.ThrottleStore)
    const audit = Context.get(context, AuditStore.AuditStore)
    const key = { key: Fixtures.id("down"), kind: "identifier" } as const
    const ops: ReadonlyArray<
      readonly [string, Effect.Effect<unknown, StorageError.StorageError | { readonly _tag: string }>]
    > = [
      ["ping", Effect.provide(PostgresStorage.ping, context)],
      ["find a code", codes.find(Fixtures.hash())],
      ["insert tokens", tokens.insert([Fixtures.token()])],
      ["redeem a code", codes.redeem(Fixtures.hash(), T, [Fixtures.token()])],
      ["rotate a refresh token", tokens.rotate(Fixtures.hash(), T, 0, [])],
      ["save a session", sessions.save(Fixtures.session())],
      ["take a pending request", sessions.takePending(Fixtures.hash(), "txn")],
      ["reserve a throttled attempt", throttle.reserve([key], T, Throttle.defaultPolicy)],
      [
        "append an audit event",
        audit.append({
          at: T,
          type: "token_issued",
          appKey: null,
          userId: null,
          openId: null,
          address: null,
          requestId: null,
          detail: null
        })
      ]
    ]
    return ops
  }

  /**
   * Every operation fails with a StorageError (a hang ends the test at its timeout), each after at
   * most one new connection: a lost network is not retried.
   */
  const allFail = (context: Parameters<typeof operations>[0]) =>
    Effect.forEach(operations(context), ([name, op]) =>
      Effect.gen(function* () {
        const before = theProxy().accepted()
        const exit = yield* Effect.exit(op)
        assert.isTrue(Exit.isFailure(exit), `${name} should fail`)
        if (Exit.isFailure(exit)) {
          assert.isFalse(Cause.isDie(exit.cause), `${name} died: ${Cause.pretty(exit.cause)}`)
          const failure = Cause.failureOption(exit.cause)
          assert.isTrue(Option.isSome(failure), name)
          if (Option.isSome(failure)) assert.strictEqual(failure.value._tag, "StorageError", name)
        }
        assert.isAtMost(theProxy().accepted() - before, 1, `${name} opened more than one connection`)
      })
    )

  /** Every operation succeeds or fails with its domain error: the database answers. */
  const allAnswer = (context: Parameters<typeof operations>[0]) =>
    Effect.forEach(operations(context), ([name, op]) =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(op)
        if (Exit.isFailure(exit)) {
          const failure = Cause.failureOption(exit.cause)
          assert.isTrue(
            Option.isSome(failure) && failure.value._tag !== "StorageError",
            `${name}: ${Cause.pretty(exit.cause)}`
          )
        }
      })
    )

  /**
   * After the network is back: a connection the pool kept from before may fail once (the pool
   * then drops it), so a bounded number of pings, one per pooled connection, must reach a success.
   */
  const recovers = (context: Parameters<typeof operations>[0]) =>
    Effect.gen(function* () {
      let ok = false
      for (let i = 0; i <= poolMax && !ok; i++)
        ok = Exit.isSuccess(yield* Effect.exit(Effect.provide(PostgresStorage.ping, context)))
      assert.isTrue(ok, "ping succeeds again once the network is back")
      yield* allAnswer(context)
    })

  for (const mode of ["reset", "refuse", "blackhole"] as const) {
    // A blackhole is only noticed by the timeouts: a new connection's (1 s), or a query's (1 s).
    it.live(
      `network ${mode}: StorageError for every operation, after at most one connection attempt each, then the same layer recovers`,
      () =>
        Effect.gen(function* () {
          const context = yield* Layer.build(throughProxy(freshSchema()))
          const codes = Context.get(context, CodeStore.CodeStore)
          const code = Fixtures.code()
          yield* Effect.provide(Fixtures.insertCode(code), context)
          yield* allAnswer(context)

          yield* Effect.promise(() => theProxy().cut(mode))
          yield* allFail(context)
          yield* Effect.promise(() => theProxy().restore())
          yield* recovers(context)
          // What was written before the cut is still there, and single use still holds.
          yield* codes.redeem(code.codeHash, T + 1, [])
          assert.strictEqual(
            (yield* Effect.flip(codes.redeem(code.codeHash, T + 2, [])))._tag,
            "CodeAlreadyUsed"
          )
        }).pipe(Effect.scoped)
    )
  }

  it.live(
    "the server ending the pool's connections (57P01) is a StorageError for the one waiting, and nothing else",
    () =>
      Effect.gen(function* () {
        const schema = freshSchema()
        const context = yield* Layer.build(
          PostgresStorage.layer({
            connectionString: database.get().url,
            schema,
            connectionTimeoutMs,
            poolMax
          })
        )
        const throttle = Context.get(context, Throttle.ThrottleStore)
        yield* allAnswer(context)
        // Another session holds the advisory lock of a throttle key: a reservation on it waits.
        const key = { key: Fixtures.id("held"), kind: "identifier" } as const
        const holder = yield* Effect.acquireRelease(
          Effect.promise(() => rawClient(database.get(), schema)),
          (c) => Effect.promise(() => c.end())
        )
        yield* Effect.promise(() =>
          holder.query(`SELECT pg_advisory_lock(${lockKey}) FROM (SELECT $1::text AS name) AS n`, [
            `throttle:${key.key}`
          ])
        )
        const waiting = yield* Effect.fork(Effect.exit(throttle.reserve([key], T, Throttle.defaultPolicy)))
        // Find the waiting backend (a bounded number of looks), then end every connection of the pool.
        let waiters = 0
        for (let i = 0; i < 5000 && waiters === 0; i++) {
          const found = yield* Effect.promise(() =>
            holder.query(
              `SELECT count(*) AS n FROM pg_stat_activity
              WHERE datname = current_database() AND application_name = 'latchkey' AND wait_event_type = 'Lock'`
            )
          )
          waiters = Number(found.rows[0]?.n)
          if (waiters === 0) yield* Effect.yieldNow()
        }
        assert.strictEqual(waiters, 1, "the reservation waits for the lock")
        yield* Effect.promise(() =>
          holder.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'latchkey'`
          )
        )
        const exit = yield* Effect.fromFiber(waiting)
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) {
          assert.isFalse(Cause.isDie(exit.cause))
          const failure = Cause.failureOption(exit.cause)
          assert.isTrue(Option.isSome(failure) && failure.value._tag === "StorageError")
          if (Option.isSome(failure)) assert.match(failure.value.message, /ended the connection|connection/)
        }
        // The idle connections ended too: the pool drops them and opens new ones.
        yield* recovers(context)
      }).pipe(Effect.scoped)
  )
})
