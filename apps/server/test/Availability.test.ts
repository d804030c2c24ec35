/**
 * The store's availability in the log: one error line when it stops answering, one info line when
 * it answers again, whatever the number of failed calls in between; the health ping decides.
 */
import { assert, describe, it } from "@effect/vitest"
import { SettingStore, StorageError, StorageHealth } from "@latchkey/core"
import { Context, Effect, HashMap, Layer, Logger, Queue, TestClock } from "effect"
import * as Availability from "../src/Availability.js"

/** A store of one service whose answers the test turns on and off, its pings announced on `pinged`. */
const fakeStore = (pinged: Queue.Queue<boolean>) => {
  const state = { up: true }
  const down = new StorageError.StorageError({ message: "the database cannot be reached (ECONNREFUSED)" })
  const answer = <A>(value: A) => Effect.suspend(() => (state.up ? Effect.succeed(value) : Effect.fail(down)))
  const layer = Layer.succeedContext(
    Context.make(SettingStore.SettingStore, { getOrCreate: (_name, candidate) => answer(candidate) }).pipe(
      Context.add(StorageHealth.StorageHealth, {
        ping: Effect.zipRight(
          Effect.suspend(() => Queue.offer(pinged, state.up)),
          answer(undefined)
        )
      })
    )
  )
  return { state, layer }
}

describe("Availability.watched", () => {
  it.scoped("logs the change to unavailable once, with the reason, and back once, with how long", () =>
    Effect.gen(function* () {
      const pinged = yield* Queue.unbounded<boolean>()
      const logged = yield* Queue.unbounded<{
        level: string
        message: string
        fields: Record<string, unknown>
      }>()
      const logger = Logger.make(({ logLevel, message, annotations }) => {
        const fields = Object.fromEntries(HashMap.toEntries(annotations))
        Queue.unsafeOffer(logged, { level: logLevel.label, message: String([message].flat()[0]), fields })
      })
      const { state, layer } = fakeStore(pinged)
      const context = yield* Layer.build(Availability.watched(layer, "postgres://db.example/latchkey"))
      const call = Effect.flatMap(SettingStore.SettingStore, (s) => s.getOrCreate("k", "v")).pipe(
        Effect.provide(context),
        Effect.either,
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      const readyz = Effect.either(Effect.provide(StorageHealth.ping, context)).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )

      // Answering: no ping, no line
      assert.strictEqual((yield* call)._tag, "Right")
      assert.strictEqual((yield* readyz)._tag, "Right")
      assert.strictEqual(yield* Queue.size(pinged), 1)
      yield* Queue.take(pinged)

      // The first failed call has the ping run, which logs the change
      state.up = false
      assert.strictEqual((yield* call)._tag, "Left")
      assert.strictEqual(yield* Queue.take(pinged), false)
      assert.deepStrictEqual(yield* Queue.take(logged), {
        level: "ERROR",
        message: "database unavailable",
        fields: {
          db: "postgres://db.example/latchkey",
          reason: "the database cannot be reached (ECONNREFUSED)"
        }
      })
      // Every further failure, and /readyz's own failed pings, say nothing more
      for (let i = 0; i < 20; i++) assert.strictEqual((yield* call)._tag, "Left")
      for (let i = 0; i < 3; i++) assert.strictEqual((yield* readyz)._tag, "Left")
      assert.strictEqual(yield* Queue.size(logged), 0)

      // Back after 90 s: the first successful call has the ping confirm it, logged once
      yield* TestClock.adjust("90 seconds")
      yield* Queue.takeAll(pinged)
      state.up = true
      assert.strictEqual((yield* call)._tag, "Right")
      assert.strictEqual(yield* Queue.take(pinged), true)
      assert.deepStrictEqual(yield* Queue.take(logged), {
        level: "INFO",
        message: "database available again",
        fields: { db: "postgres://db.example/latchkey", unavailableSeconds: 90 }
      })
      for (let i = 0; i < 5; i++) assert.strictEqual((yield* call)._tag, "Right")
      assert.strictEqual((yield* readyz)._tag, "Right")
      assert.strictEqual(yield* Queue.size(logged), 0)
    })
  )

  it.scoped("a failed call the ping contradicts (the store answers) changes nothing and logs nothing", () =>
    Effect.gen(function* () {
      const pinged = yield* Queue.unbounded<boolean>()
      const { layer } = fakeStore(pinged)
      const refusing = Layer.succeedContext(
        Context.make(SettingStore.SettingStore, {
          getOrCreate: () =>
            Effect.fail(new StorageError.StorageError({ message: "a database constraint was violated" }))
        })
      )
      const context = yield* Layer.build(Availability.watched(Layer.merge(layer, refusing), "db"))
      const lines: Array<string> = []
      const logger = Logger.make(({ message }) => lines.push(String([message].flat()[0])))
      const call = Effect.flatMap(SettingStore.SettingStore, (s) => s.getOrCreate("k", "v")).pipe(
        Effect.provide(context),
        Effect.either,
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      assert.strictEqual((yield* call)._tag, "Left")
      assert.strictEqual(yield* Queue.take(pinged), true)
      // /readyz's ping agrees: still available, and nothing was logged
      assert.strictEqual((yield* Effect.either(Effect.provide(StorageHealth.ping, context)))._tag, "Right")
      assert.deepStrictEqual(lines, [])
    })
  )
})
