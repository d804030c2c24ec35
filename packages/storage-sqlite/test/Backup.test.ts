import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, it } from "@effect/vitest"
import { ApplicationStore, TokenStore, UserStore } from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Fixtures } from "@latchkey/storage-testkit"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Layer, Option } from "effect"
import { afterAll } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "latchkey-backup-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const freshFile = () => join(dir, `db-${files++}.sqlite`)

const withRaw = <A>(filename: string, f: (db: BetterSqlite3.Database) => A): A => {
  const db = new BetterSqlite3(filename)
  try {
    return f(db)
  } finally {
    db.close()
  }
}

/** How many of the tokens a database file holds (none when it has no tokens table). */
const tokensIn = (filename: string, hashes: ReadonlyArray<string>): number =>
  withRaw(filename, (db) => {
    const hasTable =
      db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'tokens'").pluck().get() === 1
    if (!hasTable) return 0
    const find = db.prepare("SELECT count(*) FROM tokens WHERE token_hash = ?").pluck()
    return hashes.filter((h) => find.get(h) === 1).length
  })

it.effect(
  "a backup taken while another connection writes holds every earlier commit, WAL included, and opens as a database",
  () =>
    Effect.gen(function* () {
      const filename = freshFile()
      const context = yield* Layer.build(SqliteStorage.layer({ filename }))
      const apps = yield* Effect.provide(ApplicationStore.ApplicationStore, context)
      const users = yield* Effect.provide(UserStore.UserStore, context)
      const tokens = yield* Effect.provide(TokenStore.TokenStore, context)
      const app = Fixtures.application()
      const user = Fixtures.user()
      yield* apps.insert(app)
      yield* users.insert(user)
      // Enough rows for many pages, committed by the layer's connection.
      const before = Array.from({ length: 2000 }, () =>
        Fixtures.token({ appKey: app.appKey, userId: user.userId })
      )
      yield* tokens.insert(before)
      // Committed but not checkpointed yet: the main file alone lacks them, as `cp` of it would.
      const mainOnly = freshFile()
      copyFileSync(filename, mainOnly)
      assert.strictEqual(tokensIn(mainOnly, [before[0]?.tokenHash ?? ""]), 0)

      // 50 inserts queued in one turn share one commit, made while the backup runs.
      const during = Array.from({ length: 50 }, () => Fixtures.token({ appKey: app.appKey }))
      const destination = join(dir, "backups", "nested", "copy.sqlite")
      const [result] = yield* Effect.all(
        [
          SqliteStorage.backup({ filename }, destination),
          Effect.forEach(during, (t) => tokens.insert([t]), { concurrency: "unbounded" })
        ],
        { concurrency: "unbounded" }
      )

      withRaw(destination, (db) => {
        assert.strictEqual(db.pragma("integrity_check", { simple: true }), "ok")
        assert.strictEqual(db.pragma("page_count", { simple: true }), result.pages)
      })
      assert.isAbove(result.pages, 100)
      // A snapshot: the commit made meanwhile is in it whole or not at all.
      assert.include(
        [0, during.length],
        tokensIn(
          destination,
          during.map((t) => t.tokenHash)
        )
      )

      // The copy opens with the adapter, and the stores read everything committed before it.
      const copied = yield* Layer.build(SqliteStorage.layer({ filename: destination }))
      const copiedApps = yield* Effect.provide(ApplicationStore.ApplicationStore, copied)
      const copiedUsers = yield* Effect.provide(UserStore.UserStore, copied)
      const copiedTokens = yield* Effect.provide(TokenStore.TokenStore, copied)
      assert.deepStrictEqual(yield* copiedApps.find(app.appKey), Option.some(app))
      assert.deepStrictEqual(yield* copiedUsers.findById(user.userId), Option.some(user))
      for (const t of before)
        assert.deepStrictEqual(yield* copiedTokens.find(t.kind, t.tokenHash), Option.some(t))
      // The copy is a database of its own: a write to it leaves the source as it was.
      const later = Fixtures.token()
      yield* copiedTokens.insert([later])
      assert.isTrue(Option.isNone(yield* tokens.find(later.kind, later.tokenHash)))
    }).pipe(Effect.scoped)
)

it.effect("a backup to a file that exists is refused, and that file is left as it was", () =>
  Effect.gen(function* () {
    const filename = freshFile()
    yield* SqliteStorage.migrate({ filename })
    const existing = freshFile()
    writeFileSync(existing, "keep me")
    const err = yield* Effect.flip(SqliteStorage.backup({ filename }, existing))
    assert.strictEqual(err._tag, "StorageError")
    assert.match(err.message, /exists already/)
    assert.strictEqual(readFileSync(existing, "utf8"), "keep me")
    // Backing a file up onto itself is the same refusal.
    const self = yield* Effect.flip(SqliteStorage.backup({ filename }, filename))
    assert.match(self.message, /exists already/)
  })
)

it.effect("a backup of :memory:, of a missing file, or to :memory: is refused and creates no file", () =>
  Effect.gen(function* () {
    const filename = freshFile()
    yield* SqliteStorage.migrate({ filename })
    const destination = freshFile()
    const memory = yield* Effect.flip(SqliteStorage.backup({ filename: ":memory:" }, destination))
    assert.strictEqual(memory._tag, "StorageError")
    assert.match(memory.message, /:memory:/)
    const missing = freshFile()
    const absent = yield* Effect.flip(SqliteStorage.backup({ filename: missing }, destination))
    assert.match(absent.message, /no database file/)
    assert.isFalse(existsSync(missing), "the missing source is not created")
    const toMemory = yield* Effect.flip(SqliteStorage.backup({ filename }, ":memory:"))
    assert.match(toMemory.message, /:memory:/)
    assert.isFalse(existsSync(destination))
    assert.isFalse(existsSync(join(process.cwd(), ":memory:")))
  })
)

it.effect("a backup that fails leaves no file at the destination", () =>
  Effect.gen(function* () {
    const notADatabase = freshFile()
    writeFileSync(
      notADatabase,
      "this is not a database file, only some text long enough to have a header".repeat(20)
    )
    const destination = freshFile()
    const err = yield* Effect.flip(SqliteStorage.backup({ filename: notADatabase }, destination))
    assert.strictEqual(err._tag, "StorageError")
    assert.match(err.message, /not a database/)
    assert.isFalse(existsSync(destination))
  })
)
