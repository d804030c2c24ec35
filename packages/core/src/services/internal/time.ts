import { Clock, Effect } from "effect"

/**
 * The current time in whole epoch seconds, rounded down, from the Clock service.
 * Something that expires at `expiresAt` is expired once `expiresAt <= nowSeconds`,
 * that is from the instant `expiresAt` itself.
 */
export const nowSeconds: Effect.Effect<number> = Effect.map(Clock.currentTimeMillis, (ms) =>
  Math.floor(ms / 1000)
)

/** The instant something is issued, in whole epoch seconds, rounded both ways. */
export interface IssueTime {
  /** Rounded down: never after the instant (RFC 7519 §4.1.6), the `iat` of a JWT and of introspection. */
  readonly issuedAt: number
  /** Rounded up: what lifetimes count from (`expiry`). */
  readonly startsAt: number
}

/** The issue instant of something that expires at `ms` epoch milliseconds. */
export const issueTimeAt = (ms: number): IssueTime => ({
  issuedAt: Math.floor(ms / 1000),
  startsAt: Math.ceil(ms / 1000)
})

/** The issue instant of something that expires, read once from the Clock service. */
export const issueTime: Effect.Effect<IssueTime> = Effect.map(Clock.currentTimeMillis, issueTimeAt)

/**
 * When something issued at `time` and living `ttl` seconds expires: at least `ttl` seconds after
 * the issue instant and less than `ttl + 1`, so it lives at least the lifetime it reports, never a
 * second more (docs/decisions.md, "Token and code lifetimes").
 */
export const expiry = (time: IssueTime, ttl: number): number => time.startsAt + ttl

/**
 * The issue time of something that expires, in whole epoch seconds: the current time
 * rounded up (`IssueTime.startsAt`), what lifetimes start from (`expiresAt = issueSeconds + ttl`).
 */
export const issueSeconds: Effect.Effect<number> = Effect.map(issueTime, (time) => time.startsAt)
