/**
 * docs/security.md T13 in the adapter (defence in depth; the core's `Params.isPlainText` is the
 * fix): a lookup by a value PostgreSQL cannot hold (NUL: SQLSTATE 22021; 22P05) finds nothing,
 * as any value that matches nothing does, and is never a StorageError. On PGlite always, and on
 * the server `DATABASE_URL` names when it is set.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  ApplicationStore,
  AuditStore,
  CodeStore,
  ConsentStore,
  OpenIdStore,
  SessionStore,
  TokenStore,
  UserStore
} from "@latchkey/core"
import { Effect, Option } from "effect"
import { afterAll } from "vitest"
import { isUnstorableValue } from "../src/internal/errors.js"
import { pglite, pgliteLayer } from "./support/pglite.js"
import { databaseUrl, postgresLayer, useDatabase } from "./support/postgres.js"

afterAll(async () => (await pglite()).close())

const nul = "a\u0000b"

/** Every lookup of every store, by a value with a NUL in each place a caller's value goes. */
const lookups = Effect.gen(function* () {
  const apps = yield* ApplicationStore.ApplicationStore
  const users = yield* UserStore.UserStore
  const codes = yield* CodeStore.CodeStore
  const tokens = yield* TokenStore.TokenStore
  const consents = yield* ConsentStore.ConsentStore
  const openIds = yield* OpenIdStore.OpenIdStore
  const sessions = yield* SessionStore.SessionStore
  const audit = yield* AuditStore.AuditStore
  const none = (name: string, o: Option.Option<unknown>) => assert.isTrue(Option.isNone(o), name)
  none("applications.find", yield* apps.find(nul))
  none("users.findByUsername", yield* users.findByUsername(nul))
  none("users.findById", yield* users.findById(nul))
  none("codes.find", yield* codes.find(nul))
  none("tokens.find", yield* tokens.find("access", nul))
  none("consents.find (user)", yield* consents.find(nul, "app"))
  none("consents.find (app)", yield* consents.find("user", nul))
  assert.deepStrictEqual(yield* consents.list(nul), [], "consents.list")
  none("openIds.findUser", yield* openIds.findUser("app", nul))
  none("sessions.find", yield* sessions.find(nul, 0))
  none("sessions.findPending", yield* sessions.findPending("session", nul, 0))
  assert.deepStrictEqual(yield* audit.query({ limit: 10, appKey: nul }), [], "audit.query")
  assert.deepStrictEqual(yield* audit.tail({ limit: 10, appKey: nul }), [], "audit.tail")
})

describe("T13: a lookup by a value PostgreSQL cannot hold finds nothing", () => {
  it("22021 (NUL, invalid byte sequence) and 22P05 (untranslatable character) are such values; other errors are not", () => {
    assert.isTrue(isUnstorableValue({ code: "22021" }))
    assert.isTrue(isUnstorableValue({ code: "22P05" }))
    assert.isFalse(isUnstorableValue({ code: "23505" }))
    assert.isFalse(isUnstorableValue({ code: "57014" }))
    assert.isFalse(isUnstorableValue(new Error("ECONNRESET")))
  })

  it.effect("on PGlite: every find and select path answers none for a NUL, never a StorageError", () =>
    Effect.provide(lookups, pgliteLayer())
  )

  describe.skipIf(databaseUrl === undefined)("on real PostgreSQL", () => {
    const database = useDatabase()
    it.effect("on PostgreSQL: every find and select path answers none for a NUL, never a StorageError", () =>
      Effect.provide(lookups, postgresLayer(database.get))
    )
  })
})
