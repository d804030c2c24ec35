/**
 * Statements that carry audit events: a write and the events' INSERT as one statement (one
 * statement is one transaction, so neither is stored without the other), their texts built once
 * for each shape.
 */
import type { QueryResult } from "./database.js"
import { cachedTexts } from "./prepared.js"

const tails = cachedTexts((text: string) =>
  cachedTexts((events: string) => `WITH written AS (${text}) ${events}`)
)

/** `text` as a data-modifying CTE, then `events` (the INSERT of the audit events) as the statement. */
export const withEventsText = (text: string, events: string): string => tails(text)(events)

const answering = cachedTexts((text: string) => {
  const returns = /\bRETURNING\b/i.test(text)
  return cachedTexts((events: string) => ({
    returns,
    text: returns
      ? `WITH written AS (${text}), logged AS (${events}) SELECT * FROM written`
      : `WITH written AS (${text} RETURNING 1), logged AS (${events}) SELECT count(*)::int AS changed FROM written`
  }))
})

/**
 * `text` and `events` as data-modifying CTEs of one statement, and how to read its answer as
 * `text`'s own: the rows `text` returns, or else how many rows it changed.
 */
export const writeAndEvents = (
  text: string,
  events: string
): { readonly text: string; readonly answer: (r: QueryResult) => QueryResult } => {
  const { returns, text: both } = answering(text)(events)
  return { text: both, answer: returns ? returned : counted }
}

const returned = (r: QueryResult): QueryResult => ({ rows: r.rows, rowCount: r.rows.length })
const counted = (r: QueryResult): QueryResult => ({ rows: [], rowCount: Number(r.rows[0]?.changed ?? 0) })
