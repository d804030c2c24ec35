import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { auditContract, storageContract } from "@latchkey/storage-testkit"
import { afterAll } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "latchkey-contract-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

storageContract("sqlite :memory:", SqliteStorage.layer({ filename: ":memory:" }))
storageContract("sqlite file", SqliteStorage.layer({ filename: join(dir, "nested", "latchkey.sqlite") }))
auditContract("sqlite file", SqliteStorage.layer({ filename: join(dir, "audit", "latchkey.sqlite") }))
