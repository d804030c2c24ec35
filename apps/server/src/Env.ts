/**
 * The server's configuration, read from environment variables through the one table of them,
 * `settings/Settings.ts` (rendered as the table of apps/server/README.md).
 */
import { isIP } from "node:net"
import { isAbsolute, resolve } from "node:path"
import type { Throttle } from "@latchkey/core"
import { EnvError } from "./settings/Parsers.js"
import { defaultHost, inMemory, reader, settings } from "./settings/Settings.js"

export { EnvError } from "./settings/Parsers.js"
export { logLevels } from "./settings/Settings.js"

/**
 * The directory relative paths are resolved from: where `pnpm` was invoked
 * (`INIT_CWD`), so `pnpm start` and `pnpm cli` at the repository root agree on
 * `./data/latchkey.sqlite`.
 */
export const baseDirectory = (env: NodeJS.ProcessEnv): string => env.INIT_CWD ?? process.cwd()

/** The store `env` selects, for logs: the SQLite path, or the PostgreSQL URI without its credentials. */
export const describeStore = (env: ServerEnv): string => {
  if (env.databaseUrl === null) return env.dbPath
  const url = new URL(env.databaseUrl)
  url.username = ""
  url.password = ""
  url.search = ""
  return url.toString()
}

/** Everything the server and the CLI read from the environment (each variable: settings/Settings.ts). */
export type ServerEnv = Readonly<ReturnType<typeof read>>
/** The admin listener (`LATCHKEY_ADMIN_*`): the admin API and `/metrics`, never on the public port. */
/** Trace export over OTLP/HTTP with JSON bodies (`OTEL_*`). */
export type OtelEnv = NonNullable<ServerEnv["otel"]>

type Get = ReturnType<typeof reader>

/** The admin listener, on when `LATCHKEY_ADMIN_PORT` is set; only then are its token and host read. */
const adminOf = (get: Get) => {
  const port = get("LATCHKEY_ADMIN_PORT")
  if (port === undefined) return null
  const token = get("LATCHKEY_ADMIN_TOKEN")
  return { port, host: get("LATCHKEY_ADMIN_HOST"), token, console: get("LATCHKEY_CONSOLE") === "on" }
}

const throttleOf = (get: Get): Throttle.Policy => ({
  freeFailures: get("LATCHKEY_THROTTLE_FREE_FAILURES"),
  addressFreeFailures: get("LATCHKEY_THROTTLE_ADDRESS_FREE_FAILURES"),
  slowFreeFailures: get("LATCHKEY_THROTTLE_SLOW_FREE_FAILURES"),
  baseLockout: get("LATCHKEY_THROTTLE_BASE_LOCKOUT"),
  maxLockout: get("LATCHKEY_THROTTLE_MAX_LOCKOUT"),
  maxDelay: get("LATCHKEY_THROTTLE_MAX_DELAY"),
  window: get("LATCHKEY_THROTTLE_WINDOW")
})

/**
 * The trace export: on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is
 * set and `OTEL_SDK_DISABLED` is not `true`. Spans go as OTLP/HTTP JSON, the only protocol offered.
 */
const otelOf = (get: Get) => {
  get("OTEL_EXPORTER_OTLP_PROTOCOL")
  get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
  const base = get("OTEL_EXPORTER_OTLP_ENDPOINT")
  const traces = get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
  const serviceName = get("OTEL_SERVICE_NAME")
  if (get("OTEL_SDK_DISABLED") === "true" || (base === undefined && traces === undefined)) return null
  const tracesUrl =
    traces === undefined
      ? `${new URL(base as string).toString().replace(/\/+$/, "")}/v1/traces`
      : new URL(traces).toString()
  return { tracesUrl, serviceName }
}

/** Read and check the environment; throws EnvError naming the first variable refused. */
export const read = (env: NodeJS.ProcessEnv = process.env) => {
  const get = reader(env)
  const databaseUrl = get("DATABASE_URL")
  const port = get("PORT")
  const issuer = get("LATCHKEY_ISSUER")
  const db = get("LATCHKEY_DB")
  const secret = get("LATCHKEY_SECRET")
  const scopeDescriptions = get("LATCHKEY_SCOPE_DESCRIPTIONS")
  const productName = get("LATCHKEY_PRODUCT_NAME")
  const admin = adminOf(get)
  if (admin !== null && admin.port !== 0 && admin.port === port) {
    throw new EnvError(
      `LATCHKEY_ADMIN_PORT must not be PORT, the public port (both are ${port}): the admin API and the metrics never share it; set LATCHKEY_ADMIN_PORT to another port`
    )
  }
  const throttle = throttleOf(get)
  const headersTimeoutMs = get("LATCHKEY_HEADERS_TIMEOUT_MS")
  const requestTimeoutMs = get("LATCHKEY_REQUEST_TIMEOUT_MS")
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new EnvError(
      `LATCHKEY_HEADERS_TIMEOUT_MS must not exceed LATCHKEY_REQUEST_TIMEOUT_MS (got ${headersTimeoutMs} and ${requestTimeoutMs})`
    )
  }
  const workers = get("LATCHKEY_WORKERS")
  if (workers > 1 && databaseUrl === null && db === inMemory) {
    throw new EnvError(
      `LATCHKEY_WORKERS above 1 needs a database the workers share (LATCHKEY_DB is ${inMemory})`
    )
  }
  return {
    workers,
    auditRetentionDays: get("LATCHKEY_AUDIT_RETENTION_DAYS"),
    throttle,
    headersTimeoutMs,
    requestTimeoutMs,
    port,
    host: get("HOST"),
    issuer,
    dbPath: db === inMemory || isAbsolute(db) ? db : resolve(baseDirectory(env), db),
    databaseUrl,
    pgPoolMax: get("LATCHKEY_PG_POOL_MAX"),
    pgPreparedStatements: get("LATCHKEY_PG_PREPARED_STATEMENTS") === "on",
    passkeys: get("LATCHKEY_PASSKEYS") === "on",
    registration: get("LATCHKEY_REGISTRATION") === "on",
    secret,
    scopeDescriptions,
    productName,
    admin,
    codeTtl: get("LATCHKEY_CODE_TTL"),
    accessTokenTtl: get("LATCHKEY_ACCESS_TOKEN_TTL"),
    refreshTokenTtl: get("LATCHKEY_REFRESH_TOKEN_TTL"),
    refreshReuseGrace: get("LATCHKEY_REFRESH_REUSE_GRACE"),
    idTokenTtl: get("LATCHKEY_ID_TOKEN_TTL"),
    jwtAccessTokenTtl: get("LATCHKEY_JWT_ACCESS_TOKEN_TTL"),
    signingAlgorithm: get("LATCHKEY_SIGNING_ALGORITHM"),
    mfa: get("LATCHKEY_MFA"),
    appReview: get("LATCHKEY_APP_REVIEW") === "on",
    sessionTtl: get("LATCHKEY_SESSION_TTL"),
    sessionMaxAge: get("LATCHKEY_SESSION_MAX_AGE"),
    trustProxy: get("LATCHKEY_TRUST_PROXY"),
    logLevel: get("LOG_LEVEL"),
    otel: otelOf(get)
  }
}

/** Every variable the server and the CLI read: the names of `settings`. */
const settingNames: ReadonlyArray<string> = Object.keys(settings)

/** Every `LATCHKEY_*` variable the server and the CLI read: the `LATCHKEY_*` names of `settings`. */
export const knownVariables: ReadonlyArray<string> = settingNames.filter((name) =>
  name.startsWith("LATCHKEY_")
)

/** `LATCHKEY_*` variables of the repository's own tools (the benchmark, the runtime tests): no warning. */
const toolVariables = new Set(["LATCHKEY_CMD", "LATCHKEY_CLI_CMD", "LATCHKEY_CWD", "LATCHKEY_RUNTIME"])

/** Edit distance between two strings: insertions, deletions, substitutions and swaps of neighbours count 1. */
const editDistance = (a: string, b: string): number => {
  const rows: Array<Array<number>> = [Array.from({ length: b.length + 1 }, (_, j) => j)]
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    const up = rows[i - 1] as Array<number>
    for (let j = 1; j <= b.length; j++) {
      const same = a[i - 1] === b[j - 1]
      let d = Math.min(
        (up[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (up[j - 1] as number) + (same ? 0 : 1)
      )
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, (rows[i - 2]?.[j - 2] as number) + 1)
      row[j] = d
    }
    rows.push(row)
  }
  return rows[a.length]?.[b.length] as number
}

/** The variable of `candidates` (by default the `LATCHKEY_*` ones) nearest to `name` by edit distance (the first of the nearest). */
export const nearestVariable = (name: string, candidates: ReadonlyArray<string> = knownVariables): string => {
  let best = candidates[0] as string
  let distance = Number.POSITIVE_INFINITY
  for (const known of candidates) {
    const d = editDistance(name, known)
    if (d < distance) {
      best = known
      distance = d
    }
  }
  return best
}

/**
 * The setting a variable outside `LATCHKEY_*` most likely misspells, or undefined: one whose name,
 * in capitals, is at most one edit away (two for names of 8 characters or more). The environment
 * holds many other programs' variables, so only names that close count: `HOME` is no `HOST`.
 */
const misspelt = (name: string): string | undefined => {
  const upper = name.toUpperCase()
  const nearest = nearestVariable(upper, settingNames)
  return editDistance(upper, nearest) <= (nearest.length >= 8 ? 2 : 1) ? nearest : undefined
}

/** The setting an unknown variable `name` was meant to be, or undefined when it is none of Latchkey's business. */
const meantFor = (name: string): string | undefined =>
  name.startsWith("LATCHKEY_") ? nearestVariable(name) : misspelt(name)

const loopback = (host: string): boolean =>
  host === "localhost" || host === "::1" || (isIP(host) === 4 && host.startsWith("127."))

/**
 * Warnings about an environment that `read` accepts: each `LATCHKEY_*` variable nobody reads (a
 * typo, most likely), with the nearest known name; each other variable a near miss of a setting
 * (`DATABSE_URL`, `LOG_LEVLE`), with the setting, never with the value; and admin settings that have no effect or
 * expose the admin listener. One line each, without the `latchkey:` prefix; the server logs them
 * once at start and the CLI writes them on stderr.
 */
export const warnings = (env: NodeJS.ProcessEnv = process.env): ReadonlyArray<string> => {
  const known = new Set(settingNames)
  const found: Array<string> = []
  for (const name of Object.keys(env).sort()) {
    if (known.has(name) || toolVariables.has(name)) continue
    const meant = meantFor(name)
    if (meant !== undefined)
      found.push(`${name} is not a Latchkey setting and is ignored; did you mean ${meant}?`)
  }
  const adminPort = (env.LATCHKEY_ADMIN_PORT ?? "").trim()
  if (adminPort === "") {
    for (const name of ["LATCHKEY_ADMIN_TOKEN", "LATCHKEY_ADMIN_HOST", "LATCHKEY_CONSOLE"]) {
      if ((env[name] ?? "") !== "")
        found.push(`${name} is set but LATCHKEY_ADMIN_PORT is not: the admin listener is off`)
    }
  } else {
    const host = (env.LATCHKEY_ADMIN_HOST ?? "").trim() || defaultHost
    if (!loopback(host)) {
      found.push(
        `LATCHKEY_ADMIN_HOST ${host} is not a loopback address: the admin listener speaks plain HTTP, so the admin token crosses the network in clear text unless a TLS proxy or a private network protects it`
      )
    }
  }
  return found
}
