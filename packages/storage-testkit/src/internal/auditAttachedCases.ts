/**
 * The events of `appendWith` belong to its write alone: when the write fails or is interrupted
 * before writing, a later write of the same fiber stores none of them. An adapter that attaches
 * events to a fiber's next write must drop them when the write's effect ends.
 */
import { assert, type Vitest } from "@effect/vitest"
import { AuditStore, type Stores, TokenStore } from "@latchkey/core"
import { Deferred, Effect, Fiber } from "effect"
import * as F from "../Fixtures.js"
import { event, isStored } from "./support.js"

const detailsOf = F.auditDetails

/** A write of the application with no events of its own: one access token. */
const plainWrite = (appKey: string) =>
  Effect.flatMap(TokenStore.TokenStore, (tokens) => {
    const token = F.token({ appKey })
    return Effect.as(tokens.insert([token]), token)
  })

/** Register the cases with the audit contract's `it`. */
export const auditAttachedCases = (
  it: Vitest.MethodsNonLive<Stores.Stores | AuditStore.AuditStore>
): void => {
  it.effect(
    "appendWith: the events of a write that failed before writing are not stored by the next write",
    () =>
      Effect.gen(function* () {
        const audit = yield* AuditStore.AuditStore
        const appKey = F.id("app")
        yield* Effect.flip(audit.appendWith([event(appKey, "not written")], Effect.fail("before the write")))
        const token = yield* plainWrite(appKey)
        yield* audit.appendWith([event(appKey, "written")], plainWrite(appKey))
        assert.isTrue(yield* isStored(token))
        assert.deepStrictEqual(yield* detailsOf(appKey), ["written"])
      })
  )

  it.effect(
    "appendWith: the events of a write interrupted before writing are not stored by a finalizer's write",
    () =>
      Effect.gen(function* () {
        const audit = yield* AuditStore.AuditStore
        const appKey = F.id("app")
        const started = yield* Deferred.make<void>()
        const written = yield* Deferred.make<boolean>()
        const waiting = Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)
        const fiber = yield* Effect.fork(
          Effect.ensuring(
            audit.appendWith([event(appKey, "interrupted")], waiting),
            // The interrupted fiber's finalizer writes, in the same fiber
            Effect.flatMap(Effect.orDie(plainWrite(appKey)), (token) =>
              Effect.flatMap(isStored(token), (stored) => Deferred.succeed(written, stored))
            ).pipe(Effect.orDie)
          )
        )
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        assert.isTrue(yield* Deferred.await(written), "the finalizer's write is stored")
        assert.deepStrictEqual(yield* detailsOf(appKey), [])
      })
  )
}
