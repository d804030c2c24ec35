/**
 * The span of one request: `Effect.withSpan` when the runtime's tracer is enabled, and the effect
 * as it is when it is not (`Layer.setTracerEnabled(false)`, e.g. a server exporting no traces),
 * so a request then pays one step instead of making, providing and ending a span that goes nowhere.
 */
import { Effect, FiberRef } from "effect"

/** `effect` in a span named `name` (no stack capture) when tracing is enabled. */
export const span =
  (name: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(FiberRef.get(FiberRef.currentTracerEnabled), (enabled) =>
      enabled ? Effect.withSpan(effect, name, { captureStackTrace: false }) : effect
    )
