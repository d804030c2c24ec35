import { auditContract, storageContract, transactionContract } from "@latchkey/storage-testkit"
import { describe } from "vitest"
import { databaseUrl, postgresLayer, useDatabase } from "./support/postgres.js"

// The same contract against a real server, in a database of this run: once with the server's
// default isolation (READ COMMITTED), once with every transaction SERIALIZABLE, where concurrent
// writers get serialization failures that the adapter must run again, never answer wrongly.
for (const serializable of [false, true]) {
  const isolation = serializable ? "serializable" : "read committed"
  describe.skipIf(databaseUrl === undefined)(`real PostgreSQL, ${isolation}`, () => {
    const database = useDatabase({ serializable })
    // A fresh schema for each layer the contract builds.
    storageContract(`postgres, ${isolation}`, (sessions) => postgresLayer(database.get, { sessions }))
    auditContract(`postgres, ${isolation}`, postgresLayer(database.get))
    transactionContract(`postgres, ${isolation}`, postgresLayer(database.get))
  })
}
