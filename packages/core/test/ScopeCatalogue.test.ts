/**
 * The scope catalogue through the admin API (`/admin/v1/scopes`): created, listed, read, changed
 * and deleted, each change audited with its actor; names and descriptions checked; a second
 * scope of a name is 409; an application's scopes checked against a non-empty catalogue only;
 * and the seed from the server's scope descriptions.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as Http from "../src/http/Http.js"
import { Config } from "../src/model/Config.js"
import * as Metadata from "../src/oauth/Metadata.js"
import * as Audit from "../src/security/Audit.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import { ScopeStore } from "../src/storage/ScopeStore.js"
import { Audited, adminApi as api, type Json } from "./adminApi.js"
import { cb } from "./fixtures.js"

const orders = {
  name: "orders:read",
  descriptions: { "zh-CN": "读取你的订单", en: "Read your orders" },
  developer_requestable: true,
  needs_review: false
}

const created = (body: Json = orders) =>
  Effect.map(api("POST", "/scopes", body), (r) => {
    assert.strictEqual(r.status, 201, r.body)
    return r
  })

const refused = (r: { status: number; json: Json }, status: number, field?: string) => {
  assert.strictEqual(r.status, status, JSON.stringify(r.json))
  if (field !== undefined) assert.strictEqual(r.json.field, field, JSON.stringify(r.json))
}

const catalogue = Effect.flatMap(ScopeStore, (s) => s.list())

describe("the scope catalogue in the admin API", () => {
  it.effect(
    "create, list, get, update and delete; the languages in code-unit order, times from the clock",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(1_800_000_000_000)
        const made = yield* created()
        assert.strictEqual(made.headers.location, "/admin/v1/scopes/orders%3Aread")
        assert.deepStrictEqual(made.json, {
          name: "orders:read",
          descriptions: { en: "Read your orders", "zh-CN": "读取你的订单" },
          developer_requestable: true,
          needs_review: false,
          created_at: "2027-01-15T08:00:00.000Z",
          updated_at: "2027-01-15T08:00:00.000Z"
        })
        assert.deepStrictEqual(Object.keys(made.json.descriptions as Json), ["en", "zh-CN"])
        const plain = yield* created({ name: "billing", descriptions: { en: "  See your invoices " } })
        assert.deepInclude(plain.json, {
          descriptions: { en: "See your invoices" },
          developer_requestable: false,
          needs_review: true
        })
        const listed = yield* api("GET", "/scopes")
        assert.deepStrictEqual(
          listed.list.map((s) => s.name),
          ["billing", "orders:read"]
        )
        assert.deepStrictEqual((yield* api("GET", "/scopes/orders%3Aread")).json, made.json)
        yield* TestClock.adjust("60 seconds")
        const changed = yield* api("PATCH", "/scopes/orders:read", {
          needs_review: true,
          descriptions: { en: "Orders" }
        })
        assert.strictEqual(changed.status, 200, changed.body)
        assert.deepStrictEqual(changed.json, {
          ...made.json,
          descriptions: { en: "Orders" },
          needs_review: true,
          updated_at: "2027-01-15T08:01:00.000Z"
        })
        const deleted = yield* api("DELETE", "/scopes/orders:read")
        assert.deepStrictEqual([deleted.status, deleted.json], [200, { name: "orders:read", deleted: true }])
        for (const [method, body] of [["GET"], ["PATCH", { needs_review: false }], ["DELETE"]] as const) {
          const gone = yield* api(method, "/scopes/orders:read", body)
          assert.deepStrictEqual([gone.status, gone.json.error], [404, "not_found"])
        }
        assert.deepStrictEqual(
          (yield* catalogue).map((e) => e.name),
          ["billing"]
        )
      }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "every change is recorded with the actor admin-api; a patch that changes nothing records nothing",
    () =>
      Effect.gen(function* () {
        yield* created()
        yield* api("PATCH", "/scopes/orders:read", {})
        yield* api("PATCH", "/scopes/orders:read", { developer_requestable: false, needs_review: true })
        yield* api("DELETE", "/scopes/orders:read")
        const events = yield* Effect.flatMap(AuditStore, (s) => s.query({ limit: 10 }))
        assert.deepStrictEqual(
          [...events].reverse().map((e) => [e.type, e.detail, e.actor]),
          [
            ["scope_created", "scope orders:read", "admin-api"],
            ["scope_updated", "scope orders:read: changed developer_requestable, needs_review", "admin-api"],
            ["scope_deleted", "scope orders:read", "admin-api"]
          ]
        )
      }).pipe(Effect.provide(Audited()))
  )

  it.effect("a second scope of a name is 409 and changes nothing, nor records anything", () =>
    Effect.gen(function* () {
      const first = yield* created()
      const again = yield* api("POST", "/scopes", { name: "orders:read", descriptions: { en: "Other" } })
      assert.deepStrictEqual([again.status, again.json.error], [409, "conflict"])
      assert.include(again.json.error_description as string, '"orders:read"')
      assert.deepStrictEqual((yield* api("GET", "/scopes/orders:read")).json, first.json)
      const events = yield* Effect.flatMap(AuditStore, (s) => s.query({ limit: 10, type: "scope_created" }))
      assert.lengthOf(events, 1)
    }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "400 names the field for a name that is no scope token and for descriptions out of bounds; nothing stored",
    () =>
      Effect.gen(function* () {
        const en = { en: "Read" }
        for (const name of ["", "two words", "a,b", 'quo"te', "x".repeat(129), "tab\there"]) {
          refused(yield* api("POST", "/scopes", { name, descriptions: en }), 400, "name")
        }
        const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`x-l${i}`, "Read"]))
        for (const descriptions of [
          {},
          many,
          { "not a tag": "Read" },
          { en: "" },
          { en: "   " },
          { en: "x".repeat(501) },
          { en: "line\nbreak" },
          { en: "bidi \u202e override" }
        ]) {
          refused(yield* api("POST", "/scopes", { name: "ok", descriptions }), 400, "descriptions")
        }
        refused(yield* api("POST", "/scopes", { name: "ok", descriptions: en, extra: 1 }), 400)
        refused(yield* api("POST", "/scopes", { name: "ok", descriptions: { en: 5 } }), 400)
        assert.lengthOf(yield* catalogue, 0)
        yield* created({ name: "ok", descriptions: { en: "x".repeat(500) } })
        refused(yield* api("PATCH", "/scopes/ok", { descriptions: { en: "" } }), 400, "descriptions")
      }).pipe(Effect.provide(Audited()))
  )
})

describe("an application's scopes and the scope catalogue", () => {
  const app = (scopes: string) => api("POST", "/applications", { name: "Shop", redirect_uris: [cb], scopes })

  it.effect("an empty catalogue admits any scope, as before there was one", () =>
    Effect.gen(function* () {
      const r = yield* app("anything else")
      assert.strictEqual(r.status, 201, r.body)
      assert.deepStrictEqual(r.json.scopes, ["anything", "else"])
    }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "a non-empty catalogue: create and update refuse a scope not in it (400 naming it), admit its own and the OpenID scopes",
    () =>
      Effect.gen(function* () {
        yield* created()
        const unknown = yield* app("orders:read orders:write")
        refused(unknown, 400, "scopes")
        assert.include(unknown.json.error_description as string, '"orders:write"')
        const ok = yield* app("openid profile email orders:read")
        assert.strictEqual(ok.status, 201, ok.body)
        const key = ok.json.app_key as string
        const patched = yield* api("PATCH", `/applications/${key}`, {
          scopes: ["orders:read", "secret:admin"]
        })
        refused(patched, 400, "scopes")
        assert.include(patched.json.error_description as string, '"secret:admin"')
        assert.deepStrictEqual((yield* api("GET", `/applications/${key}`)).json.scopes, [
          "email",
          "openid",
          "orders:read",
          "profile"
        ])
        // Other fields change without their scopes being checked again
        yield* api("DELETE", "/scopes/orders:read")
        const renamed = yield* api("PATCH", `/applications/${key}`, { name: "Renamed" })
        assert.strictEqual(renamed.status, 200, renamed.body)
      }).pipe(Effect.provide(Audited()))
  )
})

describe("the seed from the server's scope descriptions", () => {
  it.effect(
    "adds each scope the catalogue lacks, never changes one it has, skips what it refuses, audited",
    () =>
      Effect.gen(function* () {
        yield* created()
        const seeded = yield* Admin.seedScopes({
          "orders:read": "Never replaces",
          profile: "Read your profile",
          photos: { en: "See your photos", "zh-CN": "查看你的照片" },
          "bad name": "Skipped"
        }).pipe(Effect.provideService(Audit.RequestInfo, { requestId: null, address: null, actor: "seed" }))
        assert.deepStrictEqual(seeded, {
          added: ["profile", "photos"],
          skipped: [
            {
              name: "bad name",
              problem:
                "a scope name must be one scope token: 1-128 visible ASCII characters without space, comma, quote or backslash"
            }
          ]
        })
        const entries = yield* catalogue
        assert.deepStrictEqual(
          entries.map((e): [string, unknown] => [e.name, e.descriptions]),
          [
            ["orders:read", { en: "Read your orders", "zh-CN": "读取你的订单" }],
            ["photos", { en: "See your photos", "zh-CN": "查看你的照片" }],
            ["profile", { en: "Read your profile" }]
          ]
        )
        const events = yield* Effect.flatMap(AuditStore, (s) => s.query({ limit: 10, type: "scope_created" }))
        assert.deepStrictEqual(
          [...events].reverse().map((e) => [e.detail, e.actor]),
          [
            ["scope orders:read", "admin-api"],
            ["scope profile: seeded", "seed"],
            ["scope photos: seeded", "seed"]
          ]
        )
        const again = yield* Admin.seedScopes({ profile: "Other", photos: "Other" })
        assert.deepStrictEqual(again, { added: [], skipped: [] })
      }).pipe(Effect.provide(Audited()))
  )
})

describe("scopes_supported in the metadata documents", () => {
  const document = (path: string) =>
    Option.getOrThrow(Http.route({ method: "GET", path, query: "", headers: {}, body: "" }))
  const paths = ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]

  it.effect("an empty catalogue leaves both documents byte for byte as they were", () =>
    Effect.gen(function* () {
      const settings = yield* Config
      for (const path of paths) {
        const r = yield* document(path)
        assert.strictEqual(r.body, JSON.stringify(Metadata.document(settings)))
        assert.deepStrictEqual(JSON.parse(r.body).scopes_supported, ["openid", "profile", "email"])
      }
    }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "a catalogue's scopes are added after the OpenID ones, each once; gone again once held no longer",
    () =>
      Effect.gen(function* () {
        const settings = yield* Config
        const before = JSON.stringify(Metadata.document(settings))
        yield* created()
        yield* created({ name: "profile", descriptions: { en: "Your profile" } })
        for (const path of paths) {
          const supported = JSON.parse((yield* document(path)).body).scopes_supported
          assert.deepStrictEqual(supported, ["openid", "profile", "email", "orders:read"])
        }
        yield* api("DELETE", "/scopes/orders:read")
        yield* api("DELETE", "/scopes/profile")
        // Held for catalogueMaxAge seconds, then read again
        assert.include((yield* document(paths[0] as string)).body, "orders:read")
        yield* TestClock.adjust(`${Http.catalogueMaxAge} seconds`)
        assert.strictEqual((yield* document(paths[0] as string)).body, before)
      }).pipe(Effect.provide(Audited()))
  )
})
