import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, it } from "@effect/vitest"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Cause, Effect, Exit, Layer } from "effect"
import { afterAll } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "latchkey-paths-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The message opening `filename` fails with. */
const openFailure = (filename: string) =>
  Effect.gen(function* () {
    const exit = yield* Effect.exit(Effect.scoped(Layer.build(SqliteStorage.layer({ filename }))))
    assert.isTrue(Exit.isFailure(exit))
    return Exit.isFailure(exit) ? (Cause.squash(exit.cause) as Error).message : ""
  })

it.effect("a database file under a file that is no directory: the path and why, in words", () =>
  Effect.gen(function* () {
    const file = join(dir, "plain")
    writeFileSync(file, "")
    assert.strictEqual(
      yield* openFailure(join(file, "deeper", "x.sqlite")),
      `the database file ${join(file, "deeper", "x.sqlite")} cannot be created: ${file} is not a directory`
    )
  })
)

it.effect(
  "a directory the file system refuses to create: the directory, the reason in words and its code",
  () =>
    Effect.gen(function* () {
      assert.strictEqual(
        yield* openFailure("/proc/latchkey-nope/x.sqlite"),
        "the database file /proc/latchkey-nope/x.sqlite cannot be created: the directory /proc/latchkey-nope cannot be created: no such file or directory (the file system may not allow it) (ENOENT)"
      )
    })
)
