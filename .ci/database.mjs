// CI's PostgreSQL: `create` prints the URL of a new database for this run when a server answers
// on 127.0.0.1:5432 (nothing when none does); `drop <url>` drops it. Uses the pg driver that
// @latchkey/storage-postgres depends on.
import { randomBytes } from "node:crypto"
import { createRequire } from "node:module"

const require = createRequire(new URL("../packages/storage-postgres/package.json", import.meta.url))
const { Client } = require("pg")
const admin = process.env.LATCHKEY_CI_POSTGRES ?? "postgres://postgres@127.0.0.1:5432/postgres"

const withAdmin = async (f) => {
  const client = new Client({ connectionString: admin, connectionTimeoutMillis: 3000 })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

const [command, url] = process.argv.slice(2)
if (command === "create") {
  const name = `latchkey_ci_${randomBytes(6).toString("hex")}`
  try {
    await withAdmin((c) => c.query(`CREATE DATABASE ${name}`))
  } catch {
    process.exit(0) // no PostgreSQL here: the tests fall back to the embedded PGlite
  }
  const u = new URL(admin)
  u.pathname = `/${name}`
  console.log(u.toString())
} else if (command === "drop" && url !== undefined) {
  const name = new URL(url).pathname.slice(1)
  if (!/^latchkey_ci_[0-9a-f]+$/.test(name)) throw new Error(`refusing to drop ${name}`)
  await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
} else {
  console.error("usage: node .ci/database.mjs create | drop <url>")
  process.exit(2)
}
