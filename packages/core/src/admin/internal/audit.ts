/**
 * The audit trail as administrators read it (`Admin.queryAudit`, for the CLI and the admin API),
 * with the one bound on how many events a query returns.
 */
import { Effect, Either, Schema } from "effect"
import * as Audit from "../../security/Audit.js"
import { AuditStore } from "../../storage/AuditStore.js"
import { InvalidField, invalid, plain } from "./fields.js"

/** Most audit events one query returns: the CLI's `audit tail --limit` and the admin API's `limit` included. */
export const maxAuditLimit = 1000
/** Audit events a query returns when it names no limit. */
export const defaultAuditLimit = 100

/**
 * `limit` when it is a whole number from 1 to `maxAuditLimit` (`defaultAuditLimit` when absent);
 * else `InvalidField` for `limit`. Every caller checks a limit with it, before anything runs.
 */
export const auditLimit = (limit: number | undefined): Either.Either<number, InvalidField> => {
  const value = limit ?? defaultAuditLimit
  return Number.isInteger(value) && value >= 1 && value <= maxAuditLimit
    ? Either.right(value)
    : Either.left(
        new InvalidField({
          field: "limit",
          description: `limit must be a whole number from 1 to ${maxAuditLimit}`
        })
      )
}

/** What `queryAudit` selects; every filter given must match. */
export interface AuditFilter {
  /** How many events at most: 1 to `maxAuditLimit`, default `defaultAuditLimit`. */
  readonly limit?: number | undefined
  readonly appKey?: string | undefined
  /** An `Audit.EventType`. */
  readonly type?: string | undefined
  /** Epoch seconds: events recorded at or after it. */
  readonly since?: number | undefined
}

const isEventType = Schema.is(Audit.EventType)

/**
 * The newest audit events matching `filter`, oldest first (the newest last, as `tail` prints
 * lines): the order of `audit tail` and of `GET /admin/v1/audit`. To follow the trail, ask again
 * with `since` at the last event's time.
 */
export const queryAudit = Effect.fn("Admin.queryAudit")(function* (filter: AuditFilter) {
  const limit = yield* auditLimit(filter.limit)
  if (filter.appKey !== undefined) yield* plain("app_key", filter.appKey)
  const type = filter.type
  if (type !== undefined) yield* plain("type", type)
  if (type !== undefined && !isEventType(type)) {
    return yield* invalid("type", `unknown event type ${JSON.stringify(type)}`)
  }
  if (filter.since !== undefined && !Number.isSafeInteger(filter.since)) {
    return yield* invalid("since", "since must be a time in whole epoch seconds")
  }
  const store = yield* AuditStore
  const newest = yield* store.query({ limit, appKey: filter.appKey, type, since: filter.since })
  return [...newest].reverse()
})

// A date, or a date and time with seconds optional, fraction optional and a zone required
const isoTime = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/

/**
 * A point in time as an administrator writes it: whole epoch seconds, or ISO 8601 (a date, taken
 * as midnight UTC, or a date and time with `Z` or an offset). Epoch seconds rounded down, or null
 * when `value` is neither.
 */
export const parseSince = (value: string): number | null => {
  if (/^\d{1,12}$/.test(value)) return Number(value)
  if (!isoTime.test(value)) return null
  const [year, month, day] = value.slice(0, 10).split("-").map(Number) as [number, number, number]
  // Date.parse rolls 2026-02-30 over into March: a day the month does not have is refused
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null
  const ms = Date.parse(value)
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null
}
