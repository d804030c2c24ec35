/**
 * Why the server (or the CLI) could not start, in the one-line form of the settings errors, for
 * causes the configuration can fix: a port in use (`Listen.ListenError`), a PostgreSQL database
 * that does not exist or refuses (or offers no TLS when asked for it), a SQLite file that cannot be created or opened. The line names
 * the variable to change and never holds a password.
 */
import { StorageError } from "@latchkey/core"
import { PostgresStorage } from "@latchkey/storage-postgres"
import { Cause, Runtime } from "effect"
import { describeStore, type ServerEnv } from "./Env.js"
import { ListenError } from "./Listen.js"

/** The error inside `e`: the failure of an Effect run by a promise (a FiberFailure), or `e` itself. */
const unwrap = (e: unknown): unknown =>
  Runtime.isFiberFailure(e) ? Cause.squash(e[Runtime.FiberFailureCauseId]) : e

/** The SQLSTATE (or socket error code) a StorageError of the PostgreSQL adapter was caused by. */
const codeOf = (e: StorageError.StorageError): string | undefined => {
  const cause = e.cause
  return typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : undefined
}

const sslModes = new Set(["prefer", "require", "verify-ca", "verify-full", "no-verify"])

/** What in `url` asks for TLS, as the line may show it: `sslmode=<mode>`, `ssl=<value>`, or `PGSSLMODE`. */
const tlsAsked = (url: string): string => {
  const params = new URL(url).searchParams
  const mode = params.get("sslmode")
  if (mode !== null) return sslModes.has(mode) ? `sslmode=${mode}` : "sslmode"
  return params.has("ssl") ? "ssl" : "PGSSLMODE"
}

/**
 * The line for a StorageError of PostgreSQL at start: the database missing by name, a server
 * without TLS asked for it, else the reason.
 */
const postgres = (env: ServerEnv, e: StorageError.StorageError): string => {
  const store = new URL(describeStore(env))
  const name = decodeURIComponent(store.pathname.slice(1))
  if (codeOf(e) === "3D000" && name !== "") {
    return `DATABASE_URL names the database "${name}", which does not exist on ${store.host}: create it (createdb ${name}) or correct DATABASE_URL`
  }
  if (PostgresStorage.isTlsRefused(e)) {
    return `DATABASE_URL: the PostgreSQL server at ${store.host} does not offer TLS (SSL) but the URL asks for it (${tlsAsked(env.databaseUrl ?? "")}); connect without TLS (sslmode=disable) only on a trusted network, or enable TLS on the server`
  }
  return `DATABASE_URL (${store.toString()}): ${e.message}`
}

/** The line for a StorageError of SQLite at start: the path, the setting and the reason. */
const sqlite = (env: ServerEnv, e: StorageError.StorageError): string =>
  e.message.includes(env.dbPath) ? `LATCHKEY_DB: ${e.message}` : `LATCHKEY_DB=${env.dbPath}: ${e.message}`

/**
 * The one line (without the `latchkey: ` prefix) saying why starting with `env` failed with `e`,
 * or undefined for a failure the configuration cannot fix.
 */
export const explain = (env: ServerEnv, e: unknown): string | undefined => {
  const error = unwrap(e)
  if (error instanceof ListenError) return error.message
  if (!(error instanceof StorageError.StorageError)) return undefined
  return env.databaseUrl === null ? sqlite(env, error) : postgres(env, error)
}

/** Why `e` failed, for the log: its message (the error inside a FiberFailure), or its text. */
export const reason = (e: unknown): string => {
  const error = unwrap(e)
  return error instanceof Error ? error.message : String(error)
}
