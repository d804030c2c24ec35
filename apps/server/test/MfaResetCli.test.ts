import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { FactorStore } from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Fixtures } from "@latchkey/storage-testkit"
import { Effect } from "effect"
import { cliInProcess, createUser, tempDir } from "./helpers.js"

const temps: Array<() => void> = []
afterEach(() => {
  for (const cleanup of temps.splice(0)) cleanup()
})

/** A confirmed authenticator app with two recovery codes for `userId`, written into the database. */
const enrol = (filename: string, userId: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const factors = yield* FactorStore.FactorStore
      const f = Fixtures.totpFactor({ userId })
      yield* factors.enrol(f)
      yield* factors.confirm(userId, f.sealedSecret, 1, [Fixtures.hash(), Fixtures.hash()], Fixtures.baseTime)
    }).pipe(Effect.provide(SqliteStorage.layer({ filename })))
  )

const factorOf = (filename: string, userId: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const factors = yield* FactorStore.FactorStore
      return { factor: yield* factors.find(userId), left: yield* factors.recoveryCodesLeft(userId) }
    }).pipe(Effect.provide(SqliteStorage.layer({ filename })))
  )

describe("user mfa-reset", () => {
  it("removes the user's authenticator app and recovery codes, audited as mfa_reset by the cli; a user without one is told so", async () => {
    const tmp = tempDir()
    temps.push(tmp.cleanup)
    const db = join(tmp.dir, "latchkey.sqlite")
    const { user_id: userId } = await createUser(db, "alice", "correct horse battery", {}, true)
    await enrol(db, userId)
    const reset = await cliInProcess(db, ["user", "mfa-reset", "alice", "--json"])
    assert.strictEqual(reset.code, 0, reset.stderr)
    assert.deepStrictEqual(JSON.parse(reset.stdout), { user_id: userId, username: "alice", removed: true })
    const after = await factorOf(db, userId)
    assert.strictEqual(after.factor._tag, "None")
    assert.strictEqual(after.left, 0)
    const again = await cliInProcess(db, ["user", "mfa-reset", userId])
    assert.strictEqual(again.code, 0, again.stderr)
    assert.include(again.stdout, "had no second factor to reset")
    const audit = await cliInProcess(db, ["audit", "tail", "--type", "mfa_reset", "--json"])
    const events = JSON.parse(audit.stdout) as Array<{ user_id: string; actor: string; detail: string }>
    assert.deepStrictEqual(
      events.map((e) => [e.user_id, e.actor, e.detail]),
      [
        [userId, "cli", "authenticator and recovery codes removed"],
        [userId, "cli", "nothing to remove"]
      ]
    )
    const unknown = await cliInProcess(db, ["user", "mfa-reset", "nobody"])
    assert.strictEqual(unknown.code, 1)
  })
})
