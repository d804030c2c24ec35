/**
 * The query part of the audit contract: `AuditStore.query` filters by application, type and
 * time, returns the newest `limit` events newest first, and every event keeps its actor.
 */
import { assert, type Vitest } from "@effect/vitest"
import { Audit, AuditStore, type Stores, TokenStore } from "@latchkey/core"
import { Effect } from "effect"
import * as F from "../Fixtures.js"
import { event, outOfOrder } from "./support.js"

const T = F.baseTime

// After every other test's events (theirs are around `baseTime` or long before): the events of
// the test without an application filter all share it, so only the order appended sorts them,
// even in a store that already holds events of an earlier run.
const far = 4_000_000_000

/** The details of the events `filter` selects, newest first. */
const details = (filter: AuditStore.AuditQuery) =>
  Effect.flatMap(AuditStore.AuditStore, (a) =>
    Effect.map(a.query(filter), (events) => events.map((e) => e.detail))
  )

/** The newest events of an application in order, and the type and time filters. */
const orderAndFilters = (it: Vitest.MethodsNonLive<Stores.Stores | AuditStore.AuditStore>): void => {
  it.effect(
    "query: the newest `limit` events of an application, newest first by time, then by order appended",
    () =>
      Effect.gen(function* () {
        const audit = yield* AuditStore.AuditStore
        const appKey = F.id("app")
        const times = outOfOrder
        const appended = times.map(([detail, offset]) => event(appKey, detail, T + offset))
        for (const e of appended) yield* audit.append(e)
        yield* audit.append(event(F.id("app"), "other application", T + 8))
        yield* audit.append(event(null, "no application", T + 8))
        assert.deepStrictEqual(yield* details({ limit: 100, appKey }), ["9", "7", "5", "3", "1b", "1a"])
        assert.deepStrictEqual(yield* details({ limit: 2, appKey }), ["9", "7"])
        assert.deepStrictEqual(yield* details({ limit: 0, appKey }), [])
        assert.deepStrictEqual(yield* details({ limit: -1, appKey }), [])
        // Whole records come back, as appended.
        assert.deepStrictEqual(
          yield* audit.query({ limit: 1, appKey }),
          appended.filter((e) => e.detail === "9")
        )
        assert.deepStrictEqual(yield* details({ limit: 10, appKey: F.id("app") }), [])
      })
  )

  it.effect("query: filters by type and by time (at >= since), alone and together", () =>
    Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const appKey = F.id("app")
      const events: ReadonlyArray<readonly [string, number, Audit.EventType]> = [
        ["i1", 1, "token_issued"],
        ["u2", 2, "user_updated"],
        ["i3", 3, "token_issued"],
        ["w3", 3, "consent_withdrawn"],
        ["u4", 4, "user_updated"],
        ["i5", 5, "token_issued"]
      ]
      for (const [detail, offset, type] of events)
        yield* audit.append(event(appKey, detail, T + offset, type))
      assert.deepStrictEqual(yield* details({ limit: 100, appKey, type: "token_issued" }), ["i5", "i3", "i1"])
      assert.deepStrictEqual(yield* details({ limit: 100, appKey, since: T + 3 }), ["i5", "u4", "w3", "i3"])
      assert.deepStrictEqual(yield* details({ limit: 100, appKey, type: "user_updated", since: T + 3 }), [
        "u4"
      ])
      assert.deepStrictEqual(yield* details({ limit: 1, appKey, type: "token_issued", since: T + 2 }), ["i5"])
      assert.deepStrictEqual(yield* details({ limit: 100, appKey, since: T + 6 }), [])
      assert.deepStrictEqual(yield* details({ limit: 100, appKey, type: "secret_rotated" }), [])
      // A filter given as undefined selects everything, as one left out does.
      assert.deepStrictEqual(yield* details({ limit: 100, appKey, type: undefined, since: undefined }), [
        "i5",
        "u4",
        "w3",
        "i3",
        "u2",
        "i1"
      ])
    })
  )
}

/** Every event type, queries across applications, and the actor of each event. */
const typesApplicationsAndActor = (
  it: Vitest.MethodsNonLive<Stores.Stores | AuditStore.AuditStore>
): void => {
  it.effect("query: every event type is stored and selected by its type", () =>
    Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const appKey = F.id("app")
      const types = Audit.EventType.literals
      for (const [i, type] of types.entries()) yield* audit.append(event(appKey, type, T + i, type))
      for (const type of types) {
        const found = yield* audit.query({ limit: 10, appKey, type })
        assert.deepStrictEqual(
          found.map((e) => [e.type, e.detail]),
          [[type, type]]
        )
      }
      assert.strictEqual((yield* audit.query({ limit: 100, appKey })).length, types.length)
    })
  )

  it.effect("query without an application: events of every application and of none, newest first", () =>
    Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const a = F.id("app")
      const b = F.id("app")
      yield* audit.append(event(a, "x0", far))
      yield* audit.append(event(b, "x1", far, "user_created"))
      yield* audit.append(event(null, "x2", far, "user_created"))
      yield* audit.append(event(a, "x3", far, "user_created"))
      yield* audit.append(event(b, "x4", far))
      assert.deepStrictEqual(yield* details({ limit: 3 }), ["x4", "x3", "x2"])
      assert.deepStrictEqual(yield* details({ limit: 3, since: far }), ["x4", "x3", "x2"])
      assert.deepStrictEqual(yield* details({ limit: 2, type: "user_created" }), ["x3", "x2"])
      assert.deepStrictEqual(yield* details({ limit: 3, type: "user_created", since: far }), [
        "x3",
        "x2",
        "x1"
      ])
    })
  )

  it.effect("actor: stored with the event, null when the event has none; tail and query return it", () =>
    Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const tokens = yield* TokenStore.TokenStore
      const appKey = F.id("app")
      const byAdmin = { ...event(appKey, "admin", T + 1, "application_updated"), actor: "admin-api" }
      const byNobody = event(appKey, "null", T + 2)
      const { actor: _, ...absent } = event(appKey, "absent", T + 3)
      const byUser = { ...event(appKey, "user", T + 4, "consent_withdrawn"), actor: "user" }
      yield* audit.append(byAdmin)
      yield* audit.append(byNobody)
      yield* audit.append(absent)
      yield* audit.appendWith([byUser], tokens.insert([F.token({ appKey })]))
      const stored = [byAdmin, byNobody, { ...absent, actor: null }, byUser]
      assert.deepStrictEqual(yield* audit.tail({ limit: 10, appKey }), stored)
      assert.deepStrictEqual(yield* audit.query({ limit: 10, appKey }), [...stored].reverse())
    })
  )
}

/** Register the query cases with the audit contract's `it`. */
export const auditQueryCases = (it: Vitest.MethodsNonLive<Stores.Stores | AuditStore.AuditStore>): void => {
  orderAndFilters(it)
  typesApplicationsAndActor(it)
}
