import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { span } from "../../src/services/internal/span.js"

// With the tracer disabled a span is not observable either way (Effect's would be a no-op one):
// what skipping it saves is cost, which the benchmark shows.
describe("a request's span", () => {
  it.effect("is made, under its name, when the tracer is enabled", () =>
    Effect.gen(function* () {
      const name = yield* span("Http.token")(Effect.map(Effect.currentSpan, (s) => s.name)).pipe(
        Effect.option
      )
      assert.deepStrictEqual(name, Option.some("Http.token"))
    })
  )
})
