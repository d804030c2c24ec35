/**
 * Every error of the driver and of the server mapped to the core's StorageError, with a message
 * that names the cause (SQLSTATE or socket error) and never a value sent, and the classes of
 * errors the adapter acts on: a lost connection, a conflict to run again, a value no row can hold.
 */
import { StorageError } from "@latchkey/core"
import { Effect, ParseResult } from "effect"

/** SQLSTATE of a server error, or the Node.js error code of a socket error. */
const codeOf = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : undefined

const messageOf = (cause: unknown): string =>
  cause instanceof Error ? cause.message : typeof cause === "string" ? cause : ""

/**
 * A failure of the connection rather than of a statement: no SQLSTATE from the server (a socket
 * error, a timeout, a closed client), or the server ending the session. What it was doing is in doubt.
 */
export const lostConnection = (error: unknown): boolean => {
  if (!(error instanceof StorageError.StorageError) || error.cause === undefined) return false
  if (ParseResult.isParseError(error.cause) || error.cause instanceof SyntaxError) return false
  const code = codeOf(error.cause)
  return code === undefined || !/^[0-9A-Z]{5}$/.test(code) || code.startsWith("08") || code.startsWith("57P")
}

/**
 * A parameter no row can hold: a NUL or an invalid byte sequence (22021), or a character the
 * database's encoding lacks (22P05). A lookup by such a value finds nothing.
 */
export const isUnstorableValue = (cause: unknown): boolean => {
  const code = codeOf(cause)
  return code === "22021" || code === "22P05"
}

// What node-postgres throws when the connection asks for TLS and the server answers that it has none
const noTlsText = /server does not support SSL/i

/** The server offers no TLS (SSL) but the connection asked for it (`sslmode`, `ssl`). */
export const isTlsRefused = (cause: unknown): boolean =>
  codeOf(cause) === undefined && noTlsText.test(messageOf(cause))

/** Serialization failure or deadlock: the transaction did nothing and may simply run again. */
export const isConflict = (cause: unknown): boolean => {
  const code = codeOf(cause)
  return code === "40001" || code === "40P01"
}

const sqlstates: Record<string, string> = {
  "40001": "the transaction conflicted with concurrent ones (serialization failure)",
  "40P01": "the transaction was chosen as a deadlock victim",
  "23505": "a database constraint was violated (duplicate key)",
  "23502": "a database constraint was violated (missing value)",
  "23514": "a database constraint was violated (check)",
  "22021": "a value could not be stored (invalid character, such as NUL)",
  "22003": "a number is out of the range the database stores",
  "22P02": "a value has the wrong form for its column",
  "28000": "the database refused the connection for this user (pg_hba.conf or the role)",
  "28P01": "the database refused the user name or password",
  "3D000": "the database does not exist",
  "25006": "the database is read-only (a standby or a read-only transaction)",
  "25P03": "the transaction stayed idle too long and the server ended it",
  "42P01": "a table is missing: the schema is not migrated",
  "53100": "the disk holding the database is full",
  "53200": "the database server is out of memory",
  "53300": "the database server has too many connections",
  "55P03": "a database lock could not be obtained in time",
  "57014": "a database statement timed out (statement_timeout)",
  "57P01": "the database server ended the connection (shutdown or administrator command)",
  "57P02": "the database server is shutting down",
  "57P03": "the database server is not accepting connections yet",
  "57P05": "the database server ended an idle session",
  P0001: "the database refused the change"
}

const socketErrors = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN"
])

/**
 * Map anything the driver (or our own checks) throws to a StorageError. The message is one of a
 * fixed set and never the server's text, which may quote a row's values; the original error is
 * kept as the cause.
 */
export const toStorageError = (cause: unknown): StorageError.StorageError => {
  if (cause instanceof StorageError.StorageError) return cause
  if (ParseResult.isParseError(cause) || cause instanceof SyntaxError) {
    return new StorageError.StorageError({ message: "a stored row could not be decoded", cause })
  }
  const code = codeOf(cause)
  const text = messageOf(cause)
  const message =
    (code !== undefined ? sqlstates[code] : undefined) ??
    (code?.startsWith("08") ? "the connection to the database failed" : undefined) ??
    (code !== undefined && socketErrors.has(code) ? `the database cannot be reached (${code})` : undefined) ??
    (isTlsRefused(cause)
      ? "the database server does not offer TLS (SSL), but the connection asks for it (sslmode)"
      : undefined) ??
    (/timeout exceeded when trying to connect/i.test(text)
      ? "no database connection could be made in time (connection timeout)"
      : undefined) ??
    (/query read timeout/i.test(text) ? "the database did not answer in time (query timeout)" : undefined) ??
    (/connection terminated|terminating connection|connection ended|not queryable|client was closed/i.test(
      text
    )
      ? "the connection to the database was lost"
      : undefined) ??
    (/cannot use a pool after calling end/i.test(text) ? "the database pool is closed" : undefined) ??
    (code !== undefined && /^[0-9A-Z]{5}$/.test(code) ? `postgres error ${code}` : "postgres storage failed")
  return new StorageError.StorageError({ message, cause })
}

/** Run a promise of driver work as an Effect whose only error is StorageError. */
export const attempt = <A>(f: () => PromiseLike<A>): Effect.Effect<A, StorageError.StorageError> =>
  Effect.tryPromise({ try: f, catch: toStorageError })

/** Run synchronous work (decoding a row, checking an option) with StorageError as its only error. */
export const attemptSync = <A>(f: () => A): Effect.Effect<A, StorageError.StorageError> =>
  Effect.try({ try: f, catch: toStorageError })
