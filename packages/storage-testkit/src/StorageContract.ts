/**
 * The storage contract: behavioural tests every storage adapter must pass, with
 * the in-memory store of `@latchkey/core` as the reference.
 */
import { assert, layer as sharedLayer } from "@effect/vitest"
import {
  ApplicationStore,
  CodeStore,
  ConsentStore,
  OpenIdStore,
  SessionStore,
  SettingStore,
  type Stores,
  type Token,
  TokenStore,
  UserStore
} from "@latchkey/core"
import { Array as Arr, Effect, Exit, FastCheck, type Layer, Option } from "effect"
import * as F from "./Fixtures.js"
import { adminCases } from "./internal/adminCases.js"
import { consentCases } from "./internal/consentCases.js"
import { lifecycleCases } from "./internal/lifecycleCases.js"
import { sessionCases } from "./internal/sessionCases.js"
import { sessionLifecycleCases } from "./internal/sessionLifecycleCases.js"
import { signInCases } from "./internal/signInCases.js"
import { throttleCases } from "./internal/throttleCases.js"

const T = F.baseTime

const some = <A>(o: Option.Option<A>, what: string): A => {
  assert.isTrue(Option.isSome(o), `${what} should be found`)
  return Option.getOrThrow(o)
}

const findToken = (t: Token.Token) =>
  Effect.flatMap(TokenStore.TokenStore, (s) => s.find(t.kind, t.tokenHash)).pipe(
    Effect.map((o) => some(o, `${t.kind} token`))
  )

const isStored = (t: Token.Token) =>
  Effect.flatMap(TokenStore.TokenStore, (s) => s.find(t.kind, t.tokenHash)).pipe(Effect.map(Option.isSome))

/**
 * Register a `describe` block named `name` that runs the storage contract against
 * the layers `makeLayer` builds. `makeLayer(limits)` must build a new, empty store
 * whose session store keeps `limits`. Most tests share one layer, built with
 * `SessionStore.defaultLimits` and released after the block; each test of the
 * session bounds builds its own with small limits.
 */
export const storageContract = (
  name: string,
  makeLayer: (limits: SessionStore.SessionLimits) => Layer.Layer<Stores.Stores, unknown>
): void => {
  const layer = makeLayer(SessionStore.defaultLimits)
  sharedLayer(layer, { timeout: "60 seconds" })(`storage contract: ${name}`, (it) => {
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

    it.effect("users: insert then find by id and by username", () =>
      Effect.gen(function* () {
        const users = yield* UserStore.UserStore
        const u = F.user()
        yield* users.insert(u)
        assert.deepStrictEqual(some(yield* users.findById(u.userId), "user"), u)
        assert.deepStrictEqual(some(yield* users.findByUsername(u.username), "user"), u)
        assert.isTrue(Option.isNone(yield* users.findById(F.id("user"))))
        assert.isTrue(Option.isNone(yield* users.findByUsername(F.id("name"))))
      })
    )

    it.effect("users: a second user with the same username fails with UsernameTaken", () =>
      Effect.gen(function* () {
        const users = yield* UserStore.UserStore
        const u = F.user()
        yield* users.insert(u)
        const err = yield* Effect.flip(users.insert(F.user({ username: u.username })))
        assert.strictEqual(err._tag, "UsernameTaken")
        if (err._tag === "UsernameTaken") assert.strictEqual(err.username, u.username)
        assert.deepStrictEqual(some(yield* users.findByUsername(u.username), "user"), u)
      })
    )

    it.effect("users: findByUsername matches exactly (case, spacing and accents count)", () =>
      Effect.gen(function* () {
        const users = yield* UserStore.UserStore
        const suffix = crypto.randomUUID()
        const lower = F.user({ username: `alice-${suffix}` })
        yield* users.insert(lower)
        for (const probe of [
          `Alice-${suffix}`,
          `ALICE-${suffix}`,
          ` alice-${suffix}`,
          `alice-${suffix} `,
          `alicé-${suffix}`
        ]) {
          assert.isTrue(Option.isNone(yield* users.findByUsername(probe)), probe)
        }
        assert.isTrue(Option.isNone(yield* users.findByUsername(`alice-${suffix.slice(0, 8)}%`)))
        // Usernames differing only in case are different users.
        const upper = F.user({ username: `Alice-${suffix}` })
        yield* users.insert(upper)
        assert.strictEqual(some(yield* users.findByUsername(`Alice-${suffix}`), "user").userId, upper.userId)
        assert.strictEqual(some(yield* users.findByUsername(`alice-${suffix}`), "user").userId, lower.userId)
      })
    )

    it.effect("users: list returns every user, oldest first", () =>
      Effect.gen(function* () {
        const users = yield* UserStore.UserStore
        const a = F.user({ createdAt: T + 1 })
        const b = F.user({ createdAt: T })
        yield* Effect.forEach([a, b], users.insert)
        const mine = new Set([a.userId, b.userId])
        assert.deepStrictEqual(
          (yield* users.list()).filter((u) => mine.has(u.userId)),
          [b, a]
        )
      })
    )

    it.effect("users: remove deletes the user, their consents, and revokes their tokens only", () =>
      Effect.gen(function* () {
        const users = yield* UserStore.UserStore
        const tokens = yield* TokenStore.TokenStore
        const consents = yield* ConsentStore.ConsentStore
        const u = F.user()
        const other = F.user()
        yield* users.insert(u)
        yield* users.insert(other)
        const appKey = F.id("app")
        yield* consents.grant(u.userId, appKey, F.scope("read"), T)
        yield* consents.grant(other.userId, appKey, F.scope("read"), T)
        const mine = F.pair({ userId: u.userId })
        const theirs = F.token({ userId: other.userId })
        yield* tokens.insert([...mine, theirs])
        assert.isTrue(yield* users.remove(u.userId, T + 7))
        assert.isTrue(Option.isNone(yield* users.findById(u.userId)))
        assert.isTrue(Option.isNone(yield* users.findByUsername(u.username)))
        assert.isTrue(Option.isNone(yield* consents.find(u.userId, appKey)))
        assert.isTrue(Option.isSome(yield* consents.find(other.userId, appKey)))
        for (const t of mine) assert.strictEqual((yield* findToken(t)).revokedAt, T + 7)
        assert.strictEqual((yield* findToken(theirs)).revokedAt, null)
        assert.isFalse(yield* users.remove(u.userId, T + 8))
        // The username is free again.
        yield* users.insert(F.user({ username: u.username }))
      })
    )

    it.effect("codes: insert then find returns the same record; unknown hashes are absent", () =>
      Effect.gen(function* () {
        const codes = yield* CodeStore.CodeStore
        const c = F.code({
          codeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
          codeChallengeMethod: "S256"
        })
        yield* F.insertCode(c)
        assert.deepStrictEqual(some(yield* codes.find(c.codeHash), "code"), c)
        const plain = F.code({ scope: F.scope("a", "b", "c") })
        yield* F.insertCode(plain)
        assert.deepStrictEqual(some(yield* codes.find(plain.codeHash), "code"), plain)
        assert.isTrue(Option.isNone(yield* codes.find(F.hash())))
      })
    )

    it.effect("codes: redeem succeeds once, marks the code used and saves the given tokens", () =>
      Effect.gen(function* () {
        const codes = yield* CodeStore.CodeStore
        const c = F.code()
        yield* F.insertCode(c)
        const issued = F.pair({ familyId: c.familyId, appKey: c.appKey })
        yield* codes.redeem(c.codeHash, T + 10, issued)
        assert.deepStrictEqual(some(yield* codes.find(c.codeHash), "code"), { ...c, usedAt: T + 10 })
        for (const t of issued) assert.deepStrictEqual(yield* findToken(t), t)
      })
    )

    it.effect("codes: a second redeem fails with CodeAlreadyUsed { familyId } and writes nothing", () =>
      Effect.gen(function* () {
        const codes = yield* CodeStore.CodeStore
        const c = F.code()
        yield* F.insertCode(c)
        yield* codes.redeem(c.codeHash, T + 10, F.pair({ familyId: c.familyId }))
        const again = F.pair({ familyId: c.familyId })
        const err = yield* Effect.flip(codes.redeem(c.codeHash, T + 11, again))
        assert.strictEqual(err._tag, "CodeAlreadyUsed")
        if (err._tag === "CodeAlreadyUsed") assert.strictEqual(err.familyId, c.familyId)
        for (const t of again) assert.isFalse(yield* isStored(t))
        assert.strictEqual(some(yield* codes.find(c.codeHash), "code").usedAt, T + 10)
        // The tombstone decides, not the clock: a used code stays "used" after its expiry.
        const late = yield* Effect.flip(codes.redeem(c.codeHash, c.expiresAt + 5, []))
        assert.strictEqual(late._tag, "CodeAlreadyUsed")
      })
    )

    it.effect("codes: an expired code fails with CodeNotFound, stays unused and writes nothing", () =>
      Effect.gen(function* () {
        const codes = yield* CodeStore.CodeStore
        const c = F.code()
        yield* F.insertCode(c)
        const issued = F.pair({ familyId: c.familyId })
        for (const now of [c.expiresAt, c.expiresAt + 1]) {
          const err = yield* Effect.flip(codes.redeem(c.codeHash, now, issued))
          assert.strictEqual(err._tag, "CodeNotFound")
        }
        for (const t of issued) assert.isFalse(yield* isStored(t))
        assert.deepStrictEqual(some(yield* codes.find(c.codeHash), "code"), c)
        // One second earlier it is still redeemable.
        yield* codes.redeem(c.codeHash, c.expiresAt - 1, issued)
      })
    )

    it.effect("codes: an unknown code fails with CodeNotFound and writes nothing", () =>
      Effect.gen(function* () {
        const codes = yield* CodeStore.CodeStore
        const issued = F.pair()
        const err = yield* Effect.flip(codes.redeem(F.hash(), T, issued))
        assert.strictEqual(err._tag, "CodeNotFound")
        for (const t of issued) assert.isFalse(yield* isStored(t))
      })
    )

    it.effect("codes: of 25 concurrent redeems exactly one succeeds and only its tokens are saved", () =>
      Effect.gen(function* () {
        const codes = yield* CodeStore.CodeStore
        const c = F.code()
        yield* F.insertCode(c)
        const attempts = Arr.makeBy(25, () => F.pair({ familyId: c.familyId }))
        const exits = yield* Effect.all(
          attempts.map((issued) => Effect.exit(codes.redeem(c.codeHash, T + 1, issued))),
          { concurrency: "unbounded" }
        )
        const winners = exits.flatMap((e, i) => (Exit.isSuccess(e) ? [i] : []))
        assert.strictEqual(winners.length, 1)
        for (const e of exits) {
          if (Exit.isFailure(e)) {
            const err = yield* Effect.flip(e)
            assert.strictEqual(err._tag, "CodeAlreadyUsed")
          }
        }
        for (const [i, issued] of attempts.entries()) {
          for (const t of issued) assert.strictEqual(yield* isStored(t), i === winners[0])
        }
      })
    )

    it.effect.prop(
      "codes: any sequence of redeem attempts gives at most one success, and only before expiry",
      { offsets: FastCheck.array(FastCheck.integer({ min: -5, max: 120 }), { minLength: 1, maxLength: 8 }) },
      ({ offsets }) =>
        Effect.gen(function* () {
          const codes = yield* CodeStore.CodeStore
          const c = F.code()
          yield* F.insertCode(c)
          let wins = 0
          let used = false
          for (const offset of offsets) {
            const now = T + offset
            const exit = yield* Effect.exit(
              codes.redeem(c.codeHash, now, [F.token({ familyId: c.familyId })])
            )
            if (Exit.isSuccess(exit)) {
              wins++
              used = true
              assert.isTrue(now < c.expiresAt)
            } else {
              const err = yield* Effect.flip(exit)
              assert.strictEqual(err._tag, used ? "CodeAlreadyUsed" : "CodeNotFound")
            }
          }
          assert.isAtMost(wins, 1)
        }),
      { fastCheck: { numRuns: 30 } }
    )

    it.effect("tokens: insert then find returns the same record, namespaced by kind", () =>
      Effect.gen(function* () {
        const tokens = yield* TokenStore.TokenStore
        const [access, refresh] = F.pair({ openId: null })
        const appToken = F.token({ userId: null, openId: null, scope: F.scope(), parentHash: F.hash() })
        yield* tokens.insert([access, refresh, appToken])
        assert.deepStrictEqual(yield* findToken(access), access)
        assert.deepStrictEqual(yield* findToken(refresh), refresh)
        assert.deepStrictEqual(yield* findToken(appToken), appToken)
        assert.isTrue(Option.isNone(yield* tokens.find("refresh", access.tokenHash)))
        assert.isTrue(Option.isNone(yield* tokens.find("access", refresh.tokenHash)))
        assert.isTrue(Option.isNone(yield* tokens.find("access", F.hash())))
        // The same digest under the other kind is a different token.
        const twin = F.token({ kind: "refresh", tokenHash: access.tokenHash })
        yield* tokens.insert([twin])
        assert.deepStrictEqual(yield* findToken(twin), twin)
        assert.deepStrictEqual(yield* findToken(access), access)
        assert.isTrue(yield* tokens.revoke("refresh", twin.tokenHash, T))
        assert.strictEqual((yield* findToken(access)).revokedAt, null)
      })
    )

    it.effect("tokens: insert is all or none; a duplicate digest fails loudly", () =>
      Effect.gen(function* () {
        const tokens = yield* TokenStore.TokenStore
        const existing = F.token()
        yield* tokens.insert([existing])
        const fresh = F.token()
        const exit = yield* Effect.exit(tokens.insert([fresh, F.token({ tokenHash: existing.tokenHash })]))
        assert.isTrue(Exit.isFailure(exit))
        assert.isFalse(yield* isStored(fresh))
        assert.deepStrictEqual(yield* findToken(existing), existing)
        yield* tokens.insert([])
      })
    )

    it.effect(
      "tokens: rotate succeeds once; a second rotate fails with RefreshAlreadyRotated, even in the same second",
      () =>
        Effect.gen(function* () {
          const tokens = yield* TokenStore.TokenStore
          const [access, refresh] = F.pair()
          yield* tokens.insert([access, refresh])
          const next = F.pair({
            familyId: refresh.familyId,
            appKey: refresh.appKey,
            parentHash: refresh.tokenHash
          })
          yield* tokens.rotate(refresh.tokenHash, T + 100, 0, next)
          assert.deepStrictEqual(yield* findToken(refresh), { ...refresh, rotatedAt: T + 100 })
          for (const t of next) assert.deepStrictEqual(yield* findToken(t), t)
          for (const now of [T + 100, T + 101, T + 5000]) {
            const again = F.pair({ familyId: refresh.familyId, parentHash: refresh.tokenHash })
            const err = yield* Effect.flip(tokens.rotate(refresh.tokenHash, now, 0, again))
            assert.strictEqual(err._tag, "RefreshAlreadyRotated")
            if (err._tag === "RefreshAlreadyRotated") assert.strictEqual(err.familyId, refresh.familyId)
            for (const t of again) assert.isFalse(yield* isStored(t))
          }
          assert.strictEqual((yield* findToken(refresh)).rotatedAt, T + 100)
          // Rotation does not revoke anything by itself.
          assert.strictEqual((yield* findToken(access)).revokedAt, null)
        })
    )

    it.effect(
      "tokens: with grace > 0 a retry within the window succeeds; after it, RefreshAlreadyRotated",
      () =>
        Effect.gen(function* () {
          const tokens = yield* TokenStore.TokenStore
          const [, refresh] = F.pair()
          yield* tokens.insert([refresh])
          const grace = 10
          yield* tokens.rotate(refresh.tokenHash, T + 100, grace, [F.token({ familyId: refresh.familyId })])
          const retry = F.pair({ familyId: refresh.familyId })
          yield* tokens.rotate(refresh.tokenHash, T + 100 + grace, grace, retry)
          for (const t of retry) assert.isTrue(yield* isStored(t))
          // The window counts from the first rotation, which a retry does not move.
          assert.strictEqual((yield* findToken(refresh)).rotatedAt, T + 100)
          const late = F.pair({ familyId: refresh.familyId })
          const err = yield* Effect.flip(tokens.rotate(refresh.tokenHash, T + 101 + grace, grace, late))
          assert.strictEqual(err._tag, "RefreshAlreadyRotated")
          for (const t of late) assert.isFalse(yield* isStored(t))
        })
    )

    it.effect("tokens: expired, revoked, unknown or access-kind refresh tokens fail with TokenInactive", () =>
      Effect.gen(function* () {
        const tokens = yield* TokenStore.TokenStore
        const [access, refresh] = F.pair()
        const revoked = F.token({ kind: "refresh", revokedAt: T })
        const rotatedRevoked = F.token({ kind: "refresh", revokedAt: T + 2, rotatedAt: T + 1 })
        yield* tokens.insert([access, refresh, revoked, rotatedRevoked])
        const cases: ReadonlyArray<readonly [string, number]> = [
          [refresh.tokenHash, refresh.expiresAt],
          [refresh.tokenHash, refresh.expiresAt + 1],
          [revoked.tokenHash, T + 1],
          [rotatedRevoked.tokenHash, T + 2],
          [access.tokenHash, T + 1],
          [F.hash(), T + 1]
        ]
        for (const [hash, now] of cases) {
          const issued = F.pair({ familyId: refresh.familyId })
          const err = yield* Effect.flip(tokens.rotate(hash, now, 60, issued))
          assert.strictEqual(err._tag, "TokenInactive")
          for (const t of issued) assert.isFalse(yield* isStored(t))
        }
        assert.deepStrictEqual(yield* findToken(refresh), refresh)
        yield* tokens.rotate(refresh.tokenHash, refresh.expiresAt - 1, 0, [])
      })
    )

    it.effect("tokens: of 25 concurrent rotations exactly one succeeds and only its tokens are saved", () =>
      Effect.gen(function* () {
        const tokens = yield* TokenStore.TokenStore
        const [, refresh] = F.pair()
        yield* tokens.insert([refresh])
        const attempts = Arr.makeBy(25, () => F.pair({ familyId: refresh.familyId }))
        const exits = yield* Effect.all(
          attempts.map((issued) => Effect.exit(tokens.rotate(refresh.tokenHash, T + 1, 0, issued))),
          { concurrency: "unbounded" }
        )
        const winners = exits.flatMap((e, i) => (Exit.isSuccess(e) ? [i] : []))
        assert.strictEqual(winners.length, 1)
        for (const [i, issued] of attempts.entries()) {
          for (const t of issued) assert.strictEqual(yield* isStored(t), i === winners[0])
        }
      })
    )

    it.effect("tokens: revokeFamily revokes every token of the family and only those", () =>
      Effect.gen(function* () {
        const tokens = yield* TokenStore.TokenStore
        const [access, refresh] = F.pair()
        const familyId = refresh.familyId
        const child = F.pair({ familyId, parentHash: refresh.tokenHash })
        const early = F.token({ familyId, revokedAt: T + 1 })
        const stranger = F.pair({ appKey: access.appKey, userId: access.userId })
        yield* tokens.insert([access, refresh, ...child, early, ...stranger])
        yield* tokens.rotate(refresh.tokenHash, T + 2, 0, [])
        assert.strictEqual(yield* tokens.revokeFamily(familyId, T + 3), 4)
        for (const t of [access, refresh, ...child])
          assert.strictEqual((yield* findToken(t)).revokedAt, T + 3)
        assert.strictEqual((yield* findToken(early)).revokedAt, T + 1)
        for (const t of stranger) assert.strictEqual((yield* findToken(t)).revokedAt, null)
        assert.strictEqual(yield* tokens.revokeFamily(familyId, T + 4), 0)
        assert.strictEqual(yield* tokens.revokeFamily(F.id("family"), T + 4), 0)
        // A revoked refresh token is inactive, whatever else is true of it.
        const err = yield* Effect.flip(tokens.rotate(child[1].tokenHash, T + 5, 60, []))
        assert.strictEqual(err._tag, "TokenInactive")
      })
    )

    it.effect("tokens: revoke revokes one token of one kind; false when unknown or already revoked", () =>
      Effect.gen(function* () {
        const tokens = yield* TokenStore.TokenStore
        const [access, refresh] = F.pair()
        yield* tokens.insert([access, refresh])
        assert.isFalse(yield* tokens.revoke("refresh", access.tokenHash, T))
        assert.isTrue(yield* tokens.revoke("access", access.tokenHash, T + 1))
        assert.strictEqual((yield* findToken(access)).revokedAt, T + 1)
        assert.strictEqual((yield* findToken(refresh)).revokedAt, null)
        assert.isFalse(yield* tokens.revoke("access", access.tokenHash, T + 2))
        assert.strictEqual((yield* findToken(access)).revokedAt, T + 1)
        assert.isFalse(yield* tokens.revoke("access", F.hash(), T))
      })
    )

    // Purge tests use their own era, long before every other test's records, so a
    // purge here never touches records another test still reads.
    const P = 1_000_000_000

    it.effect(
      "codes: purgeExpired deletes at most `limit` expired codes and never an unexpired tombstone",
      () =>
        Effect.gen(function* () {
          const codes = yield* CodeStore.CodeStore
          const expired = Arr.makeBy(5, (i) => F.code({ issuedAt: P - 100, expiresAt: P - i }))
          const live = F.code({ issuedAt: P - 10, expiresAt: P + 1 })
          const tombstone = F.code({ issuedAt: P - 10, expiresAt: P + 50 })
          const usedExpired = F.code({ issuedAt: P - 100, expiresAt: P - 50 })
          yield* Effect.forEach([...expired, live, tombstone, usedExpired], F.insertCode)
          yield* codes.redeem(tombstone.codeHash, P - 5, [])
          yield* codes.redeem(usedExpired.codeHash, P - 60, [])
          assert.strictEqual(yield* codes.purgeExpired(P, 2), 2)
          assert.strictEqual(yield* codes.purgeExpired(P, 0), 0)
          let n = 1
          for (let round = 0; n > 0 && round < 1000; round++) {
            n = yield* codes.purgeExpired(P, 3)
            assert.isAtMost(n, 3)
          }
          assert.strictEqual(n, 0)
          for (const c of [...expired, usedExpired])
            assert.isTrue(Option.isNone(yield* codes.find(c.codeHash)))
          assert.deepStrictEqual(some(yield* codes.find(live.codeHash), "code"), live)
          assert.strictEqual(some(yield* codes.find(tombstone.codeHash), "tombstone").usedAt, P - 5)
          // The kept tombstone still detects reuse.
          const err = yield* Effect.flip(codes.redeem(tombstone.codeHash, P + 1, []))
          assert.strictEqual(err._tag, "CodeAlreadyUsed")
        })
    )

    it.effect(
      "tokens: purgeExpired deletes at most `limit` expired tokens and never an unexpired tombstone",
      () =>
        Effect.gen(function* () {
          const tokens = yield* TokenStore.TokenStore
          const expired = Arr.makeBy(5, (i) =>
            F.token({ kind: i % 2 === 0 ? "access" : "refresh", issuedAt: P - 100, expiresAt: P - i })
          )
          const live = F.token({ issuedAt: P - 10, expiresAt: P + 1 })
          const tombstone = F.token({ kind: "refresh", issuedAt: P - 10, expiresAt: P + 50 })
          const revoked = F.token({ issuedAt: P - 10, expiresAt: P + 50, revokedAt: P - 1 })
          yield* tokens.insert([...expired, live, tombstone, revoked])
          yield* tokens.rotate(tombstone.tokenHash, P - 5, 0, [])
          assert.strictEqual(yield* tokens.purgeExpired(P, 2), 2)
          let n = 1
          for (let round = 0; n > 0 && round < 1000; round++) {
            n = yield* tokens.purgeExpired(P, 3)
            assert.isAtMost(n, 3)
          }
          assert.strictEqual(n, 0)
          for (const t of expired) assert.isFalse(yield* isStored(t))
          assert.deepStrictEqual(yield* findToken(live), live)
          assert.deepStrictEqual(yield* findToken(revoked), revoked)
          assert.strictEqual((yield* findToken(tombstone)).rotatedAt, P - 5)
          const err = yield* Effect.flip(tokens.rotate(tombstone.tokenHash, P + 1, 0, []))
          assert.strictEqual(err._tag, "RefreshAlreadyRotated")
        })
    )

    it.effect("consents: grant records scopes per (user, application) and unions later grants", () =>
      Effect.gen(function* () {
        const consents = yield* ConsentStore.ConsentStore
        const userId = F.id("user")
        const appKey = F.id("app")
        assert.isTrue(Option.isNone(yield* consents.find(userId, appKey)))
        yield* consents.grant(userId, appKey, F.scope("write", "profile"), T)
        assert.deepStrictEqual(
          some(yield* consents.find(userId, appKey), "consent"),
          F.scope("profile", "write")
        )
        yield* consents.grant(userId, appKey, F.scope("read", "write"), T + 1)
        assert.deepStrictEqual(
          some(yield* consents.find(userId, appKey), "consent"),
          F.scope("profile", "read", "write")
        )
        yield* consents.grant(userId, appKey, F.scope(), T + 2)
        assert.deepStrictEqual(
          some(yield* consents.find(userId, appKey), "consent"),
          F.scope("profile", "read", "write")
        )
        assert.isTrue(Option.isNone(yield* consents.find(userId, F.id("app"))))
        assert.isTrue(Option.isNone(yield* consents.find(F.id("user"), appKey)))
        const otherApp = F.id("app")
        yield* consents.grant(userId, otherApp, F.scope(), T)
        assert.deepStrictEqual(some(yield* consents.find(userId, otherApp), "consent"), F.scope())
      })
    )

    it.effect(
      "open_id: findUser answers the user an open_id was recorded for, in that application only",
      () =>
        Effect.gen(function* () {
          const openIds = yield* OpenIdStore.OpenIdStore
          const appKey = F.id("app")
          const userId = F.id("user")
          const openId = yield* openIds.getOrCreate(appKey, userId, F.id("oid"))
          assert.deepStrictEqual(yield* openIds.findUser(appKey, openId), Option.some(userId))
          assert.isTrue(Option.isNone(yield* openIds.findUser(F.id("app"), openId)))
          assert.isTrue(Option.isNone(yield* openIds.findUser(appKey, F.id("oid"))))
        })
    )

    it.effect("open_id: getOrCreate records the first candidate and keeps it", () =>
      Effect.gen(function* () {
        const openIds = yield* OpenIdStore.OpenIdStore
        const appKey = F.id("app")
        const userId = F.id("user")
        assert.strictEqual(yield* openIds.getOrCreate(appKey, userId, "first"), "first")
        assert.strictEqual(yield* openIds.getOrCreate(appKey, userId, "second"), "first")
        assert.strictEqual(yield* openIds.getOrCreate(F.id("app"), userId, "other"), "other")
        assert.strictEqual(yield* openIds.getOrCreate(appKey, F.id("user"), "third"), "third")
        const racing = F.id("user")
        const seen = yield* Effect.all(
          Arr.makeBy(10, (i) => openIds.getOrCreate(appKey, racing, `candidate-${i}`)),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(new Set(seen).size, 1)
      })
    )

    it.effect("settings: getOrCreate stores the first value and keeps it", () =>
      Effect.gen(function* () {
        const settings = yield* SettingStore.SettingStore
        const name = F.id("setting")
        assert.strictEqual(yield* settings.getOrCreate(name, "one"), "one")
        assert.strictEqual(yield* settings.getOrCreate(name, "two"), "one")
        const racing = F.id("setting")
        const seen = yield* Effect.all(
          Arr.makeBy(10, (i) => settings.getOrCreate(racing, `value-${i}`)),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(new Set(seen).size, 1)
        assert.strictEqual(yield* settings.getOrCreate(racing, "late"), seen[0])
      })
    )

    adminCases(it)
    lifecycleCases(it)
    consentCases(it)
    sessionCases(it, makeLayer)
    sessionLifecycleCases(it)
    signInCases(it)
    throttleCases(it)
  })
}
