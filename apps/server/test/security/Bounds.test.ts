/**
 * Subjects that cannot be confused, bounded anonymous data and bounded audit growth
 * (docs/security.md), against the real server and its SQLite file.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import { Browser, formOf, signInAndAllow } from "../helpers.js"
import { authorizeUrl } from "./flows.js"
import { cb, read, type Stack, startStack, token } from "./harness.js"

let s: Stack
beforeAll(async () => {
  s = await startStack()
})
afterAll(async () => {
  await s.close()
})

/** Run a read-only query on the stack's database file. */
const query = <A>(sql: string, ...params: ReadonlyArray<unknown>): A => {
  const db = new BetterSqlite3(s.dbPath, { readonly: true })
  try {
    return db.prepare(sql).get(...params) as A
  } finally {
    db.close()
  }
}

describe("bounds and subjects (docs/security.md)", () => {
  it("an application cannot assert with client_credentials the open_id of a user who signed in to it", async () => {
    const location = await signInAndAllow(s.base, authorizeUrl(s), s.alice)
    const code = new URL(location).searchParams.get("code") as string
    const exchanged = await read(await token(s, { grant_type: "authorization_code", code, redirect_uri: cb }))
    const openId = exchanged.body.open_id as string
    assert.isString(openId)
    const asserted = await read(await token(s, { grant_type: "client_credentials", open_id: openId }))
    assert.deepStrictEqual([asserted.status, asserted.body.error], [400, "invalid_request"])
    // client B has no user behind that value
    const other = await read(await token(s, { grant_type: "client_credentials", open_id: openId }, s.B))
    assert.strictEqual(other.status, 200)
  })

  it("anonymous authorize requests with junk parameters store only the authorize parameters; a query over 8 KiB is 414", async () => {
    const junk = "j".repeat(4000)
    for (let i = 0; i < 20; i++) {
      const page = await new Browser().fetch(`${authorizeUrl(s)}&junk=${junk}&n=${i}`)
      assert.strictEqual(page.status, 200)
      formOf(await page.text())
    }
    const longest = query<{ n: number }>("SELECT max(length(raw_query)) AS n FROM pending_authorizations")
    assert.isBelow(longest.n, 500)
    const total = query<{ chars: number }>("SELECT chars FROM pending_totals")
    const sum = query<{ n: number }>(
      "SELECT coalesce(sum(length(raw_query)), 0) AS n FROM pending_authorizations"
    )
    assert.strictEqual(total.chars, sum.n)
    const tooLong = await new Browser().fetch(`${authorizeUrl(s)}&junk=${"k".repeat(9000)}`)
    assert.strictEqual(tooLong.status, 414)
  })

  it("a flood of wrong secrets records one throttle event per lockout, not one per refused request", async () => {
    const client = await s.client({ name: "Audit flood" })
    const wrong = {
      ...client,
      basic: `Basic ${Buffer.from(`${client.appKey}:${"x".repeat(43)}`).toString("base64")}`
    }
    for (let i = 0; i < 60; i++) {
      const r = await token(s, { grant_type: "client_credentials" }, wrong)
      assert.oneOf(r.status, [401, 429])
    }
    const events = (type: string) =>
      query<{ n: number }>(
        "SELECT count(*) AS n FROM audit_events WHERE app_key = ? AND type = ?",
        client.appKey,
        type
      ).n
    assert.strictEqual(events("client_auth_throttled"), 1)
    assert.isAtMost(events("client_auth_failed"), 6)
  })
})
