/**
 * The transactions a browser sign-in commits on SQLite, request by request: every COMMIT of
 * the connection and every write that ran outside a transaction (committing on its own),
 * observed on better-sqlite3's statements.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { accountPasswordChange, signInCounts } from "@latchkey/storage-testkit"
import BetterSqlite3 from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "latchkey-commits-"))

// Every statement runs through this prototype's `run`; counted while the test runs only.
const probe = new BetterSqlite3(":memory:")
const statement = Object.getPrototypeOf(probe.prepare("SELECT 1")) as {
  run: (this: BetterSqlite3.Statement, ...params: Array<unknown>) => BetterSqlite3.RunResult
}
const run = statement.run
let commits = 0
// PRAGMA synchronous switches around a group commit (the WAL flushed off the event loop) write no data
const control = /^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|PRAGMA)\b/i

beforeAll(() => {
  statement.run = function (this: BetterSqlite3.Statement, ...params: Array<unknown>) {
    const autocommit = !this.database.inTransaction && !this.reader && !control.test(this.source)
    const result = run.apply(this, params)
    if (/^COMMIT\b/i.test(this.source) || autocommit) commits++
    return result
  }
})

afterAll(() => {
  statement.run = run
  probe.close()
  rmSync(dir, { recursive: true, force: true })
})

it("a browser sign-in commits once per request, and twice for the sign-in form: its attempt is counted before the password is checked", async () => {
  const counts = await Effect.runPromise(
    signInCounts(SqliteStorage.layer({ filename: join(dir, "signin.sqlite") }), () => commits)
  )
  expect(counts).toEqual({ authorizeGet: 1, wrongPassword: 2, signInPost: 2, consentGet: 1, consentPost: 1 })
})

it("a password change on the account page commits twice, as a sign-in: the attempt counted, then the new password with the other sessions ended", async () => {
  const commitsOf = await Effect.runPromise(
    accountPasswordChange(SqliteStorage.layer({ filename: join(dir, "account.sqlite") }), () => commits)
  )
  expect(commitsOf).toBe(2)
})
