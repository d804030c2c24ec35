/**
 * D13, D15 and D16 on a real PostgreSQL server (`DATABASE_URL`): the row lock on the user orders a
 * token write with a disable or delete of that user, or a withdrawal of the consent it is issued
 * under, and a sign-in's session write with a disable, delete or new password of that user,
 * whichever comes first, at READ COMMITTED and SERIALIZABLE.
 * One side is held open on a raw connection; the other is known to wait when the server reports
 * it blocked by that connection (pg_blocking_pids), then the held side commits.
 */
import { assert, describe, it } from "@effect/vitest"
import { CodeStore, ConsentStore, SessionStore, TokenStore, UserStore } from "@latchkey/core"
import { PostgresStorage } from "@latchkey/storage-postgres"
import { Fixtures as F } from "@latchkey/storage-testkit"
import { Context, Effect, Either, Fiber, Layer, Option } from "effect"
import type pg from "pg"
import { insertTokensSql, tokenParams } from "../src/internal/tokenWrites.js"
import { freshSchema } from "./support/pglite.js"
import { databaseUrl, rawClient, useDatabase } from "./support/postgres.js"

const T = F.baseTime

for (const serializable of [false, true]) {
  const isolation = serializable ? "serializable" : "read committed"
  describe.skipIf(databaseUrl === undefined)(`account lifecycle on real PostgreSQL, ${isolation}`, () => {
    const database = useDatabase({ serializable })

    /** The stores over a fresh schema, a held connection in it and a monitor connection. */
    const setup = Effect.gen(function* () {
      const schema = freshSchema()
      const context = yield* Layer.build(
        PostgresStorage.layer({ connectionString: database.get().url, schema })
      )
      const connect = Effect.acquireRelease(
        Effect.promise(() => rawClient(database.get(), schema)),
        (c) => Effect.promise(() => c.end())
      )
      const held = yield* connect
      const monitor = yield* connect
      const sql = (c: pg.Client, text: string, values: ReadonlyArray<unknown> = []) =>
        Effect.promise(() => c.query(text, [...values]))
      const pid = Number((yield* sql(held, "SELECT pg_backend_pid() AS pid")).rows[0]?.pid)
      // Bounded: the fiber must be seen waiting on the held connection before it ends
      const blockedByHeld = <A, E>(fiber: Fiber.RuntimeFiber<A, E>) =>
        Effect.gen(function* () {
          for (let i = 0; i < 1000; i++) {
            const r = yield* sql(
              monitor,
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))",
              [pid]
            )
            if (Number(r.rows[0]?.n) > 0) return
            assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)), "the store did not wait for the held lock")
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
          }
          assert.fail("the store never waited for the held lock")
        })
      return {
        stores: {
          users: Context.get(context, UserStore.UserStore),
          tokens: Context.get(context, TokenStore.TokenStore),
          codes: Context.get(context, CodeStore.CodeStore),
          consents: Context.get(context, ConsentStore.ConsentStore),
          sessions: Context.get(context, SessionStore.SessionStore)
        },
        held: (text: string, values?: ReadonlyArray<unknown>) => sql(held, text, values),
        blockedByHeld
      }
    })

    const writes = ["insert", "redeem", "rotate"] as const
    for (const write of writes) {
      it.effect(
        `${write}: a token write waits for an uncommitted disable of its user, then is refused with UserInactive`,
        () =>
          Effect.gen(function* () {
            const { stores, held, blockedByHeld } = yield* setup
            const user = F.user()
            yield* stores.users.insert(user)
            const issued = F.pair({ userId: user.userId })
            const code = F.code({ userId: user.userId })
            const [, old] = F.pair()
            yield* stores.codes.insert(code)
            yield* stores.consents.grant(user.userId, code.appKey, code.scope, T)
            yield* stores.tokens.insert([old])
            const run: Effect.Effect<void, { readonly _tag: string }> =
              write === "insert"
                ? stores.tokens.insert(issued)
                : write === "redeem"
                  ? stores.codes.redeem(code.codeHash, T + 1, issued)
                  : stores.tokens.rotate(old.tokenHash, T + 1, 0, issued)
            // A disable that has changed the user's row and not committed yet
            yield* held("BEGIN")
            yield* held("UPDATE users SET disabled_at = $2 WHERE user_id = $1", [user.userId, T])
            const fiber = yield* Effect.fork(Effect.either(run))
            yield* blockedByHeld(fiber)
            yield* held("COMMIT")
            const result = yield* Fiber.join(fiber)
            assert.deepStrictEqual(Either.isLeft(result) ? result.left._tag : "written", "UserInactive")
            for (const t of issued)
              assert.isTrue(Option.isNone(yield* stores.tokens.find(t.kind, t.tokenHash)))
          }).pipe(Effect.scoped)
      )
    }

    for (const how of ["disable", "delete"] as const) {
      it.effect(
        `${how}: waits for a token write of the user that locked the user first, then revokes its tokens`,
        () =>
          Effect.gen(function* () {
            const { stores, held, blockedByHeld } = yield* setup
            const user = F.user()
            yield* stores.users.insert(user)
            const issued = F.pair({ userId: user.userId })
            // A token write as the store runs it: the user locked FOR SHARE, the tokens inserted
            yield* held("BEGIN")
            yield* held("SELECT user_id FROM users WHERE user_id = $1 AND disabled_at IS NULL FOR SHARE", [
              user.userId
            ])
            yield* held(insertTokensSql(issued.length), issued.flatMap(tokenParams))
            const fiber = yield* Effect.fork(
              how === "disable"
                ? stores.users.setDisabled(user.userId, true, T + 5)
                : stores.users.remove(user.userId, T + 5)
            )
            yield* blockedByHeld(fiber)
            yield* held("COMMIT")
            assert.isTrue(yield* Fiber.join(fiber))
            for (const t of issued) {
              const found = yield* stores.tokens.find(t.kind, t.tokenHash)
              assert.strictEqual(Option.getOrThrow(found).revokedAt, T + 5, "the new tokens are revoked")
            }
          }).pipe(Effect.scoped)
      )
    }

    // What a disable, a delete and a new password do to the user's row first, as the stores run them
    type Statement = readonly [string, ReadonlyArray<unknown>]
    const accountChanges: Record<"disable" | "delete" | "new password", (userId: string) => Statement> = {
      disable: (userId: string) => ["UPDATE users SET disabled_at = $2 WHERE user_id = $1", [userId, T]],
      delete: (userId: string) => ["DELETE FROM users WHERE user_id = $1", [userId]],
      "new password": (userId: string) => [
        "UPDATE users SET password_hash = $2 WHERE user_id = $1",
        [userId, `scrypt$${F.hash()}`]
      ]
    }
    for (const [how, change] of Object.entries(accountChanges)) {
      it.effect(
        `D16: a sign-in's session write waits for an uncommitted ${how} of its user, then is refused and stores nothing`,
        () =>
          Effect.gen(function* () {
            const { stores, held, blockedByHeld } = yield* setup
            const user = F.user()
            yield* stores.users.insert(user)
            const session = F.signedInSession({ userId: user.userId, username: user.username })
            const [text, values] = change(user.userId)
            yield* held("BEGIN")
            yield* held(text, values)
            const fiber = yield* Effect.fork(stores.sessions.signIn(session, user))
            yield* blockedByHeld(fiber)
            yield* held("COMMIT")
            assert.isFalse(yield* Fiber.join(fiber))
            assert.isTrue(Option.isNone(yield* stores.sessions.find(session.idHash, T)))
          }).pipe(Effect.scoped)
      )
    }

    for (const how of Object.keys(accountChanges) as ReadonlyArray<keyof typeof accountChanges>) {
      it.effect(
        `D16: a ${how} waits for a sign-in's session write that locked the user first, then ends it`,
        () =>
          Effect.gen(function* () {
            const { stores, held, blockedByHeld } = yield* setup
            const user = F.user()
            yield* stores.users.insert(user)
            const session = F.signedInSession({ userId: user.userId, username: user.username })
            // A sign-in's write as the store runs it: the user locked FOR SHARE, the session inserted
            yield* held("BEGIN")
            yield* held("SELECT user_id FROM users WHERE user_id = $1 FOR SHARE", [user.userId])
            yield* held(
              `INSERT INTO sessions (id_hash, user_id, username, authenticated_at, expires_at)
              VALUES ($1, $2, $3, $4, $5)`,
              [session.idHash, session.userId, session.username, session.authenticatedAt, session.expiresAt]
            )
            const fiber = yield* Effect.fork(
              how === "disable"
                ? stores.users.setDisabled(user.userId, true, T + 5)
                : how === "delete"
                  ? stores.users.remove(user.userId, T + 5)
                  : stores.users.setPasswordHash(user.userId, `scrypt$${F.hash()}`)
            )
            yield* blockedByHeld(fiber)
            yield* held("COMMIT")
            assert.isTrue(yield* Fiber.join(fiber))
            assert.isTrue(
              Option.isNone(yield* stores.sessions.find(session.idHash, T)),
              "the new session ended"
            )
          }).pipe(Effect.scoped)
      )
    }

    it.effect(
      "withdraw: waits for a redemption that consumed a code first, then revokes what it issued",
      () =>
        Effect.gen(function* () {
          const { stores, held, blockedByHeld } = yield* setup
          const user = F.user()
          yield* stores.users.insert(user)
          const code = F.code({ userId: user.userId })
          yield* stores.codes.insert(code)
          yield* stores.consents.grant(user.userId, code.appKey, code.scope, T)
          const issued = F.pair({ userId: user.userId, appKey: code.appKey, familyId: code.familyId })
          // A redemption as the store runs it, up to its commit
          yield* held("BEGIN")
          yield* held("SELECT user_id FROM users WHERE user_id = $1 AND disabled_at IS NULL FOR SHARE", [
            user.userId
          ])
          yield* held(
            "UPDATE authorization_codes SET used_at = $2 WHERE code_hash = $1 AND used_at IS NULL",
            [code.codeHash, T + 1]
          )
          yield* held(insertTokensSql(issued.length), issued.flatMap(tokenParams))
          const fiber = yield* Effect.fork(stores.consents.withdraw(user.userId, code.appKey, T + 5))
          yield* blockedByHeld(fiber)
          yield* held("COMMIT")
          assert.isTrue(yield* Fiber.join(fiber))
          for (const t of issued) {
            const found = yield* stores.tokens.find(t.kind, t.tokenHash)
            assert.strictEqual(Option.getOrThrow(found).revokedAt, T + 5, "the redeemed tokens are revoked")
          }
        }).pipe(Effect.scoped)
    )

    it.effect("withdraw: waits for a rotation that locked the user first, then revokes the successors", () =>
      Effect.gen(function* () {
        const { stores, held, blockedByHeld } = yield* setup
        const user = F.user()
        yield* stores.users.insert(user)
        const [, old] = F.pair({ userId: user.userId })
        yield* stores.tokens.insert([old])
        yield* stores.consents.grant(user.userId, old.appKey, old.scope, T)
        const successors = F.pair({ userId: user.userId, appKey: old.appKey, familyId: old.familyId })
        // A rotation as the store runs it, up to its commit
        yield* held("BEGIN")
        yield* held("SELECT user_id FROM users WHERE user_id = $1 AND disabled_at IS NULL FOR SHARE", [
          user.userId
        ])
        yield* held("UPDATE tokens SET rotated_at = $2 WHERE kind = 'refresh' AND token_hash = $1", [
          old.tokenHash,
          T + 1
        ])
        yield* held(insertTokensSql(successors.length), successors.flatMap(tokenParams))
        const fiber = yield* Effect.fork(stores.consents.withdraw(user.userId, old.appKey, T + 5))
        yield* blockedByHeld(fiber)
        yield* held("COMMIT")
        assert.isTrue(yield* Fiber.join(fiber))
        for (const t of [old, ...successors]) {
          const found = yield* stores.tokens.find(t.kind, t.tokenHash)
          assert.strictEqual(Option.getOrThrow(found).revokedAt, T + 5, "the family is revoked")
        }
      }).pipe(Effect.scoped)
    )

    for (const write of ["redeem", "implicit"] as const) {
      it.effect(
        `withdraw first: a ${write} write issued under the consent waits for it, then is refused with ConsentWithdrawn (D15)`,
        () =>
          Effect.gen(function* () {
            const { stores, held, blockedByHeld } = yield* setup
            const user = F.user()
            yield* stores.users.insert(user)
            const code = F.code({ userId: user.userId })
            yield* stores.consents.grant(user.userId, code.appKey, code.scope, T)
            const issued = F.pair({ userId: user.userId, appKey: code.appKey, familyId: code.familyId })
            // A withdrawal as the store runs it, before its commit
            yield* held("BEGIN")
            yield* held("SELECT 1 FROM users WHERE user_id = $1 FOR NO KEY UPDATE", [user.userId])
            yield* held("DELETE FROM consents WHERE user_id = $1 AND app_key = $2", [
              user.userId,
              code.appKey
            ])
            yield* held(
              "DELETE FROM authorization_codes WHERE user_id = $1 AND app_key = $2 AND used_at IS NULL",
              [user.userId, code.appKey]
            )
            yield* held("UPDATE tokens SET revoked_at = $3 WHERE app_key = $2 AND user_id = $1", [
              user.userId,
              code.appKey,
              T + 5
            ])
            // The authorization that checked the consent before the withdrawal writes after its deletes
            if (write === "redeem") yield* stores.codes.insert(code)
            const under = { userId: user.userId, appKey: code.appKey, scope: code.scope }
            const run: Effect.Effect<void, { readonly _tag: string }> =
              write === "redeem"
                ? stores.codes.redeem(code.codeHash, T + 1, issued)
                : stores.tokens.insertUnderConsent(issued, under)
            const fiber = yield* Effect.fork(Effect.either(run))
            yield* blockedByHeld(fiber)
            yield* held("COMMIT")
            const result = yield* Fiber.join(fiber)
            assert.deepStrictEqual(Either.isLeft(result) ? result.left._tag : "written", "ConsentWithdrawn")
            for (const t of issued)
              assert.isTrue(Option.isNone(yield* stores.tokens.find(t.kind, t.tokenHash)))
            if (write === "redeem")
              assert.isNull(Option.getOrThrow(yield* stores.codes.find(code.codeHash)).usedAt, "unused")
          }).pipe(Effect.scoped)
      )
    }

    it.effect("withdraw first: a redemption waiting for it finds the code gone, and nothing is issued", () =>
      Effect.gen(function* () {
        const { stores, held, blockedByHeld } = yield* setup
        const user = F.user()
        yield* stores.users.insert(user)
        const code = F.code({ userId: user.userId })
        yield* stores.codes.insert(code)
        const issued = F.pair({ userId: user.userId, appKey: code.appKey, familyId: code.familyId })
        // A withdrawal as the store runs it, before its commit
        yield* held("BEGIN")
        yield* held(
          "DELETE FROM authorization_codes WHERE user_id = $1 AND app_key = $2 AND used_at IS NULL",
          [user.userId, code.appKey]
        )
        const fiber = yield* Effect.fork(Effect.flip(stores.codes.redeem(code.codeHash, T + 1, issued)))
        yield* blockedByHeld(fiber)
        yield* held("COMMIT")
        assert.strictEqual((yield* Fiber.join(fiber))._tag, "CodeNotFound")
        for (const t of issued) assert.isTrue(Option.isNone(yield* stores.tokens.find(t.kind, t.tokenHash)))
      }).pipe(Effect.scoped)
    )
  })
}
