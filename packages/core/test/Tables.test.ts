/**
 * Reading a row back as its record (`Tables.fromRow`): a NULL in the column of an optional field
 * that takes no null reads as absent, a NULL of a field that takes null as null, and a NULL where
 * the record needs a value is refused.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Token } from "../src/model/Token.js"
import * as Tables from "../src/storage/Tables.js"

const scope = ["read"] as unknown as Token["scope"]

const token: Token = {
  tokenHash: "h".repeat(43),
  kind: "access",
  appKey: "app-key",
  userId: null,
  openId: null,
  scope,
  familyId: "family",
  parentHash: null,
  issuedAt: 1_700_000_000,
  expiresAt: 1_700_003_600,
  revokedAt: null,
  rotatedAt: null
}

/** A row as a driver reads it: the record's column values (JSON as text, a boolean as 0 or 1), keyed by field. */
const rowOf = <A>(t: Tables.Table<A>, record: A): Record<string, unknown> => {
  const values = Tables.asIntegers(Tables.values(t, record))
  return Object.fromEntries(t.columns.map((c, i) => [c.field, values[i]]))
}

describe("Tables.fromRow", () => {
  it("reads a token without a sign-in back without one: its NULL sign-in columns are absent, its NULL revocation null", () => {
    const row = rowOf(Tables.tokens, token)
    assert.strictEqual(row.authTime, null)
    assert.strictEqual(row.signInMethod, null)
    const read = Tables.fromRow(Tables.tokens, row)
    assert.deepStrictEqual(read, token)
    assert.isFalse("authTime" in read)
    assert.isFalse("signInMethod" in read)
  })

  it("reads a token with its sign-in back with it", () => {
    const signedIn: Token = { ...token, userId: "user-1", authTime: 1_699_999_000, signInMethod: "totp" }
    assert.deepStrictEqual(Tables.fromRow(Tables.tokens, rowOf(Tables.tokens, signedIn)), signedIn)
  })

  it("leaves out on NULL only the optional fields that take no null", () => {
    assert.deepStrictEqual([...Tables.tokens.absentWhenNull].sort(), ["authTime", "signInMethod"])
    assert.deepStrictEqual([...Tables.codes.absentWhenNull], ["signInMethod"])
    assert.deepStrictEqual([...Tables.sessions.absentWhenNull], ["method"])
    // A user's disabledAt is optional and takes null: NULL reads as null (enabled)
    assert.deepStrictEqual([...Tables.users.absentWhenNull], [])
    const user = { userId: "u", username: "ada", passwordHash: "hash", createdAt: 1, disabledAt: null }
    assert.deepStrictEqual(Tables.fromRow(Tables.users, user), user)
  })

  it("refuses a NULL where the record needs a value", () => {
    assert.throws(() => Tables.fromRow(Tables.tokens, { ...rowOf(Tables.tokens, token), expiresAt: null }))
    assert.throws(() =>
      Tables.fromRow(Tables.tokens, { ...rowOf(Tables.tokens, token), signInMethod: "sms" })
    )
  })
})
