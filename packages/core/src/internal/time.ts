import { Clock, Effect } from "effect"

/** The current time in whole epoch seconds, from the Clock service. */
export const nowSeconds: Effect.Effect<number> = Effect.map(Clock.currentTimeMillis, (ms) =>
  Math.floor(ms / 1000)
)
