/**
 * The storage contract for RP-initiated logout: an application's `postLogoutRedirectUris`
 * (stored, defaulted to none, changed and cleared by update, kept by other updates) and a code's
 * `sid` (stored, kept by redemption, null when left out), in every store.
 */
import { assert, type Vitest } from "@effect/vitest"
import { ApplicationStore, AuditStore, CodeStore, type Stores, Transaction } from "@latchkey/core"
import { Effect } from "effect"
import * as F from "../Fixtures.js"
import { Sessions, stored } from "./sessions.js"
import { some } from "./support.js"

const T = F.baseTime

const find = (appKey: string) =>
  Effect.flatMap(ApplicationStore.ApplicationStore, (s) => s.find(appKey)).pipe(
    Effect.map((o) => some(o, "application"))
  )

/** Register the cases of the logout fields on `it`. */
export const logoutCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "applications: post-logout redirect URIs round-trip through insert, find, list and update, and clear to none",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const uris = ["https://app.example/bye", "http://127.0.0.1:8080/signed-out?x=1"]
        const app = F.application({ postLogoutRedirectUris: uris })
        yield* apps.insert(app)
        assert.deepStrictEqual(yield* find(app.appKey), app)
        assert.deepStrictEqual(
          (yield* apps.list()).find((a) => a.appKey === app.appKey),
          app
        )
        // Left out of an update, they stay
        const renamed = some(yield* apps.update(app.appKey, { name: "Renamed" }, T), "updated")
        assert.deepStrictEqual(renamed.postLogoutRedirectUris, uris)
        const changed = some(
          yield* apps.update(app.appKey, { postLogoutRedirectUris: ["https://app.example/other"] }, T),
          "updated"
        )
        assert.deepStrictEqual(changed, {
          ...app,
          name: "Renamed",
          postLogoutRedirectUris: ["https://app.example/other"]
        })
        const cleared = some(yield* apps.update(app.appKey, { postLogoutRedirectUris: [] }, T), "updated")
        assert.deepStrictEqual(cleared.postLogoutRedirectUris, [])
        assert.deepStrictEqual((yield* find(app.appKey)).postLogoutRedirectUris, [])
      })
  )

  it.effect("applications: one inserted without post-logout redirect URIs reads them back as none", () =>
    Effect.gen(function* () {
      const apps = yield* ApplicationStore.ApplicationStore
      const { postLogoutRedirectUris: _l, ...bare } = F.application()
      yield* apps.insert(bare)
      assert.deepStrictEqual((yield* find(bare.appKey)).postLogoutRedirectUris, [])
    })
  )

  it.effect("codes: sid round-trips and survives redemption", () =>
    Effect.gen(function* () {
      const codes = yield* CodeStore.CodeStore
      const c = F.code({ nonce: `n-${F.hash()}`, authTime: T - 30, sid: F.hash() })
      yield* F.insertCode(c)
      assert.deepStrictEqual(some(yield* codes.find(c.codeHash), "code"), c)
      yield* codes.redeem(c.codeHash, T + 1, [])
      assert.deepStrictEqual(some(yield* codes.find(c.codeHash), "code"), { ...c, usedAt: T + 1 })
    })
  )
}

/**
 * A logout is one write: the session's removal and its `logout` event are stored together, and a
 * logout whose write fails after the removal leaves the session and stores no event.
 */
export const logoutAuditCases = (it: Vitest.MethodsNonLive<Stores.Stores | AuditStore.AuditStore>): void => {
  it.effect("logout: the session's removal and its logout event commit together, or neither does", () =>
    Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const sessions = yield* Sessions
      const appKey = F.id("app")
      const kept = F.signedInSession()
      const ended = F.signedInSession()
      yield* sessions.save(kept)
      yield* sessions.save(ended)
      const logout = { ...F.auditEvent(appKey, "refused"), type: "logout" as const }
      const failing = Effect.zipRight(sessions.remove(kept.idHash), Effect.fail("after the removal"))
      yield* Effect.flip(Transaction.atomically(audit.appendWith([logout], failing)))
      yield* Transaction.atomically(
        audit.appendWith([{ ...logout, detail: "ended" }], sessions.remove(ended.idHash))
      )
      assert.deepStrictEqual(yield* stored([ended]), [false])
      assert.deepStrictEqual(yield* F.auditDetails(appKey), ["ended"])
      // Without a Transaction (the memory store) a failed write may have removed the session: only
      // a store that runs the unit as one transaction must keep it
      const tx = yield* Effect.serviceOption(Transaction.Transaction)
      if (tx._tag === "Some") assert.deepStrictEqual(yield* stored([kept]), [true])
    })
  )
}
