/**
 * Audit events attached to a write (`appendWith`) are stored by that write alone: those of an
 * effect that ended without writing are dropped, not stored by the fiber's next write, also inside
 * a unit (on PGlite).
 */
import { assert, layer } from "@effect/vitest"
import { AuditStore, SessionStore, Transaction } from "@latchkey/core"
import { Fixtures } from "@latchkey/storage-testkit"
import { Effect } from "effect"
import { pgliteLayer } from "./support/pglite.js"

const auditEvent = (appKey: string, detail: string) => Fixtures.auditEvent(appKey, detail)
const detailsOf = Fixtures.auditDetails

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
