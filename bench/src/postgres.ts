/**
 * PostgreSQL for latchkey-postgres: databases of this run created and dropped through `pg`
 * on the server DATABASE_URL names (never the database it names itself: that one only serves
 * the administrative connection), the server's settings for the report, and the backends
 * serving a database (their CPU time, read from /proc: PostgreSQL is not pinned).
 */
import { randomBytes } from "node:crypto"
import pg from "pg"

/** A fresh name, `latchkey_bench_<12 hex digits>`. */
export const databaseName = (): string => `latchkey_bench_${randomBytes(6).toString("hex")}`

/** The URI of database `name` on the server of `url` (same credentials, host and parameters). */
export const databaseUrl = (url: string, name: string): string => {
  const u = new URL(url)
  u.pathname = `/${encodeURIComponent(name)}`
  return u.toString()
}

/** A URI for the record: without its password (nor any parameter, which may hold one). */
export const redactUrl = (url: string): string => {
  try {
    const u = new URL(url)
    if (u.password !== "") u.password = "***"
    u.search = ""
    return u.toString()
  } catch {
    return "(not a URI)"
  }
}

/** A quoted identifier; only this module's own names reach it. */
const ident = (name: string): string => {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`unexpected database name ${JSON.stringify(name)}`)
  return `"${name}"`
}

const withClient = async <A>(url: string, f: (c: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end().catch(() => {})
  }
}

/** The databases created by this process and not dropped yet, by administrative URI. */
const created = new Map<string, string>()
/** Set by a final `dropAll` (on SIGINT): no database is created after it. */
let closed = false

/** CREATE DATABASE `name` (a copy of `template` when given) on the server of `adminUrl`. */
export const createDatabase = async (adminUrl: string, name: string, template?: string): Promise<void> => {
  if (closed) throw new Error("the benchmark is stopping: no new PostgreSQL database")
  created.set(name, adminUrl)
  await withClient(adminUrl, (c) =>
    c.query(`CREATE DATABASE ${ident(name)}${template === undefined ? "" : ` TEMPLATE ${ident(template)}`}`)
  )
}

/** DROP DATABASE IF EXISTS `name` WITH (FORCE): its sessions are ended first. */
export const dropDatabase = async (adminUrl: string, name: string): Promise<void> => {
  await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${ident(name)} WITH (FORCE)`))
  created.delete(name)
}

/**
 * Drop every database this process created and has not dropped (at the end of a run, on
 * failure, on SIGINT), at most `ms`; returns the names it could not drop. `final`: none is
 * created afterwards (the process is exiting).
 */
export const dropAll = async (ms = 20_000, final = false): Promise<Array<string>> => {
  if (final) closed = true
  const left: Array<string> = []
  const work = (async () => {
    for (const [name, url] of [...created]) {
      try {
        await dropDatabase(url, name)
      } catch {
        left.push(name)
      }
    }
  })()
  let timer: NodeJS.Timeout | undefined
  const timedOut = await Promise.race([
    work.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), ms)
    })
  ])
  clearTimeout(timer)
  return timedOut ? [...created.keys()] : left
}

/** What the report says about the server: version and its durability settings. */
export const describeServer = (adminUrl: string): Promise<string> =>
  withClient(adminUrl, async (c) => {
    const r = await c.query<{ version: string; fsync: string; sc: string; max: string }>(
      `SELECT current_setting('server_version') AS version, current_setting('fsync') AS fsync,
        current_setting('synchronous_commit') AS sc, current_setting('max_connections') AS max`
    )
    const row = r.rows[0]
    return row === undefined
      ? "PostgreSQL (settings unknown)"
      : `PostgreSQL ${row.version} (fsync=${row.fsync}, synchronous_commit=${row.sc}, max_connections=${row.max})`
  })

/** The pids of the client backends connected to database `name`. */
export const backendPids = (adminUrl: string, name: string): Promise<Array<number>> =>
  withClient(adminUrl, async (c) => {
    const r = await c.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
      [name]
    )
    return r.rows.map((row) => row.pid)
  })
