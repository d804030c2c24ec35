/**
 * The names statements are prepared under: one per text, never one for two texts, and at most
 * `maxNamed` of them, so a connection's prepared statements stay bounded whatever texts it sees.
 */
import { describe, expect, it } from "vitest"
import type { Pool, QueryConfig, QueryResult } from "../src/internal/database.js"
import { maxNamed, nameOf, send } from "../src/internal/prepared.js"

/** A pool that answers no rows and keeps what it was sent. */
const recording = () => {
  const sent: Array<string | QueryConfig> = []
  const answer: QueryResult = { rows: [], rowCount: 0 }
  const pool: Pick<Pool, "query"> = {
    query: async (statement: string | QueryConfig) => {
      sent.push(statement)
      return answer
    }
  }
  return { pool, sent }
}

describe("named prepared statements", () => {
  it("name a text the same every time, and two texts differently", () => {
    const a = "SELECT 1 FROM tokens WHERE token_hash = $1"
    const b = "SELECT 1 FROM tokens WHERE token_hash = $2"
    expect(nameOf(a)).toBe(nameOf(a))
    expect(nameOf(a)).not.toBe(nameOf(b))
    expect(nameOf(a)).toMatch(/^latchkey_[0-9a-z]+_[0-9a-z]+$/)
  })

  it("send a statement with parameters under its name, one without unnamed, and none when prepare is off", async () => {
    const { pool, sent } = recording()
    await send(pool, "SELECT $1::int AS n", [1], true)
    await send(pool, "BEGIN", [], true)
    await send(pool, "SELECT $1::int AS n", [1], false)
    expect(sent).toEqual([
      { name: nameOf("SELECT $1::int AS n"), text: "SELECT $1::int AS n", values: [1] },
      "BEGIN",
      "SELECT $1::int AS n"
    ])
  })

  it(`name at most ${maxNamed} texts; the ones after go unnamed`, async () => {
    for (let i = 0; i < maxNamed; i++) nameOf(`SELECT ${i} WHERE $1::int > 0`)
    const late = `SELECT 'late' WHERE $1::int > 0`
    expect(nameOf(late)).toBeUndefined()
    expect(nameOf("SELECT 0 WHERE $1::int > 0")).toBeDefined()
    const { pool, sent } = recording()
    await send(pool, late, [1], true)
    expect(sent).toEqual([late])
  })
})
