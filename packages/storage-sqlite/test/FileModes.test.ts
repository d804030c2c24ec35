/**
 * K9 (docs/security.md): the database file, its -wal and -shm, and every backup are readable by
 * their owner only, whatever the umask; the directories Latchkey creates for them too.
 */
import { execFile } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { assert, it } from "@effect/vitest"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Effect, Layer } from "effect"
import { afterAll } from "vitest"

const fixture = fileURLToPath(new URL("./fixtures/modes.ts", import.meta.url))
const dir = mkdtempSync(join(tmpdir(), "latchkey-modes-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const modeOf = (path: string): number => statSync(path).mode & 0o777

it("K9: a new database, its -wal and -shm, a backup and the directories created are 0600 and 0700 under umask 000", async () => {
  const filename = join(dir, "created", "data", "latchkey.sqlite")
  const destination = join(dir, "backups", "daily", "latchkey-backup.sqlite")
  const { stdout: out } = await promisify(execFile)(process.execPath, [
    "--conditions=@latchkey/source",
    "--import",
    "tsx",
    fixture,
    filename,
    destination
  ])
  const modes = JSON.parse(out) as Record<string, number>
  const octal = Object.fromEntries(Object.entries(modes).map(([k, v]) => [k, v.toString(8)]))
  assert.deepStrictEqual(octal, {
    directory: "700",
    parent: "700",
    database: "600",
    wal: "600",
    shm: "600",
    backupDirectory: "700",
    backup: "600"
  })
}, 60_000)

it.effect("K9: an existing database file and directory keep the mode the operator gave them", () =>
  Effect.gen(function* () {
    const parent = join(dir, "operator")
    mkdirSync(parent)
    chmodSync(parent, 0o750)
    const filename = join(parent, "latchkey.sqlite")
    writeFileSync(filename, "")
    chmodSync(filename, 0o640)
    yield* Effect.scoped(Layer.build(SqliteStorage.layer({ filename })))
    assert.strictEqual(modeOf(filename).toString(8), "640")
    assert.strictEqual(modeOf(parent).toString(8), "750")
  })
)
