/**
 * The append and purge part of the audit contract: append-only events, events stored in the
 * transaction of the change they record (`appendWith`), and the bounded purge of events older than
 * a cutoff (`purgeBefore`).
 */
import { assert, type Vitest } from "@effect/vitest"
import { AuditStore, CodeStore, type Stores, TokenStore } from "@latchkey/core"
import { Array as Arr, Effect, Exit } from "effect"
import * as F from "../Fixtures.js"
import { event, isStored, outOfOrder, purgeEra } from "./support.js"

const T = F.baseTime

// Long past: an adapter enforcing a retention (the SQLite store, 90 days by default, on the
// database's clock) lets events of that time be purged.
const longAgo = purgeEra

/** The events of the application, oldest first. */
const eventsOf = (appKey: string) =>
  Effect.flatMap(AuditStore.AuditStore, (a) => a.tail({ limit: 1000, appKey }))

/** Appending and tailing events, and events stored with a write that succeeds. */
const appends = (it: Vitest.MethodsNonLive<Stores.Stores | AuditStore.AuditStore>): void => {
  it.effect("append then tail: the newest events come back oldest first, per application if asked", () =>
    Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const a = F.id("app")
      const b = F.id("app")
      for (let i = 0; i < 5; i++) yield* audit.append(event(i % 2 === 0 ? a : b, `e${i}`))
      assert.deepStrictEqual(
        (yield* eventsOf(a)).map((e) => e.detail),
        ["e0", "e2", "e4"]
      )
      const last = yield* audit.tail({ limit: 2 })
      assert.deepStrictEqual(
        last.map((e) => e.detail),
        ["e3", "e4"]
      )
    })
  )

  it.effect("appendWith: the events are stored with a write that succeeds", () =>
    Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const tokens = yield* TokenStore.TokenStore
      const appKey = F.id("app")
      const issued = F.pair({ appKey })
      yield* audit.appendWith([event(appKey, "first"), event(appKey, "second")], tokens.insert(issued))
      for (const t of issued) assert.isTrue(yield* isStored(t))
      assert.deepStrictEqual(
        (yield* eventsOf(appKey)).map((e) => e.detail),
        ["first", "second"]
      )
    })
  )
}

/** A write that is refused or fails stores none of its events, also under concurrency. */
const failedWrites = (it: Vitest.MethodsNonLive<Stores.Stores | AuditStore.AuditStore>): void => {
  it.effect("appendWith: a refused or failed write stores neither its change nor its events", () =>
    Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const codes = yield* CodeStore.CodeStore
      const tokens = yield* TokenStore.TokenStore
      const appKey = F.id("app")
      const c = F.code({ appKey })
      yield* F.insertCode(c)
      yield* codes.redeem(c.codeHash, T + 1, [])
      const again = F.pair({ appKey, familyId: c.familyId })
      const refused = yield* Effect.flip(
        audit.appendWith([event(appKey, "replayed")], codes.redeem(c.codeHash, T + 2, again))
      )
      assert.strictEqual(refused._tag, "CodeAlreadyUsed")
      const [existing] = F.pair({ appKey })
      yield* tokens.insert([existing])
      const fresh = F.token({ appKey })
      const failed = yield* Effect.exit(
        audit.appendWith(
          [event(appKey, "duplicate")],
          tokens.insert([fresh, F.token({ appKey, tokenHash: existing.tokenHash })])
        )
      )
      assert.isTrue(Exit.isFailure(failed))
      for (const t of [...again, fresh]) assert.isFalse(yield* isStored(t))
      assert.deepStrictEqual(yield* eventsOf(appKey), [])
    })
  )

  it.effect("appendWith under concurrency: a failing write loses only its own change and events", () =>
    Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const tokens = yield* TokenStore.TokenStore
      const appKey = F.id("app")
      const [existing] = F.pair({ appKey })
      yield* tokens.insert([existing])
      const batches = Arr.makeBy(20, (i) =>
        i === 7
          ? [F.token({ appKey }), F.token({ appKey, tokenHash: existing.tokenHash })]
          : [F.token({ appKey })]
      )
      const exits = yield* Effect.all(
        batches.map((batch, i) =>
          Effect.exit(audit.appendWith([event(appKey, `w${i}`)], tokens.insert(batch)))
        ),
        { concurrency: "unbounded" }
      )
      for (const [i, exit] of exits.entries()) assert.strictEqual(Exit.isSuccess(exit), i !== 7)
      for (const [i, batch] of batches.entries()) {
        assert.strictEqual(yield* isStored(batch[0] as { kind: "access"; tokenHash: string }), i !== 7)
      }
      const details = (yield* eventsOf(appKey)).map((e) => e.detail).sort()
      assert.deepStrictEqual(
        details,
        batches
          .map((_, i) => `w${i}`)
          .filter((d) => d !== "w7")
          .sort()
      )
    })
  )
}

/** The bounded purge of events before a cutoff. */
const purgeBefore = (it: Vitest.MethodsNonLive<Stores.Stores | AuditStore.AuditStore>): void => {
  it.effect("purgeBefore: only events before the cutoff, at most limit, oldest first", () =>
    Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const appKey = F.id("app")
      const times = outOfOrder
      for (const [detail, offset] of times) yield* audit.append(event(appKey, detail, longAgo + offset))
      const recent = event(appKey, "recent")
      yield* audit.append(recent)
      const left = () => Effect.map(eventsOf(appKey), (events) => events.map((e) => e.detail))

      assert.strictEqual(yield* audit.purgeBefore(longAgo + 8, 0), 0)
      assert.strictEqual(yield* audit.purgeBefore(longAgo + 8, -3), 0)
      assert.deepStrictEqual(yield* left(), ["5", "1a", "9", "1b", "3", "7", "recent"])
      assert.strictEqual(yield* audit.purgeBefore(longAgo + 8, 1), 1)
      assert.deepStrictEqual(yield* left(), ["5", "9", "1b", "3", "7", "recent"])
      assert.strictEqual(yield* audit.purgeBefore(longAgo + 8, 2), 2)
      assert.deepStrictEqual(yield* left(), ["5", "9", "7", "recent"])
      assert.strictEqual(yield* audit.purgeBefore(longAgo + 8, 1000), 2)
      assert.deepStrictEqual(yield* left(), ["9", "recent"])
      // `at < cutoff`: an event at the cutoff itself stays.
      assert.strictEqual(yield* audit.purgeBefore(longAgo + 9, 1000), 0)
      assert.deepStrictEqual(yield* left(), ["9", "recent"])
      assert.strictEqual(yield* audit.purgeBefore(longAgo + 10, 1000), 1)
      assert.deepStrictEqual(yield* left(), ["recent"])
      // The events still there come back as before, newest last.
      assert.deepStrictEqual(yield* audit.tail({ limit: 1, appKey }), [recent])
    })
  )
}

/** Register the append and purge cases with the audit contract's `it`. */
export const auditCases = (it: Vitest.MethodsNonLive<Stores.Stores | AuditStore.AuditStore>): void => {
  appends(it)
  failedWrites(it)
  purgeBefore(it)
}
