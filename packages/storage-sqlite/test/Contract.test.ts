import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { auditContract, storageContract, transactionContract } from "@latchkey/storage-testkit"
import { afterAll } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "latchkey-contract-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

storageContract("sqlite :memory:", (sessions) => SqliteStorage.layer({ filename: ":memory:", sessions }))
// A new file for each layer the contract builds (one shared, one per session-bounds test).
storageContract("sqlite file", (sessions) =>
  SqliteStorage.layer({ filename: join(dir, "nested", `${randomUUID()}.sqlite`), sessions })
)
auditContract("sqlite file", SqliteStorage.layer({ filename: join(dir, "audit", "latchkey.sqlite") }))
transactionContract("sqlite file", SqliteStorage.layer({ filename: join(dir, "units", "latchkey.sqlite") }))
