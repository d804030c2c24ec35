/**
 * The application part of the storage contract: registering, listing and removing
 * applications, and rotating their secret with a grace period for the previous one.
 */
import { assert, type Vitest } from "@effect/vitest"
import { ApplicationStore, type Stores, TokenStore } from "@latchkey/core"
import { Array as Arr, Effect, Exit, Option } from "effect"
import * as F from "../Fixtures.js"
import { findToken, some } from "./support.js"

const T = F.baseTime

/** Insert, find and list, the App Key's uniqueness, and replacing the secret. */
const records = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("applications: insert then find returns the same record; unknown keys are absent", () =>
    Effect.gen(function* () {
      const apps = yield* ApplicationStore.ApplicationStore
      const app = F.application({ requirePkce: true, accessTokenTtl: 600, refreshTokenTtl: 86400 })
      yield* apps.insert(app)
      assert.deepStrictEqual(some(yield* apps.find(app.appKey), "application"), app)
      const plain = F.application({ scopes: F.scope(), redirectUris: [], grantTypes: [] })
      yield* apps.insert(plain)
      assert.deepStrictEqual(some(yield* apps.find(plain.appKey), "application"), plain)
      assert.isTrue(Option.isNone(yield* apps.find(F.id("app"))))
    })
  )

  it.effect("applications: a second insert with the same App Key fails with AppKeyTaken", () =>
    Effect.gen(function* () {
      const apps = yield* ApplicationStore.ApplicationStore
      const app = F.application()
      yield* apps.insert(app)
      const err = yield* Effect.flip(apps.insert(F.application({ appKey: app.appKey, name: "Other" })))
      assert.strictEqual(err._tag, "AppKeyTaken")
      if (err._tag === "AppKeyTaken") assert.strictEqual(err.appKey, app.appKey)
      assert.deepStrictEqual(some(yield* apps.find(app.appKey), "application"), app)
    })
  )

  it.effect("applications: list returns every application, oldest first", () =>
    Effect.gen(function* () {
      const apps = yield* ApplicationStore.ApplicationStore
      const a = F.application({ createdAt: T + 2 })
      const b = F.application({ createdAt: T })
      const c = F.application({ createdAt: T + 1 })
      yield* Effect.forEach([a, b, c], apps.insert)
      const mine = new Set([a.appKey, b.appKey, c.appKey])
      const listed = (yield* apps.list()).filter((x) => mine.has(x.appKey))
      assert.deepStrictEqual(listed, [b, c, a])
    })
  )

  it.effect("applications: updateSecret replaces the digest; false for an unknown key", () =>
    Effect.gen(function* () {
      const apps = yield* ApplicationStore.ApplicationStore
      const app = F.application()
      yield* apps.insert(app)
      const digest = F.hash()
      assert.isTrue(yield* apps.updateSecret(app.appKey, digest, null))
      assert.deepStrictEqual(some(yield* apps.find(app.appKey), "application"), {
        ...app,
        secretDigest: digest
      })
      assert.isFalse(yield* apps.updateSecret(F.id("app"), digest, null))
      assert.isFalse(yield* apps.updateSecret(F.id("app"), digest, T + 60))
    })
  )
}

/** The previous secret: stored as given, and kept through a rotation with grace. */
const previousSecrets = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "applications: insert keeps a previous secret, and a record without the fields reads them as null",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const app = F.application({
          previousSecretDigest: F.hash(),
          previousSecretExpiresAt: T + 3600,
          previousSecretUsedAt: T + 5
        })
        yield* apps.insert(app)
        assert.deepStrictEqual(some(yield* apps.find(app.appKey), "application"), app)
        const {
          previousSecretDigest: _d,
          previousSecretExpiresAt: _e,
          previousSecretUsedAt: _u,
          ...bare
        } = F.application()
        yield* apps.insert(bare)
        assert.deepStrictEqual(some(yield* apps.find(bare.appKey), "application"), {
          ...bare,
          previousSecretDigest: null,
          previousSecretExpiresAt: null,
          previousSecretUsedAt: null
        })
      })
  )

  it.effect(
    "applications: rotate with grace keeps the previous digest until expiry; a second rotation keeps only the one it replaces; without grace none",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const app = F.application()
        yield* apps.insert(app)
        const d1 = F.hash()
        assert.isTrue(yield* apps.updateSecret(app.appKey, d1, T + 3600))
        assert.deepStrictEqual(some(yield* apps.find(app.appKey), "application"), {
          ...app,
          secretDigest: d1,
          previousSecretDigest: app.secretDigest,
          previousSecretExpiresAt: T + 3600,
          previousSecretUsedAt: null
        })
        const d2 = F.hash()
        assert.isTrue(yield* apps.updateSecret(app.appKey, d2, T + 7200))
        const twice = some(yield* apps.find(app.appKey), "application")
        assert.strictEqual(twice.secretDigest, d2)
        assert.strictEqual(twice.previousSecretDigest, d1, "only the digest rotated out is kept")
        assert.strictEqual(twice.previousSecretExpiresAt, T + 7200)
        const listed = (yield* apps.list()).find((a) => a.appKey === app.appKey)
        assert.deepStrictEqual(listed, twice)
        const d3 = F.hash()
        assert.isTrue(yield* apps.updateSecret(app.appKey, d3, null))
        assert.deepStrictEqual(some(yield* apps.find(app.appKey), "application"), {
          ...app,
          secretDigest: d3
        })
      })
  )
}

/** Marking the previous secret used, and removing an application. */
const secretUseAndRemoval = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "applications: markPreviousSecretUsed marks the previous digest's first use once; a rotation clears the mark",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const mark = apps.markPreviousSecretUsed
        assert.isDefined(mark, "an adapter must implement markPreviousSecretUsed")
        if (mark === undefined) return
        const app = F.application()
        yield* apps.insert(app)
        const refused = (appKey: string, digest: string, now: number) =>
          Effect.map(Effect.flip(mark(appKey, digest, now)), (e) => e._tag)
        // no previous secret yet
        assert.strictEqual(yield* refused(app.appKey, app.secretDigest, T), "PreviousSecretMarked")
        const d1 = F.hash()
        yield* apps.updateSecret(app.appKey, d1, T + 3600)
        assert.strictEqual(yield* refused(app.appKey, d1, T), "PreviousSecretMarked", "the current digest")
        assert.strictEqual(yield* refused(F.id("app"), app.secretDigest, T), "PreviousSecretMarked")
        const outcomes = yield* Effect.all(
          Arr.makeBy(6, (i) => Effect.exit(mark(app.appKey, app.secretDigest, T + 10 + i))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(outcomes.filter(Exit.isSuccess).length, 1, "exactly one concurrent mark wins")
        const marked = some(yield* apps.find(app.appKey), "application")
        assert.isAtLeast(marked.previousSecretUsedAt ?? 0, T + 10)
        assert.strictEqual(yield* refused(app.appKey, app.secretDigest, T + 20), "PreviousSecretMarked")
        assert.strictEqual(
          some(yield* apps.find(app.appKey), "application").previousSecretUsedAt,
          marked.previousSecretUsedAt
        )
        yield* apps.updateSecret(app.appKey, F.hash(), T + 7200)
        const rotated = some(yield* apps.find(app.appKey), "application")
        assert.strictEqual(rotated.previousSecretDigest, d1)
        assert.isNull(rotated.previousSecretUsedAt)
        yield* mark(app.appKey, d1, T + 30)
        assert.strictEqual(some(yield* apps.find(app.appKey), "application").previousSecretUsedAt, T + 30)
      })
  )

  it.effect("applications: remove deletes the application and revokes its tokens only", () =>
    Effect.gen(function* () {
      const apps = yield* ApplicationStore.ApplicationStore
      const tokens = yield* TokenStore.TokenStore
      const app = F.application()
      yield* apps.insert(app)
      const [access, refresh] = F.pair({ appKey: app.appKey })
      const earlier = F.token({ appKey: app.appKey, revokedAt: T + 5 })
      const other = F.token()
      yield* tokens.insert([access, refresh, earlier, other])
      assert.isTrue(yield* apps.remove(app.appKey, T + 10))
      assert.isTrue(Option.isNone(yield* apps.find(app.appKey)))
      assert.strictEqual((yield* findToken(access)).revokedAt, T + 10)
      assert.strictEqual((yield* findToken(refresh)).revokedAt, T + 10)
      assert.strictEqual((yield* findToken(earlier)).revokedAt, T + 5)
      assert.strictEqual((yield* findToken(other)).revokedAt, null)
      assert.isFalse(yield* apps.remove(app.appKey, T + 11))
      assert.isFalse(yield* apps.remove(F.id("app"), T + 11))
    })
  )
}

/** Turning an application public ends the refresh token families it holds, and only those. */
const publicSwitch = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "applications: turning public revokes every refresh token family of the application in the same write; other tokens and applications are untouched, and turning confidential brings nothing back",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const tokens = yield* TokenStore.TokenStore
        const app = F.application()
        const other = F.application()
        yield* apps.insert(app)
        yield* apps.insert(other)
        const [access, refresh] = F.pair({ appKey: app.appKey })
        const [access2, refresh2] = F.pair({ appKey: app.appKey })
        const tombstone = F.token({
          appKey: app.appKey,
          kind: "refresh",
          familyId: refresh2.familyId,
          rotatedAt: T + 2
        })
        const earlier = F.token({ appKey: app.appKey, familyId: refresh.familyId, revokedAt: T + 5 })
        // An access token without a refresh token (client_credentials) is no family to end
        const alone = F.token({ appKey: app.appKey })
        const [otherAccess, otherRefresh] = F.pair({ appKey: other.appKey })
        yield* tokens.insert([
          access,
          refresh,
          access2,
          refresh2,
          tombstone,
          earlier,
          alone,
          otherAccess,
          otherRefresh
        ])

        some(yield* apps.update(app.appKey, { public: true, secretDigest: "" }, T + 10), "updated")
        for (const t of [access, refresh, access2, refresh2, tombstone])
          assert.strictEqual((yield* findToken(t)).revokedAt, T + 10)
        assert.strictEqual((yield* findToken(earlier)).revokedAt, T + 5)
        for (const t of [alone, otherAccess, otherRefresh]) assert.isNull((yield* findToken(t)).revokedAt)
        const err = yield* Effect.flip(tokens.rotate(refresh.tokenHash, T + 11, 0, [F.token()]))
        assert.strictEqual(err._tag, "TokenInactive")

        some(yield* apps.update(app.appKey, { public: false, secretDigest: F.hash() }, T + 20), "updated")
        for (const t of [access, refresh, access2, refresh2])
          assert.strictEqual((yield* findToken(t)).revokedAt, T + 10)
      })
  )

  it.effect("applications: a change to an application that is public already revokes nothing", () =>
    Effect.gen(function* () {
      const apps = yield* ApplicationStore.ApplicationStore
      const tokens = yield* TokenStore.TokenStore
      const app = F.application({ public: true, secretDigest: "", requirePkce: true })
      yield* apps.insert(app)
      const pair = F.pair({ appKey: app.appKey })
      yield* tokens.insert(pair)
      some(yield* apps.update(app.appKey, { public: true, name: "Renamed" }, T + 10), "updated")
      for (const t of pair) assert.isNull((yield* findToken(t)).revokedAt)
    })
  )
}

/** Register the application cases with the contract's `it`. */
export const applicationCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  records(it)
  previousSecrets(it)
  secretUseAndRemoval(it)
  publicSwitch(it)
}
