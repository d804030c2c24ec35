/**
 * Scale-out on PostgreSQL with real processes: the scenarios of `scale/scenarios.ts` against two
 * server processes on one database, then against one server running two workers, each on a
 * database of its own made for the run (skipped without DATABASE_URL).
 */
import { describe } from "@effect/vitest"
import { clusterOf, type Store, twoProcesses } from "../scale/deployments.js"
import { describeMultiInstance } from "../scale/scenarios.js"
import { createDatabase, serverUrl } from "./database.js"

const postgresStore = async (): Promise<Store> => {
  const database = await createDatabase()
  return { env: { DATABASE_URL: database.url }, cleanup: database.drop }
}

describe.skipIf(serverUrl === undefined)("scale-out on PostgreSQL", () => {
  describeMultiInstance("two server processes on one PostgreSQL database", twoProcesses(postgresStore))
  describeMultiInstance(
    "one server with LATCHKEY_WORKERS=2 on one PostgreSQL database",
    clusterOf(2, postgresStore)
  )
})
