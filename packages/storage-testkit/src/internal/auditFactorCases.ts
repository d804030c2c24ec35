/**
 * The second factor's writes with their audit events: an enrolment over a confirmed factor, a
 * confirmation of no pending one and a recovery code not (or no longer) there each fail and store
 * none of their events; the same writes that succeed store theirs.
 */
import { assert, type Vitest } from "@effect/vitest"
import { AuditStore, FactorStore, type Stores } from "@latchkey/core"
import { Effect } from "effect"
import * as F from "../Fixtures.js"
import { event } from "./support.js"

const T = F.baseTime

/** The audit cases of the second factor's writes. */
export const auditFactorCases = (it: Vitest.MethodsNonLive<Stores.Stores | AuditStore.AuditStore>): void => {
  it.effect("appendWith: a second-factor write that finds nothing to change stores none of its events", () =>
    Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const factors = yield* FactorStore.FactorStore
      const tag = F.id("app")
      const f = F.totpFactor()
      const digest = F.hash()
      yield* audit.appendWith([event(tag, "enrolled")], factors.enrol(f))
      const stale = yield* Effect.flip(
        audit.appendWith([event(tag, "stale")], factors.confirm(f.userId, "sealed.other", 1, [digest], T))
      )
      assert.strictEqual(stale._tag, "NotPending")
      yield* audit.appendWith(
        [event(tag, "confirmed")],
        factors.confirm(f.userId, f.sealedSecret, 1, [digest], T)
      )
      const active = yield* Effect.flip(
        audit.appendWith([event(tag, "again")], factors.enrol(F.totpFactor(f)))
      )
      assert.strictEqual(active._tag, "FactorActive")
      yield* audit.appendWith([event(tag, "used")], factors.useRecoveryCode(f.userId, digest))
      const reused = yield* Effect.flip(
        audit.appendWith([event(tag, "reused")], factors.useRecoveryCode(f.userId, digest))
      )
      assert.strictEqual(reused._tag, "UnknownRecoveryCode")
      const kept = yield* audit.tail({ limit: 100, appKey: tag })
      assert.deepStrictEqual(
        kept.map((e) => e.detail),
        ["enrolled", "confirmed", "used"]
      )
    })
  )
}
