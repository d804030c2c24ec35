/**
 * The transactions a browser sign-in commits on PostgreSQL, request by request: every COMMIT
 * sent on a connection checked out of the pool, and every write sent on the pool itself (one
 * statement, committing on its own), on PGlite and on a real server.
 */
import { PostgresStorage } from "@latchkey/storage-postgres"
import { accountPasswordChange, type SignInCounts, signInCounts } from "@latchkey/storage-testkit"
import { Effect } from "effect"
import pg from "pg"
import { describe, expect, it } from "vitest"
import { pglitePool } from "./support/pglite.js"
import { databaseUrl, useDatabase } from "./support/postgres.js"

/**
 * Commits per request of the sign-in: one each, and two for the sign-in form, right password or
 * wrong, whose attempt is counted (and committed) before the password is checked.
 */
const expected: SignInCounts = {
  authorizeGet: 1,
  wrongPassword: 2,
  signInPost: 2,
  consentGet: 1,
  consentPost: 1
}

type Pool = PostgresStorage.Pool

/** `pool`, counting the transactions it commits (statements sent as text or as named statements alike). */
const counting = (pool: Pool) => {
  let commits = 0
  const textOf = (statement: string | PostgresStorage.QueryConfig) =>
    typeof statement === "string" ? statement : statement.text
  const send = (
    target: Pick<Pool, "query">,
    statement: string | PostgresStorage.QueryConfig,
    values?: Array<unknown>
  ) => (typeof statement === "string" ? target.query(statement, values) : target.query(statement))
  const counted: Pool = {
    query: (statement: string | PostgresStorage.QueryConfig, values?: Array<unknown>) => {
      if (!/^\s*SELECT\b/i.test(textOf(statement))) commits++
      return send(pool, statement, values)
    },
    connect: async () => {
      const client = await pool.connect()
      return {
        query: (statement: string | PostgresStorage.QueryConfig, values?: Array<unknown>) => {
          if (/^\s*COMMIT\b/i.test(textOf(statement))) commits++
          return send(client, statement, values)
        },
        release: (destroy) => client.release(destroy),
        on: (event, listener) => client.on?.(event, listener),
        removeListener: (event, listener) => client.removeListener?.(event, listener)
      }
    }
  }
  return { pool: counted, commits: () => commits }
}

const countsOver = (pool: Pool) => {
  const { pool: counted, commits } = counting(pool)
  return signInCounts(PostgresStorage.layer({ pool: counted }), commits)
}

const passwordChangeOver = (pool: Pool) => {
  const { pool: counted, commits } = counting(pool)
  return accountPasswordChange(PostgresStorage.layer({ pool: counted }), commits)
}

describe("the commits of a browser sign-in", () => {
  it("commit once per request on PGlite, twice for the sign-in form", async () => {
    const counts = await Effect.runPromise(Effect.flatMap(pglitePool(), countsOver))
    expect(counts).toEqual(expected)
  })

  it("commit twice for a password change on the account page on PGlite, as a sign-in: the attempt, then the change with the other sessions ended", async () => {
    expect(await Effect.runPromise(Effect.flatMap(pglitePool(), passwordChangeOver))).toBe(2)
  })
})

for (const serializable of [false, true]) {
  const isolation = serializable ? "serializable" : "read committed"
  describe.skipIf(databaseUrl === undefined)(`the commits of a browser sign-in, ${isolation}`, () => {
    const database = useDatabase({ serializable })
    it("commit once per request on a real PostgreSQL, twice for the sign-in form", async () => {
      const pool = new pg.Pool({ connectionString: database.get().url, max: 2 })
      try {
        expect(await Effect.runPromise(countsOver(pool))).toEqual(expected)
        expect(await Effect.runPromise(passwordChangeOver(pool))).toBe(2)
      } finally {
        await pool.end()
      }
    })
  })
}
