/**
 * The statements (round trips to the database) a `client_credentials` token and the
 * introspection of a valid token cost through the core's endpoints on the PostgreSQL layer,
 * counted on the pool and on every connection checked out of it (BEGIN and COMMIT included), on
 * PGlite and on a real server, and the names they are prepared under. The bounds are the numbers
 * reached: a change that adds a round trip to the success path fails here.
 */
import { Admin, Audit, AuditStore, BasicAuth, Http, Paths, Throttle, TokenStore } from "@latchkey/core"
import { PostgresStorage } from "@latchkey/storage-postgres"
import { Fixtures, grantServices } from "@latchkey/storage-testkit"
import { Effect, Layer, Logger, LogLevel, Option } from "effect"
import pg from "pg"
import { describe, expect, it } from "vitest"
import { pglitePool } from "./support/pglite.js"
import { databaseUrl, useDatabase } from "./support/postgres.js"

/** Round trips of one `client_credentials` issuance on the success path. */
const maxRoundTrips = 2
/**
 * Round trips of the introspection of a valid access token: the application with its throttle
 * counters (client authentication), then the token. One would take the core reading the token
 * with the application.
 */
const maxIntrospectionRoundTrips = 2
/** Round trips of revoking a valid access token: the two reads of introspection, then one write with its audit event. */
const maxRevocationRoundTrips = 3

/** A pool that counts every statement sent through it or through a connection it lent. */
type Pool = PostgresStorage.Pool

/** A statement sent, and the name it went under (none: parsed and planned again). */
interface Sent {
  readonly text: string
  readonly name: string | undefined
}

const counting = (pool: Pool) => {
  const sent: Array<Sent> = []
  const forward =
    (target: Pick<Pool, "query">) =>
    (statement: string | PostgresStorage.QueryConfig, values?: Array<unknown>) => {
      if (typeof statement === "string") {
        sent.push({ text: statement, name: undefined })
        return target.query(statement, values)
      }
      sent.push({ text: statement.text, name: statement.name })
      return target.query(statement)
    }
  const counted: Pool = {
    query: forward(pool),
    connect: async () => {
      const client = await pool.connect()
      return {
        query: forward(client),
        release: (destroy) => client.release(destroy),
        on: (event, listener) => client.on?.(event, listener),
        removeListener: (event, listener) => client.removeListener?.(event, listener)
      }
    }
  }
  return { pool: counted, sent }
}

const services = Layer.merge(grantServices, Logger.minimumLogLevel(LogLevel.Warning))

const layerOver = (pool: Pool, preparedStatements?: boolean) => {
  const storage = PostgresStorage.layer({
    pool,
    ...(preparedStatements !== undefined ? { preparedStatements } : {})
  })
  return Layer.mergeAll(storage, Layer.provide(Audit.layer, storage), services)
}

const tokenRequest = (authorization: string): Http.HttpRequest => ({
  method: "POST",
  path: Paths.oauth.token,
  query: "",
  headers: { "content-type": "application/x-www-form-urlencoded", authorization },
  body: "grant_type=client_credentials",
  remoteAddress: "127.0.0.1"
})

const tokenFormRequest = (path: string, authorization: string, token: string): Http.HttpRequest => ({
  method: "POST",
  path,
  query: "",
  headers: { "content-type": "application/x-www-form-urlencoded", authorization },
  body: `token=${encodeURIComponent(token)}`,
  remoteAddress: "127.0.0.1"
})

/**
 * Issue one token to a fresh application over `pool` and return the statements it cost, after
 * checking that the token answered and that its row and its audit event are stored.
 */
const issuance = (pool: Pool, preparedStatements?: boolean) => {
  const { pool: counted, sent } = counting(pool)
  return Effect.gen(function* () {
    const created = yield* Admin.createApplication({
      name: "Counted",
      redirectUris: ["https://app.example/cb"],
      scope: "read",
      grantTypes: ["client_credentials"]
    })
    const basic = BasicAuth.encode({ appKey: created.app.appKey, appSecret: created.appSecret })
    // A first token warms what a server warms once (the schema check, the connection)
    expect((yield* Option.getOrThrow(Http.route(tokenRequest(basic)))).status).toBe(200)
    sent.length = 0
    const res = yield* Option.getOrThrow(Http.route(tokenRequest(basic)))
    const statements = [...sent]
    expect(res.status).toBe(200)
    const accessToken = (JSON.parse(res.body) as { access_token: string }).access_token
    expect(accessToken.length).toBeGreaterThan(0)
    const stored = yield* Effect.promise(() =>
      pool.query(
        `SELECT (SELECT count(*) FROM tokens WHERE app_key = $1)::int AS tokens,
          (SELECT count(*) FROM audit_events WHERE app_key = $1 AND type = 'token_issued')::int AS events`,
        [created.app.appKey]
      )
    )
    expect(stored.rows[0]).toEqual({ tokens: 2, events: 2 })
    return statements
  }).pipe(Effect.provide(layerOver(counted, preparedStatements)))
}

const introspectionRequest = (authorization: string, token: string) =>
  tokenFormRequest(Paths.oauth.introspect, authorization, token)

/**
 * Revoke a valid access token of a fresh application over `pool` and return the statements it
 * cost, after checking that the token is revoked and its `token_revoked` event stored.
 */
const revocation = (pool: Pool) => {
  const { pool: counted, sent } = counting(pool)
  return Effect.gen(function* () {
    const created = yield* Admin.createApplication({
      name: "Revoked",
      redirectUris: ["https://app.example/cb"],
      scope: "read",
      grantTypes: ["client_credentials"]
    })
    const basic = BasicAuth.encode({ appKey: created.app.appKey, appSecret: created.appSecret })
    const issued = yield* Option.getOrThrow(Http.route(tokenRequest(basic)))
    const token = (JSON.parse(issued.body) as { access_token: string }).access_token
    sent.length = 0
    const res = yield* Option.getOrThrow(Http.route(tokenFormRequest(Paths.oauth.revoke, basic, token)))
    const statements = [...sent]
    expect(res.status).toBe(200)
    const after = yield* Option.getOrThrow(Http.route(introspectionRequest(basic, token)))
    expect(JSON.parse(after.body)).toEqual({ active: false })
    const stored = yield* Effect.promise(() =>
      pool.query(
        "SELECT count(*)::int AS events FROM audit_events WHERE app_key = $1 AND type = 'token_revoked'",
        [created.app.appKey]
      )
    )
    expect(stored.rows[0]).toEqual({ events: 1 })
    return statements
  }).pipe(Effect.provide(layerOver(counted)))
}

/**
 * Introspect a valid access token of a fresh application over `pool` and return the statements
 * it cost, after checking that the answer says it is active.
 */
const introspection = (pool: Pool) => {
  const { pool: counted, sent } = counting(pool)
  return Effect.gen(function* () {
    const created = yield* Admin.createApplication({
      name: "Introspected",
      redirectUris: ["https://app.example/cb"],
      scope: "read",
      grantTypes: ["client_credentials"]
    })
    const basic = BasicAuth.encode({ appKey: created.app.appKey, appSecret: created.appSecret })
    const issued = yield* Option.getOrThrow(Http.route(tokenRequest(basic)))
    const token = (JSON.parse(issued.body) as { access_token: string }).access_token
    expect((yield* Option.getOrThrow(Http.route(introspectionRequest(basic, token)))).status).toBe(200)
    sent.length = 0
    const res = yield* Option.getOrThrow(Http.route(introspectionRequest(basic, token)))
    const statements = [...sent]
    expect(res.status).toBe(200)
    expect(JSON.parse(res.body)).toMatchObject({ active: true, client_id: created.app.appKey })
    return statements
  }).pipe(Effect.provide(layerOver(counted)))
}

const texts = (sent: ReadonlyArray<Sent>) => sent.map((s) => s.text)

/**
 * Lock the App Key of a fresh application (wrong secrets past the free failures) over `layer`,
 * then answer the right secret's status and the statements it cost.
 */
const afterLockout = <E>(layer: Layer.Layer<Http.Requirements | Audit.AuditLog, E>, sent: Array<Sent>) =>
  Effect.gen(function* () {
    const created = yield* Admin.createApplication({
      name: "Locked",
      redirectUris: ["https://app.example/cb"],
      scope: "read",
      grantTypes: ["client_credentials"]
    })
    const wrong = BasicAuth.encode({ appKey: created.app.appKey, appSecret: "wrong" })
    for (let i = 0; i <= Throttle.defaultPolicy.freeFailures; i++) {
      expect((yield* Option.getOrThrow(Http.route(tokenRequest(wrong)))).status).toBe(401)
    }
    const right = BasicAuth.encode({ appKey: created.app.appKey, appSecret: created.appSecret })
    sent.length = 0
    const res = yield* Option.getOrThrow(Http.route(tokenRequest(right)))
    return { status: res.status, statements: sent.length }
  }).pipe(Effect.provide(layer))

describe("the throttle read with the application", () => {
  it("refuses the right secret with 429 once the App Key is locked, in one read", async () => {
    const { pool, sent } = counting(await Effect.runPromise(pglitePool()))
    const { status, statements } = await Effect.runPromise(afterLockout(layerOver(pool), sent))
    expect(status).toBe(429)
    expect(statements).toBe(1)
  })

  it("reads the counters of a throttle store that is not the pool's, and still refuses with 429", async () => {
    const raw = await Effect.runPromise(pglitePool())
    const { pool, sent } = counting(raw)
    // Counters kept in memory: the pool's throttle table never sees the failures
    const layer = Layer.merge(layerOver(pool), Throttle.layer())
    const { status } = await Effect.runPromise(afterLockout(layer, sent))
    expect(status).toBe(429)
    expect((await raw.query("SELECT count(*)::int AS n FROM throttle")).rows[0]).toEqual({ n: 0 })
  })
})

describe("round trips of a client_credentials token", () => {
  it(`costs at most ${maxRoundTrips} statements on PGlite, BEGIN and COMMIT included`, async () => {
    const statements = await Effect.runPromise(Effect.flatMap(pglitePool(), (pool) => issuance(pool)))
    expect(statements.length, texts(statements).join("\n")).toBeLessThanOrEqual(maxRoundTrips)
    expect(texts(statements)).not.toContain("BEGIN")
  })

  it("sends each of them as a named prepared statement, unless preparedStatements is false", async () => {
    const named = await Effect.runPromise(Effect.flatMap(pglitePool(), (pool) => issuance(pool)))
    expect(named.every((s) => s.name !== undefined)).toBe(true)
    const again = await Effect.runPromise(Effect.flatMap(pglitePool(), (pool) => issuance(pool)))
    expect(again.map((s) => s.name)).toEqual(named.map((s) => s.name))
    const unnamed = await Effect.runPromise(Effect.flatMap(pglitePool(), (pool) => issuance(pool, false)))
    expect(unnamed.map((s) => s.name)).toEqual(named.map(() => undefined))
  })
})

describe("round trips of an introspection", () => {
  it(`costs ${maxIntrospectionRoundTrips} statements on PGlite for a valid token, no BEGIN`, async () => {
    const statements = await Effect.runPromise(Effect.flatMap(pglitePool(), introspection))
    expect(statements.length, texts(statements).join("\n")).toBe(maxIntrospectionRoundTrips)
    expect(texts(statements)).not.toContain("BEGIN")
    expect(statements.every((s) => s.name !== undefined)).toBe(true)
  })
})

/**
 * Rotate a refresh token of no user over `pool` with two audit events, as the refresh grant does,
 * and return the statements it cost; then rotate it again (refused: already rotated) and check
 * that only the first rotation's events are stored.
 */
const rotation = (pool: Pool) => {
  const { pool: counted, sent } = counting(pool)
  return Effect.gen(function* () {
    const tokens = yield* TokenStore.TokenStore
    const audit = yield* AuditStore.AuditStore
    const [, refresh] = Fixtures.pair()
    yield* tokens.insert([refresh])
    const event = (type: Audit.EventType): Audit.AuditEvent => ({
      at: Fixtures.baseTime,
      type,
      appKey: refresh.appKey,
      userId: null,
      openId: refresh.openId,
      address: null,
      requestId: null,
      detail: null,
      actor: null
    })
    const rotate = () =>
      audit.appendWith(
        [event("refresh_rotated"), event("token_issued")],
        tokens.rotate(
          refresh.tokenHash,
          Fixtures.baseTime,
          0,
          Fixtures.pair({ familyId: refresh.familyId, appKey: refresh.appKey })
        )
      )
    sent.length = 0
    yield* rotate()
    const statements = [...sent]
    expect((yield* Effect.flip(rotate()))._tag).toBe("RefreshAlreadyRotated")
    const stored = yield* audit.tail({ limit: 10, appKey: refresh.appKey })
    expect(stored.map((e) => e.type)).toEqual(["refresh_rotated", "token_issued"])
    return statements
  }).pipe(Effect.provide(PostgresStorage.layer({ pool: counted })))
}

describe("round trips of a transaction that writes tokens", () => {
  it("a rotation's audit events go in the tokens' INSERT: BEGIN, the rotation, the INSERT, COMMIT", async () => {
    const statements = await Effect.runPromise(Effect.flatMap(pglitePool(), rotation))
    expect(texts(statements).length, texts(statements).join("\n")).toBe(4)
    expect(texts(statements)[0]).toBe("BEGIN")
    expect(texts(statements)[2]).toMatch(
      /^WITH written AS \(INSERT INTO tokens .*\) INSERT INTO audit_events/s
    )
    expect(texts(statements)[3]).toBe("COMMIT")
  })
})

describe("round trips of a revocation", () => {
  it(`costs ${maxRevocationRoundTrips} statements on PGlite for a valid token, its audit event in the write, no BEGIN`, async () => {
    const statements = await Effect.runPromise(Effect.flatMap(pglitePool(), revocation))
    expect(statements.length, texts(statements).join("\n")).toBe(maxRevocationRoundTrips)
    expect(texts(statements)).not.toContain("BEGIN")
  })
})

/** What `count` counted over a pool of two connections to the real server at `url`, the pool ended after. */
const onServer = async <A>(url: string, count: (pool: Pool) => Effect.Effect<A, unknown>): Promise<A> => {
  const pool = new pg.Pool({ connectionString: url, max: 2 })
  try {
    return await Effect.runPromise(count(pool))
  } finally {
    await pool.end()
  }
}

for (const serializable of [false, true]) {
  const isolation = serializable ? "serializable" : "read committed"
  describe.skipIf(databaseUrl === undefined)(`round trips on a real PostgreSQL, ${isolation}`, () => {
    const database = useDatabase({ serializable })
    it("rotates a refresh token in BEGIN, the rotation, the tokens' INSERT with the events, COMMIT", async () => {
      const statements = await onServer(database.get().url, rotation)
      expect(texts(statements).length, texts(statements).join("\n")).toBe(4)
    })

    it(`costs at most ${maxRoundTrips} statements, BEGIN and COMMIT included`, async () => {
      const statements = await onServer(database.get().url, issuance)
      expect(statements.length, texts(statements).join("\n")).toBeLessThanOrEqual(maxRoundTrips)
      expect(texts(statements)).not.toContain("BEGIN")
    })

    it(`revokes a valid token in ${maxRevocationRoundTrips} statements, no BEGIN`, async () => {
      const statements = await onServer(database.get().url, revocation)
      expect(statements.length, texts(statements).join("\n")).toBe(maxRevocationRoundTrips)
      expect(texts(statements)).not.toContain("BEGIN")
    })

    it(`introspects a valid token in ${maxIntrospectionRoundTrips} statements, no BEGIN`, async () => {
      const statements = await onServer(database.get().url, introspection)
      expect(statements.length, texts(statements).join("\n")).toBe(maxIntrospectionRoundTrips)
      expect(texts(statements)).not.toContain("BEGIN")
    })
  })
}
