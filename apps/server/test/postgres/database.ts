/**
 * PostgreSQL for the server's tests: `DATABASE_URL` names a server (CI sets it when one answers
 * on 127.0.0.1:5432); each test file makes databases of its own there and drops them after.
 * Without it these tests are skipped: the adapter's own suite covers PostgreSQL through PGlite.
 */
import { randomBytes } from "node:crypto"
import pg from "pg"

/** The server to make databases on, if any. */
export const serverUrl: string | undefined = process.env.DATABASE_URL || undefined

/** A database of this test run. */
export interface Database {
  /** Its connection URI. */
  readonly url: string
  readonly host: string
  readonly port: number
  /** The same URI through another host and port (a proxy in front of the server). */
  readonly via: (host: string, port: number) => string
  /** Drop it, closing whoever is still connected. */
  readonly drop: () => Promise<void>
}

const onServer = async (sql: string): Promise<void> => {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

/** Create an empty database on `serverUrl`. */
export const createDatabase = async (): Promise<Database> => {
  if (serverUrl === undefined) throw new Error("DATABASE_URL is not set")
  const name = `latchkey_server_test_${randomBytes(8).toString("hex")}`
  await onServer(`CREATE DATABASE ${name}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const via = (host: string, port: number) => {
    const u = new URL(url)
    u.hostname = host
    u.port = String(port)
    return u.toString()
  }
  return {
    url: url.toString(),
    host: url.hostname,
    port: Number(url.port || 5432),
    via,
    drop: () => onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  }
}
