import { mkdtempSync, renameSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, it } from "@effect/vitest"
import { TokenStore } from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Fixtures } from "@latchkey/storage-testkit"
import { Effect, Layer } from "effect"
import { afterAll } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "latchkey-health-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const freshFile = () => join(dir, `db-${files++}.sqlite`)

/** A layer over `filename`, built in the test's scope, and its ping. */
const opened = (filename: string) =>
  Effect.map(Layer.build(SqliteStorage.layer({ filename })), (context) => ({
    ping: Effect.provide(SqliteStorage.ping, context),
    tokens: Effect.provide(TokenStore.TokenStore, context)
  }))

it.effect("ping succeeds while the file at the path is the one opened, written to or not", () =>
  Effect.gen(function* () {
    const { ping, tokens } = yield* opened(freshFile())
    yield* ping
    const store = yield* tokens
    yield* store.insert(Fixtures.pair())
    yield* ping
    yield* ping
  }).pipe(Effect.scoped)
)

it.effect("ping fails with StorageError once the database file is deleted", () =>
  Effect.gen(function* () {
    const filename = freshFile()
    const { ping } = yield* opened(filename)
    yield* ping
    rmSync(filename)
    const err = yield* Effect.flip(ping)
    assert.strictEqual(err._tag, "StorageError")
    assert.match(err.message, /no longer exists/)
  }).pipe(Effect.scoped)
)

it.effect("ping fails with StorageError once another database file is renamed over it", () =>
  Effect.gen(function* () {
    const filename = freshFile()
    const { ping } = yield* opened(filename)
    yield* ping
    // A restore done wrong: another Latchkey database moved into place under the running server.
    const other = freshFile()
    yield* SqliteStorage.migrate({ filename: other })
    renameSync(other, filename)
    const err = yield* Effect.flip(ping)
    assert.strictEqual(err._tag, "StorageError")
    assert.match(err.message, /replaced/)
  }).pipe(Effect.scoped)
)

it.effect("ping of an in-memory database does not look for a file", () =>
  Effect.provide(SqliteStorage.ping, SqliteStorage.layer({ filename: ":memory:" }))
)
