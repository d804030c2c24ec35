import { Clock, Effect } from "effect"

/**
 * The current time in whole epoch seconds, rounded down, from the Clock service.
 * Something that expires at `expiresAt` is expired once `expiresAt <= nowSeconds`,
 * that is from the instant `expiresAt` itself.
 */
export const nowSeconds: Effect.Effect<number> = Effect.map(Clock.currentTimeMillis, (ms) =>
  Math.floor(ms / 1000)
)

/**
 * The issue time of something that expires, in whole epoch seconds: the current time
 * rounded up. `issueSeconds + ttl` is then at least `ttl` seconds away and less than
 * `ttl + 1`, so a token or code lives at least the lifetime it reports, never a second
 * more (docs/decisions.md, "Token and code lifetimes").
 */
export const issueSeconds: Effect.Effect<number> = Effect.map(Clock.currentTimeMillis, (ms) =>
  Math.ceil(ms / 1000)
)
