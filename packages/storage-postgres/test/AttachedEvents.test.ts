/**
 * Audit events attached to a write (`appendWith`) are stored by that write alone: those of an
 * effect that ended without writing are dropped, not stored by the fiber's next write, also inside
 * a unit (on PGlite).
 */
import { assert, layer } from "@effect/vitest"
import { type Audit, AuditStore, SessionStore, Transaction } from "@latchkey/core"
import { Fixtures } from "@latchkey/storage-testkit"
import { Effect } from "effect"
import { pgliteLayer } from "./support/pglite.js"

const auditEvent = (appKey: string, detail: string): Audit.AuditEvent => ({
  at: Fixtures.baseTime,
  type: "signin_succeeded",
  appKey,
  userId: null,
  openId: null,
  address: null,
  requestId: null,
  detail,
  actor: null
})

const detailsOf = (appKey: string) =>
  Effect.flatMap(AuditStore.AuditStore, (a) => a.tail({ limit: 10, appKey })).pipe(
    Effect.map((events) => events.map((e) => e.detail))
  )

layer(pgliteLayer(), { timeout: "60 seconds" })("attached audit events on PGlite", (it) => {
  it.effect(
    "events attached to an effect that ended without writing are not stored by the fiber's next write",
    () =>
      Effect.gen(function* () {
        const audit = yield* AuditStore.AuditStore
        const sessions = yield* SessionStore.SessionStore
        const appKey = Fixtures.id("app")
        yield* audit.appendWith([auditEvent(appKey, "nothing written")], Effect.void)
        yield* sessions.save(Fixtures.session())
        yield* Transaction.atomically(
          Effect.zipRight(
            audit.appendWith([auditEvent(appKey, "nothing written in a unit")], Effect.void),
            sessions.save(Fixtures.session())
          )
        )
        assert.deepStrictEqual(yield* detailsOf(appKey), [])
      })
  )
})
