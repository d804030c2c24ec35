import { auditContract, storageContract, transactionContract } from "@latchkey/storage-testkit"
import { afterAll } from "vitest"
import { pglite, pgliteLayer } from "./support/pglite.js"

afterAll(async () => (await pglite()).close())

// A fresh schema of one embedded PGlite for each layer the contract builds (one shared, one per session-bounds test).
storageContract("postgres on PGlite", (sessions) => pgliteLayer({ sessions }))
auditContract("postgres on PGlite", pgliteLayer())
transactionContract("postgres on PGlite", pgliteLayer())
