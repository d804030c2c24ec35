/**
 * The account-lifecycle part of the storage contract (D13, docs/security.md): no token is saved for
 * a user who is disabled or gone when the write commits, and withdrawing a consent, disabling or
 * deleting a user retires the unused codes. The grant-level races pin the interleaving: a disable
 * that commits while the grant checks the password, or between its user check and its write.
 */
import { assert, type Vitest } from "@effect/vitest"
import {
  type Application,
  CodeStore,
  ConsentStore,
  Digest,
  Grants,
  PasswordHasher,
  type Stores,
  TokenStore,
  UserStore
} from "@latchkey/core"
import { Deferred, Effect, Fiber, Option } from "effect"
import * as F from "../Fixtures.js"
import { failureOf, grantServices, hasher } from "./grants.js"
import { areStored } from "./support.js"
import { insertUser } from "./users.js"

const T = F.baseTime

type Change = "disabled" | "deleted"
const changes: ReadonlyArray<Change> = ["disabled", "deleted"]

/** Disable or delete the user (each revokes their tokens and retires their codes in its transaction). */
const change = (how: Change, userId: string, now: number) =>
  Effect.flatMap(UserStore.UserStore, (users) =>
    how === "disabled" ? users.setDisabled(userId, true, now) : users.remove(userId, now)
  )

/** A user who is disabled or gone, as `how` says. */
const inactiveUser = (how: Change) =>
  Effect.flatMap(insertUser, (userId) => Effect.as(change(how, userId, T), userId))

/** How many of the user's tokens for the application are not revoked (the probe revokes them). */
const unrevoked = (appKey: string, userId: string) =>
  Effect.flatMap(TokenStore.TokenStore, (s) => s.revokeSubject({ appKey, userId }, T))

/** An application of the code, refresh and password grants, and an enabled user whose password is "pw". */
const appAndUser = Effect.gen(function* () {
  const users = yield* UserStore.UserStore
  const app: Application.Application = F.application({
    grantTypes: ["authorization_code", "refresh_token", "password"]
  })
  const user = F.user({ passwordHash: "test$pw" })
  yield* users.insert(user)
  return { app, user }
})

/** Inserts and redemptions naming a user who is disabled or gone are refused, writing nothing. */
const refusedWrites = (it: Vitest.MethodsNonLive<Stores.Stores>, how: Change): void => {
  it.effect(`tokens: insert for a ${how} user fails with UserInactive and writes nothing, all or none`, () =>
    Effect.gen(function* () {
      const tokens = yield* TokenStore.TokenStore
      const gone = yield* inactiveUser(how)
      const active = yield* insertUser
      const refused = F.pair({ userId: gone })
      const err = yield* Effect.flip(tokens.insert(refused))
      assert.deepStrictEqual(
        [err._tag, err._tag === "UserInactive" ? err.userId : null],
        ["UserInactive", gone]
      )
      // One token of an active user and one of the inactive one: neither is saved
      const mixed = [F.token({ userId: active }), F.token({ userId: gone, kind: "refresh" })]
      assert.strictEqual((yield* Effect.flip(tokens.insert(mixed)))._tag, "UserInactive")
      assert.deepStrictEqual(yield* areStored([...refused, ...mixed]), [false, false, false, false])
      const fine = F.pair({ userId: active })
      yield* tokens.insert(fine)
      assert.deepStrictEqual(yield* areStored(fine), [true, true])
    })
  )

  it.effect(
    `codes: redeem for a ${how} user fails with UserInactive, leaves the code unused, writes nothing`,
    () =>
      Effect.gen(function* () {
        const codes = yield* CodeStore.CodeStore
        const userId = yield* inactiveUser(how)
        // Issued after the change committed (an authorization racing it): the redemption decides
        const code = F.code({ userId })
        yield* codes.insert(code)
        const issued = F.pair({ userId, appKey: code.appKey, familyId: code.familyId })
        assert.strictEqual(
          (yield* Effect.flip(codes.redeem(code.codeHash, T + 1, issued)))._tag,
          "UserInactive"
        )
        const after = yield* codes.find(code.codeHash)
        assert.isTrue(Option.isSome(after) && after.value.usedAt === null, "the code stays unused")
        assert.deepStrictEqual(yield* areStored(issued), [false, false])
        // The code's own state comes first: a used code is still a replay
        const used = F.code({ userId, usedAt: T })
        yield* codes.insert(used)
        const replay = yield* Effect.flip(codes.redeem(used.codeHash, T + 1, F.pair({ userId })))
        assert.strictEqual(replay._tag, "CodeAlreadyUsed")
      })
  )
}

/** A rotation to successors of a user disabled or gone is refused; the user's unused codes are retired. */
const refusedRotationAndRetiredCodes = (it: Vitest.MethodsNonLive<Stores.Stores>, how: Change): void => {
  it.effect(
    `tokens: rotate to successors of a ${how} user fails with UserInactive and leaves the token unrotated`,
    () =>
      Effect.gen(function* () {
        const tokens = yield* TokenStore.TokenStore
        const userId = yield* inactiveUser(how)
        const [, refresh] = F.pair()
        yield* tokens.insert([refresh])
        const successors = F.pair({ userId, appKey: refresh.appKey, familyId: refresh.familyId })
        const err = yield* Effect.flip(tokens.rotate(refresh.tokenHash, T + 1, 0, successors))
        assert.strictEqual(err._tag, "UserInactive")
        const after = yield* tokens.find("refresh", refresh.tokenHash)
        assert.isTrue(Option.isSome(after) && after.value.rotatedAt === null, "the token stays unrotated")
        assert.deepStrictEqual(yield* areStored(successors), [false, false])
      })
  )

  it.effect(
    `codes: a user ${how} has every unused code of theirs retired; used codes stay for replay detection`,
    () =>
      Effect.gen(function* () {
        const codes = yield* CodeStore.CodeStore
        const userId = yield* insertUser
        const other = yield* insertUser
        const unused = [F.code({ userId }), F.code({ userId })]
        const used = F.code({ userId, usedAt: T })
        const theirs = F.code({ userId: other, appKey: unused[0]?.appKey ?? F.id("app") })
        yield* Effect.forEach([...unused, used, theirs], codes.insert)
        yield* change(how, userId, T + 1)
        for (const c of unused) {
          assert.isTrue(Option.isNone(yield* codes.find(c.codeHash)), "an unused code is retired")
          const err = yield* Effect.flip(codes.redeem(c.codeHash, T + 2, F.pair()))
          assert.strictEqual(err._tag, "CodeNotFound", "nothing issued, nothing revoked")
        }
        assert.isTrue(Option.isSome(yield* codes.find(used.codeHash)))
        assert.isTrue(Option.isSome(yield* codes.find(theirs.codeHash)))
      })
  )
}

/** A withdrawn consent retires the unused codes issued under it. */
const withdrawalRetiresCodes = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("consents: withdraw retires the unused codes of that user and application only", () =>
    Effect.gen(function* () {
      const codes = yield* CodeStore.CodeStore
      const consents = yield* ConsentStore.ConsentStore
      const userId = yield* insertUser
      const other = yield* insertUser
      const appKey = F.id("app")
      yield* consents.grant(userId, appKey, F.scope("read"), T)
      const retired = F.code({ userId, appKey })
      const used = F.code({ userId, appKey, usedAt: T })
      const kept = [F.code({ userId }), F.code({ userId: other, appKey })]
      yield* Effect.forEach([retired, used, ...kept], codes.insert)
      assert.isTrue(yield* consents.withdraw(userId, appKey, T + 1))
      assert.isTrue(Option.isNone(yield* codes.find(retired.codeHash)))
      const issued = F.pair({ userId, appKey, familyId: retired.familyId })
      const err = yield* Effect.flip(codes.redeem(retired.codeHash, T + 2, issued))
      assert.strictEqual(err._tag, "CodeNotFound")
      assert.deepStrictEqual(yield* areStored(issued), [false, false])
      for (const c of [used, ...kept]) assert.isTrue(Option.isSome(yield* codes.find(c.codeHash)))
    })
  )
}

/** A user disabled or gone while the password grant checks the password. */
const passwordGrantRace = (it: Vitest.MethodsNonLive<Stores.Stores>, how: Change): void => {
  it.effect(
    `grants: a user ${how} while the password grant checks the password gets invalid_grant and no active token`,
    () =>
      Effect.gen(function* () {
        const { app, user } = yield* appAndUser
        const checking = yield* Deferred.make<void>()
        const proceed = yield* Deferred.make<void>()
        // The grant holds in verify until the change has committed
        const gated = PasswordHasher.PasswordHasher.of({
          ...hasher,
          verify: (p, h) =>
            Deferred.succeed(checking, undefined).pipe(
              Effect.zipRight(Deferred.await(proceed)),
              Effect.zipRight(hasher.verify(p, h))
            )
        })
        const params = { grant_type: "password", username: user.username, password: "pw" }
        const grant = yield* Effect.fork(
          Grants.handle(params, app, undefined).pipe(
            Effect.provideService(PasswordHasher.PasswordHasher, gated)
          )
        )
        yield* Deferred.await(checking)
        yield* change(how, user.userId, T)
        yield* Deferred.succeed(proceed, undefined)
        const exit = yield* Fiber.await(grant)
        assert.deepStrictEqual(failureOf(exit), "invalid_grant")
        assert.strictEqual(yield* unrevoked(app.appKey, user.userId), 0, "no token of the user is active")
      }).pipe(Effect.provide(grantServices))
  )
}

/** A user disabled or gone between the code or refresh grant's user check and its write. */
const writeRaces = (it: Vitest.MethodsNonLive<Stores.Stores>, how: Change): void => {
  it.effect(
    `grants: a user ${how} between the code grant's user check and its write gets invalid_grant, nothing issued`,
    () =>
      Effect.gen(function* () {
        const { app, user } = yield* appAndUser
        const codes = yield* CodeStore.CodeStore
        const users = yield* UserStore.UserStore
        const value = F.hash()
        const code = F.code({
          appKey: app.appKey,
          userId: user.userId,
          codeHash: yield* Digest.sha256(value)
        })
        yield* F.insertCode(code)
        // The change commits after the grant read the user enabled and before its write
        const racing = CodeStore.CodeStore.of({
          ...codes,
          redeem: (...args) =>
            Effect.zipRight(
              change(how, user.userId, T).pipe(Effect.provideService(UserStore.UserStore, users)),
              codes.redeem(...args)
            )
        })
        const params = { grant_type: "authorization_code", code: value, redirect_uri: code.redirectUri }
        const exit = yield* Effect.exit(
          Grants.handle(params, app, undefined).pipe(Effect.provideService(CodeStore.CodeStore, racing))
        )
        assert.deepStrictEqual(failureOf(exit), "invalid_grant")
        assert.strictEqual(yield* unrevoked(app.appKey, user.userId), 0, "no token of the user is active")
      }).pipe(Effect.provide(grantServices))
  )

  it.effect(
    `grants: a user ${how} between the refresh grant's user check and its rotation gets invalid_grant`,
    () =>
      Effect.gen(function* () {
        const { app, user } = yield* appAndUser
        const tokens = yield* TokenStore.TokenStore
        const users = yield* UserStore.UserStore
        const value = F.hash()
        const [access, refresh] = F.pair({ appKey: app.appKey, userId: user.userId })
        yield* tokens.insert([access, { ...refresh, tokenHash: yield* Digest.sha256(value) }])
        const racing = TokenStore.TokenStore.of({
          ...tokens,
          rotate: (...args) =>
            Effect.zipRight(
              change(how, user.userId, T).pipe(Effect.provideService(UserStore.UserStore, users)),
              tokens.rotate(...args)
            )
        })
        const params = { grant_type: "refresh_token", refresh_token: value }
        const exit = yield* Effect.exit(
          Grants.handle(params, app, undefined).pipe(Effect.provideService(TokenStore.TokenStore, racing))
        )
        assert.deepStrictEqual(failureOf(exit), "invalid_grant")
        assert.strictEqual(yield* unrevoked(app.appKey, user.userId), 0, "no token of the user is active")
      }).pipe(Effect.provide(grantServices))
  )
}

/** Register the lifecycle cases with the contract's `it`. */
export const lifecycleCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  for (const how of changes) {
    refusedWrites(it, how)
    refusedRotationAndRetiredCodes(it, how)
  }
  withdrawalRetiresCodes(it)
  for (const how of changes) {
    passwordGrantRace(it, how)
    writeRaces(it, how)
  }
}
