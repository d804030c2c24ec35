/**
 * An application's `require_mfa` through the admin API: accepted at registration and in a patch
 * (recorded as a changed field), shown only when true, refused when not a boolean, and what the
 * authorize flow reads (`Application.requiresMfa`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Application from "../src/model/Application.js"
import { ApplicationStore } from "../src/storage/ApplicationStore.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import { Audited, adminApi as api } from "./adminApi.js"
import { cb } from "./fixtures.js"

const stored = (appKey: string) =>
  Effect.flatMap(ApplicationStore, (apps) =>
    Effect.map(apps.find(appKey), (a) => a._tag === "Some" && Application.requiresMfa(a.value))
  )

describe("AdminApi: require_mfa", () => {
  it.effect(
    "create with require_mfa: true shows it and stores it; a default application shows no require_mfa",
    () =>
      Effect.gen(function* () {
        const created = yield* api("POST", "/applications", {
          name: "Strict",
          redirect_uris: [cb],
          require_mfa: true
        })
        assert.strictEqual(created.status, 201)
        assert.strictEqual(created.json.require_mfa, true)
        const appKey = created.json.app_key as string
        assert.isTrue(yield* stored(appKey))
        assert.strictEqual((yield* api("GET", `/applications/${appKey}`)).json.require_mfa, true)
        const plain = yield* api("POST", "/applications", { name: "Plain", redirect_uris: [cb] })
        assert.isFalse("require_mfa" in plain.json, "an application that does not ask shows as before")
        assert.isFalse(yield* stored(plain.json.app_key as string))
      }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "PATCH turns it on and off, recorded as a changed field; a non-boolean is refused and changes nothing",
    () =>
      Effect.gen(function* () {
        const created = yield* api("POST", "/applications", { name: "Later", redirect_uris: [cb] })
        const appKey = created.json.app_key as string
        const on = yield* api("PATCH", `/applications/${appKey}`, { require_mfa: true })
        assert.deepStrictEqual([on.status, on.json.require_mfa], [200, true])
        const events = yield* Effect.flatMap(AuditStore, (a) =>
          a.query({ limit: 10, type: "application_updated" })
        )
        assert.include(events.find((e) => e.appKey === appKey)?.detail ?? "", "require_mfa")
        const refused = yield* api("PATCH", `/applications/${appKey}`, { require_mfa: "yes" })
        assert.strictEqual(refused.status, 400)
        assert.isTrue(yield* stored(appKey))
        const off = yield* api("PATCH", `/applications/${appKey}`, { require_mfa: false })
        assert.deepStrictEqual([off.status, "require_mfa" in off.json], [200, false])
        assert.isFalse(yield* stored(appKey))
      }).pipe(Effect.provide(Audited()))
  )
})
