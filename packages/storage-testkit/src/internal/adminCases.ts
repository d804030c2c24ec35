/**
 * The administration part of the storage contract: changing an application's registration, a
 * user's password and whether the account is enabled, revoking one subject's tokens, and listing
 * and withdrawing a user's consents. Time is always passed in as `now`.
 */
import { assert, type Vitest } from "@effect/vitest"
import { ApplicationStore, ConsentStore, type Stores, TokenStore, type User, UserStore } from "@latchkey/core"
import { Effect, Option } from "effect"
import * as F from "../Fixtures.js"
import { revokedAt, some } from "./support.js"
import { insertUser } from "./users.js"

const T = F.baseTime

/** The user as every lookup returns it: by id, by username and in the list. */
const lookups = (userId: string, username: string) =>
  Effect.gen(function* () {
    const users = yield* UserStore.UserStore
    const byId = some(yield* users.findById(userId), "user by id")
    const byName = some(yield* users.findByUsername(username), "user by username")
    const listed = (yield* users.list()).filter((u) => u.userId === userId)
    return { byId, byName, listed }
  })

/** Assert that every lookup returns `expected`. */
const assertUser = (expected: User.User) =>
  Effect.map(lookups(expected.userId, expected.username), ({ byId, byName, listed }) => {
    assert.deepStrictEqual(byId, expected)
    assert.deepStrictEqual(byName, expected)
    assert.deepStrictEqual(listed, [expected])
  })

/** Changing an application's registration, and of an unknown App Key. */
const applicationUpdates = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("applications: update changes only the fields given and returns the application as stored", () =>
    Effect.gen(function* () {
      const apps = yield* ApplicationStore.ApplicationStore
      const tokens = yield* TokenStore.TokenStore
      const app = F.application({
        accessTokenTtl: 600,
        refreshTokenTtl: 86400,
        previousSecretDigest: F.hash(),
        previousSecretExpiresAt: T + 3600,
        previousSecretUsedAt: T + 5
      })
      const other = F.application()
      yield* apps.insert(app)
      yield* apps.insert(other)
      const issued = F.pair({ appKey: app.appKey })
      yield* tokens.insert(issued)
      const renamed = { ...app, name: "Renamed" }
      assert.deepStrictEqual(yield* apps.update(app.appKey, { name: "Renamed" }, T), Option.some(renamed))
      assert.deepStrictEqual(yield* apps.find(app.appKey), Option.some(renamed))

      const changes = {
        redirectUris: ["https://new.example/cb"],
        scopes: F.scope("profile"),
        grantTypes: ["client_credentials"],
        requirePkce: true,
        accessTokenTtl: null,
        refreshTokenTtl: 3600
      } satisfies ApplicationStore.ApplicationChanges
      const changed = { ...renamed, ...changes }
      assert.deepStrictEqual(yield* apps.update(app.appKey, changes, T), Option.some(changed))
      assert.deepStrictEqual(yield* apps.find(app.appKey), Option.some(changed))
      assert.deepStrictEqual(
        (yield* apps.list()).filter((a) => a.appKey === app.appKey),
        [changed]
      )
      // A field given as undefined keeps its value, as one left out does; an empty list is a value.
      const unset = {
        name: undefined,
        refreshTokenTtl: undefined
      } as unknown as ApplicationStore.ApplicationChanges
      assert.deepStrictEqual(yield* apps.update(app.appKey, unset, T), Option.some(changed))
      assert.deepStrictEqual(yield* apps.update(app.appKey, {}, T), Option.some(changed))
      const emptied = { ...changed, redirectUris: [], scopes: F.scope(), grantTypes: [], requirePkce: false }
      assert.deepStrictEqual(
        yield* apps.update(
          app.appKey,
          {
            redirectUris: [],
            scopes: F.scope(),
            grantTypes: [],
            requirePkce: false
          },
          T
        ),
        Option.some(emptied)
      )
      assert.deepStrictEqual(yield* apps.find(app.appKey), Option.some(emptied))
      // Only that application changed, and its tokens keep working.
      assert.deepStrictEqual(yield* apps.find(other.appKey), Option.some(other))
      assert.deepStrictEqual(yield* revokedAt(issued), [null, null])
    })
  )

  it.effect("applications: update of an unknown App Key is none and creates nothing", () =>
    Effect.gen(function* () {
      const apps = yield* ApplicationStore.ApplicationStore
      const appKey = F.id("app")
      assert.isTrue(Option.isNone(yield* apps.update(appKey, { name: "Ghost", requirePkce: true }, T)))
      assert.isTrue(Option.isNone(yield* apps.find(appKey)))
      assert.isFalse((yield* apps.list()).some((a) => a.appKey === appKey))
    })
  )
}

/** A user's enabled state as stored, and a new password hash. */
const userRecords = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "users: a user stored without disabledAt reads as enabled (null); a disabled one round-trips",
    () =>
      Effect.gen(function* () {
        const users = yield* UserStore.UserStore
        const { disabledAt: _, ...bare } = F.user()
        yield* users.insert(bare)
        yield* assertUser({ ...bare, disabledAt: null })
        const disabled = F.user({ disabledAt: T + 5 })
        yield* users.insert(disabled)
        yield* assertUser(disabled)
      })
  )

  it.effect("users: setPasswordHash replaces the hash and nothing else; false for an unknown user", () =>
    Effect.gen(function* () {
      const users = yield* UserStore.UserStore
      const u = F.user()
      const other = F.user()
      yield* users.insert(u)
      yield* users.insert(other)
      const passwordHash = `scrypt$${F.hash()}`
      assert.isTrue(yield* users.setPasswordHash(u.userId, passwordHash))
      yield* assertUser({ ...u, passwordHash })
      yield* assertUser(other)
      const ghost = F.id("user")
      assert.isFalse(yield* users.setPasswordHash(ghost, passwordHash))
      assert.isTrue(Option.isNone(yield* users.findById(ghost)))
    })
  )
}

/** Disabling and enabling a user, and of an unknown user. */
const userDisabling = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "users: setDisabled disables at now and revokes the user's tokens only; again keeps the first time; enabling clears it",
    () =>
      Effect.gen(function* () {
        const users = yield* UserStore.UserStore
        const tokens = yield* TokenStore.TokenStore
        const u = F.user()
        const other = F.user()
        yield* users.insert(u)
        yield* users.insert(other)
        // Tokens of the user in two applications, one revoked before, and another user's.
        const mine = [...F.pair({ userId: u.userId }), ...F.pair({ userId: u.userId })]
        const early = F.token({ userId: u.userId, revokedAt: T + 1 })
        const theirs = F.pair({ userId: other.userId, appKey: mine[0]?.appKey ?? F.id("app") })
        yield* tokens.insert([...mine, early, ...theirs])

        assert.isTrue(yield* users.setDisabled(u.userId, true, T + 10))
        yield* assertUser({ ...u, disabledAt: T + 10 })
        yield* assertUser(other)
        assert.deepStrictEqual(yield* revokedAt(mine), [T + 10, T + 10, T + 10, T + 10])
        assert.deepStrictEqual(yield* revokedAt([early]), [T + 1])
        assert.deepStrictEqual(yield* revokedAt(theirs), [null, null])

        // Nothing is issued to the account while it is disabled (D13); disabling again keeps the
        // first disabledAt.
        const since = F.pair({ userId: u.userId })
        assert.strictEqual((yield* Effect.flip(tokens.insert(since)))._tag, "UserInactive")
        assert.isTrue(yield* users.setDisabled(u.userId, true, T + 20))
        yield* assertUser({ ...u, disabledAt: T + 10 })
        assert.deepStrictEqual(yield* revokedAt(mine), [T + 10, T + 10, T + 10, T + 10])

        // Enabling clears disabledAt; revoked tokens stay revoked, and nothing else is revoked.
        assert.isTrue(yield* users.setDisabled(u.userId, false, T + 30))
        yield* assertUser(u)
        const later = F.token({ userId: u.userId })
        yield* tokens.insert([later])
        assert.deepStrictEqual(yield* revokedAt([...mine, later]), [T + 10, T + 10, T + 10, T + 10, null])
        assert.isTrue(yield* users.setDisabled(u.userId, false, T + 40))
        yield* assertUser(u)
        assert.deepStrictEqual(yield* revokedAt([later, ...theirs]), [null, null, null])
      })
  )

  it.effect("users: setDisabled of an unknown user is false and revokes nothing", () =>
    Effect.gen(function* () {
      const users = yield* UserStore.UserStore
      const tokens = yield* TokenStore.TokenStore
      const ghost = F.id("user")
      const issued = F.pair()
      yield* tokens.insert(issued)
      assert.isFalse(yield* users.setDisabled(ghost, true, T + 5))
      assert.isFalse(yield* users.setDisabled(ghost, false, T + 6))
      assert.isTrue(Option.isNone(yield* users.findById(ghost)))
      assert.deepStrictEqual(yield* revokedAt(issued), [null, null])
    })
  )
}

/** Revoking the active tokens of one subject (by open_id) of an application. */
const revokeByOpenId = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "tokens: revokeSubject by open_id revokes that subject's active tokens in that application only and counts them",
    () =>
      Effect.gen(function* () {
        const tokens = yield* TokenStore.TokenStore
        const appKey = F.id("app")
        const openId = F.id("open")
        const userId = yield* insertUser
        const subject = [...F.pair({ appKey, openId, userId }), ...F.pair({ appKey, openId, userId })]
        const early = F.token({ appKey, openId, userId, revokedAt: T + 1 })
        const others = [
          // another subject of the application
          ...F.pair({ appKey }),
          // the same user under another open_id: the open_id decides
          F.token({ appKey, userId }),
          // the same open_id and user in another application
          ...F.pair({ openId, userId }),
          // the application's own token
          F.token({ appKey, userId: null, openId: null })
        ]
        yield* tokens.insert([...subject, early, ...others])
        assert.strictEqual(yield* tokens.revokeSubject({ appKey, openId }, T + 5), 4)
        assert.deepStrictEqual(yield* revokedAt(subject), [T + 5, T + 5, T + 5, T + 5])
        assert.deepStrictEqual(yield* revokedAt([early]), [T + 1])
        assert.deepStrictEqual(
          yield* revokedAt(others),
          others.map(() => null)
        )
        assert.strictEqual(yield* tokens.revokeSubject({ appKey, openId }, T + 6), 0)
        assert.deepStrictEqual(yield* revokedAt(subject), [T + 5, T + 5, T + 5, T + 5])
        assert.strictEqual(yield* tokens.revokeSubject({ appKey, openId: F.id("open") }, T + 6), 0)
        assert.strictEqual(yield* tokens.revokeSubject({ appKey: F.id("app"), openId }, T + 6), 0)
        assert.deepStrictEqual(
          yield* revokedAt(others),
          others.map(() => null)
        )
      })
  )
}

/** Revoking the active tokens of one user of an application. */
const revokeByUser = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "tokens: revokeSubject by user revokes that user's active tokens in that application only and counts them",
    () =>
      Effect.gen(function* () {
        const tokens = yield* TokenStore.TokenStore
        const appKey = F.id("app")
        const userId = yield* insertUser
        const subject = [...F.pair({ appKey, userId }), ...F.pair({ appKey, userId })]
        const early = F.token({ appKey, userId, revokedAt: T + 1 })
        const others = [
          // another user of the application
          ...F.pair({ appKey }),
          // another user under the same open_id: the user decides
          F.token({ appKey, openId: subject[0]?.openId ?? null }),
          // the same user in another application
          ...F.pair({ userId }),
          // the application's own token
          F.token({ appKey, userId: null, openId: null })
        ]
        yield* tokens.insert([...subject, early, ...others])
        assert.strictEqual(yield* tokens.revokeSubject({ appKey, userId }, T + 5), 4)
        assert.deepStrictEqual(yield* revokedAt(subject), [T + 5, T + 5, T + 5, T + 5])
        assert.deepStrictEqual(yield* revokedAt([early]), [T + 1])
        assert.deepStrictEqual(
          yield* revokedAt(others),
          others.map(() => null)
        )
        assert.strictEqual(yield* tokens.revokeSubject({ appKey, userId }, T + 6), 0)
        assert.strictEqual(yield* tokens.revokeSubject({ appKey, userId: F.id("user") }, T + 6), 0)
        assert.strictEqual(yield* tokens.revokeSubject({ appKey: F.id("app"), userId }, T + 6), 0)
        assert.deepStrictEqual(
          yield* revokedAt(others),
          others.map(() => null)
        )
      })
  )
}

/** Listing a user's consents. */
const consentList = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "consents: list gives each consent of the user by App Key (binary order), with scope and updatedAt",
    () =>
      Effect.gen(function* () {
        const consents = yield* ConsentStore.ConsentStore
        const userId = F.id("user")
        const base = F.id("app")
        // Ascending by code unit: "B" (0x42) sorts before "a" (0x61).
        const [upper, a, b, c] = [`${base}-B`, `${base}-a`, `${base}-b`, `${base}-c`]
        assert.deepStrictEqual(yield* consents.list(userId), [])
        yield* consents.grant(userId, b, F.scope("read"), T + 1)
        yield* consents.grant(userId, c, F.scope(), T + 2)
        yield* consents.grant(userId, a, F.scope("write"), T + 3)
        yield* consents.grant(userId, b, F.scope("profile"), T + 4)
        yield* consents.grant(userId, upper, F.scope("read"), T + 5)
        // Other users' consents, one of a user whose id starts with this one's.
        yield* consents.grant(`${userId}-2`, a, F.scope("admin"), T + 6)
        yield* consents.grant(F.id("user"), b, F.scope("admin"), T + 7)
        assert.deepStrictEqual(yield* consents.list(userId), [
          { appKey: upper, scope: F.scope("read"), updatedAt: T + 5 },
          { appKey: a, scope: F.scope("write"), updatedAt: T + 3 },
          { appKey: b, scope: F.scope("profile", "read"), updatedAt: T + 4 },
          { appKey: c, scope: F.scope(), updatedAt: T + 2 }
        ])
        assert.deepStrictEqual(yield* consents.list(`${userId}-2`), [
          { appKey: a, scope: F.scope("admin"), updatedAt: T + 6 }
        ])
      })
  )
}

/** Withdrawing a consent, and one that is not there. */
const consentWithdrawal = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "consents: withdraw forgets the consent and revokes that application's tokens of that user only",
    () =>
      Effect.gen(function* () {
        const consents = yield* ConsentStore.ConsentStore
        const tokens = yield* TokenStore.TokenStore
        const userId = yield* insertUser
        const other = yield* insertUser
        const appKey = F.id("app")
        const otherApp = F.id("app")
        yield* consents.grant(userId, appKey, F.scope("read"), T)
        yield* consents.grant(userId, otherApp, F.scope("read"), T)
        yield* consents.grant(other, appKey, F.scope("read"), T)
        const mine = F.pair({ appKey, userId })
        const early = F.token({ appKey, userId, revokedAt: T + 1 })
        const kept = [...F.pair({ appKey: otherApp, userId }), ...F.pair({ appKey, userId: other })]
        yield* tokens.insert([...mine, early, ...kept])

        assert.isTrue(yield* consents.withdraw(userId, appKey, T + 5))
        assert.isTrue(Option.isNone(yield* consents.find(userId, appKey)))
        assert.isTrue(Option.isSome(yield* consents.find(userId, otherApp)))
        assert.isTrue(Option.isSome(yield* consents.find(other, appKey)))
        assert.deepStrictEqual(
          (yield* consents.list(userId)).map((x) => x.appKey),
          [otherApp]
        )
        assert.deepStrictEqual(yield* revokedAt(mine), [T + 5, T + 5])
        assert.deepStrictEqual(yield* revokedAt([early]), [T + 1])
        assert.deepStrictEqual(
          yield* revokedAt(kept),
          kept.map(() => null)
        )
      })
  )

  it.effect("consents: withdrawing a consent that is not there is false and revokes nothing", () =>
    Effect.gen(function* () {
      const consents = yield* ConsentStore.ConsentStore
      const tokens = yield* TokenStore.TokenStore
      const userId = yield* insertUser
      const appKey = F.id("app")
      const before = F.pair({ appKey, userId })
      yield* tokens.insert(before)
      assert.isFalse(yield* consents.withdraw(userId, appKey, T + 5))
      assert.deepStrictEqual(yield* revokedAt(before), [null, null])
      yield* consents.grant(userId, appKey, F.scope("read"), T)
      assert.isTrue(yield* consents.withdraw(userId, appKey, T + 6))
      assert.deepStrictEqual(yield* revokedAt(before), [T + 6, T + 6])
      // Withdrawn already: a token issued since stays active.
      const since = F.pair({ appKey, userId })
      yield* tokens.insert(since)
      assert.isFalse(yield* consents.withdraw(userId, appKey, T + 7))
      assert.deepStrictEqual(yield* revokedAt([...before, ...since]), [T + 6, T + 6, null, null])
    })
  )
}

/** Register the administration cases with the contract's `it`. */
export const adminCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  applicationUpdates(it)
  userRecords(it)
  userDisabling(it)
  revokeByOpenId(it)
  revokeByUser(it)
  consentList(it)
  consentWithdrawal(it)
}
