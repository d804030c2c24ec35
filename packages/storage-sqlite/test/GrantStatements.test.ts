/**
 * The statements each grant of the token endpoint runs on SQLite, request by request (client
 * authentication included): every execution of a better-sqlite3 statement, counted, never timed.
 * A request alone in its group commit also runs the commit's own four (the synchronous switch
 * around it, BEGIN IMMEDIATE, COMMIT); docs/performance.md lists each statement and why.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { type TokenCounts, tokenCounts } from "@latchkey/storage-testkit"
import BetterSqlite3 from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "latchkey-statements-"))

type Method = (this: BetterSqlite3.Statement, ...params: Array<unknown>) => unknown
// Every statement runs through one of these methods of this prototype; counted while the test runs only.
const probe = new BetterSqlite3(":memory:")
const statement = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<string, Method>
const methods = ["run", "get", "all", "iterate"] as const
const originals = methods.map((m) => statement[m] as Method)
const ran: Array<string> = []

beforeAll(() => {
  methods.forEach((m, i) => {
    const original = originals[i] as Method
    statement[m] = function (this: BetterSqlite3.Statement, ...params: Array<unknown>) {
      ran.push(this.source.replace(/\s+/g, " ").slice(0, 60))
      return original.apply(this, params)
    }
  })
})

afterAll(() => {
  methods.forEach((m, i) => {
    statement[m] = originals[i] as Method
  })
  probe.close()
  rmSync(dir, { recursive: true, force: true })
})

it("a token request runs 7 statements for client_credentials, 12 for authorization_code, 11 for refresh_token", async () => {
  const counts = await Effect.runPromise(
    tokenCounts(SqliteStorage.layer({ filename: join(dir, "grants.sqlite") }), () => ran.length)
  )
  // Each: the application read with its throttle counters in one statement, the commit's four, one insert of its
  // tokens and one of its audit events; a code (refresh token) and its user read first, then in the
  // write its conditional update and the user's check (and the code's consent's).
  const expected: TokenCounts = { clientCredentials: 7, authorizationCode: 12, refreshToken: 11 }
  expect(counts, ran.join("\n")).toEqual(expected)
})
