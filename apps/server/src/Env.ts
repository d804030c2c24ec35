/**
 * The server's configuration, read from environment variables (the table in apps/server/README.md).
 */
import { isIP } from "node:net"
import { isAbsolute, resolve } from "node:path"
import { Config, Throttle } from "@latchkey/core"
import { Either } from "effect"
import proxyaddr from "proxy-addr"

/** Everything the server and the CLI read from the environment. */
export interface ServerEnv {
  readonly port: number
  readonly host: string
  /** The issuer; null means `http://localhost:<the port listened on>`. */
  readonly issuer: string | null
  /** Absolute path of the SQLite file (used when `databaseUrl` is null). */
  readonly dbPath: string
  /** PostgreSQL connection URI (`DATABASE_URL`); null: SQLite at `dbPath`. */
  readonly databaseUrl: string | null
  /** Most connections to PostgreSQL per server process (`LATCHKEY_PG_POOL_MAX`, default 10). */
  readonly pgPoolMax: number
  /** The server key, when set explicitly. */
  readonly secret: string | null
  /** What each scope allows, for the consent pages: one text, or texts by language tag. */
  readonly scopeDescriptions: Readonly<Record<string, string | Readonly<Record<string, string>>>>
  /** The product name the pages show (`LATCHKEY_PRODUCT_NAME`, default "Latchkey"). */
  readonly productName: string
  /** The admin listener (`LATCHKEY_ADMIN_PORT`), or null when it is off. */
  readonly admin: AdminEnv | null
  readonly codeTtl: number | undefined
  readonly accessTokenTtl: number | undefined
  readonly refreshTokenTtl: number | undefined
  readonly refreshReuseGrace: number | undefined
  /** Idle lifetime of a sign-in session of the pages, seconds. */
  readonly sessionTtl: number | undefined
  /** Absolute lifetime of a signed-in session of the pages from the sign-in, seconds. */
  readonly sessionMaxAge: number | undefined
  /** Express "trust proxy" setting, or false. */
  readonly trustProxy: string | false
  readonly logLevel: LogLevel
  /** Export of the request spans over OTLP/HTTP (`OTEL_EXPORTER_OTLP_ENDPOINT`), or null when it is off. */
  readonly otel: OtelEnv | null
  /** Throttling of failed sign-ins and client authentications. */
  readonly throttle: Throttle.Policy
  /** Longest time a client may take to send the request headers (docs/security.md, catalogue T9). */
  readonly headersTimeoutMs: number
  /** Longest time a client may take to send the whole request (docs/security.md, catalogue T9). */
  readonly requestTimeoutMs: number
  /**
   * Days audit events stay append-only (the database refuses to delete them); the sweep purges
   * older ones. 1 to 3650, default 90.
   */
  readonly auditRetentionDays: number
  /** Worker processes serving the port (`node:cluster`); 1 runs the server in this process, as before. */
  readonly workers: number
}

/** The admin listener: the admin API and `/metrics`, never on the public port. */
export interface AdminEnv {
  readonly port: number
  /** `LATCHKEY_ADMIN_HOST`, default 127.0.0.1. */
  readonly host: string
  /** The bearer token every admin request must carry (`LATCHKEY_ADMIN_TOKEN`, at least 32 characters). */
  readonly token: string
}

/** Trace export over OTLP/HTTP with JSON bodies. */
export interface OtelEnv {
  /** Where spans are POSTed: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. */
  readonly tracesUrl: string
  /** `OTEL_SERVICE_NAME`, default "latchkey". */
  readonly serviceName: string
}

/** The pino levels `LOG_LEVEL` takes. */
export const logLevels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const
/** One of `logLevels`. */
export type LogLevel = (typeof logLevels)[number]

/** Shortest admin token accepted. */
export const minAdminTokenLength = 32

/** A configuration problem, reported to the operator before anything starts. */
export class EnvError extends Error {}

const integer = (env: NodeJS.ProcessEnv, name: string, min: number, max: number): number | undefined => {
  const raw = env[name]
  if (raw === undefined || raw === "") return undefined
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new EnvError(
      `${name} must be a whole number between ${min} and ${max} (got ${JSON.stringify(raw)})`
    )
  }
  return n
}

/**
 * The directory relative paths are resolved from: where `pnpm` was invoked
 * (`INIT_CWD`), so `pnpm start` and `pnpm cli` at the repository root agree on
 * `./data/latchkey.sqlite`.
 */
export const baseDirectory = (env: NodeJS.ProcessEnv): string => env.INIT_CWD ?? process.cwd()

/**
 * `DATABASE_URL`, when set: a `postgres://` or `postgresql://` URI. The error never repeats the
 * value, which may hold a password.
 */
const postgresUrl = (env: NodeJS.ProcessEnv): string | null => {
  const raw = (env.DATABASE_URL ?? "").trim()
  if (raw === "") return null
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new EnvError(
      "DATABASE_URL must be a PostgreSQL URI, e.g. postgres://user:password@host:5432/latchkey"
    )
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new EnvError(
      `DATABASE_URL must start with postgres:// or postgresql:// (got ${url.protocol}//…); unset it to use SQLite`
    )
  }
  return raw
}

/** The store `env` selects, for logs: the SQLite path, or the PostgreSQL URI without its credentials. */
export const describeStore = (env: ServerEnv): string => {
  if (env.databaseUrl === null) return env.dbPath
  const url = new URL(env.databaseUrl)
  url.username = ""
  url.password = ""
  url.search = ""
  return url.toString()
}

/** A value for an error message: quoted, and cut to 60 characters. */
const shown = (raw: string): string => JSON.stringify(raw.length > 60 ? `${raw.slice(0, 60)}…` : raw)

const hostName =
  /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/

/** An address to listen on (`HOST`, `LATCHKEY_ADMIN_HOST`): an IP address or a host name; default 127.0.0.1. */
const listenAddress = (env: NodeJS.ProcessEnv, name: "HOST" | "LATCHKEY_ADMIN_HOST"): string => {
  const raw = env[name] ?? ""
  const value = raw.trim()
  if (value === "") return "127.0.0.1"
  // A dotted number that is no IPv4 address (1.2.3.999) is no host name either
  if (isIP(value) !== 0 || (hostName.test(value) && !/^[\d.]+$/.test(value))) return value
  throw new EnvError(
    `${name} must be an IP address or a host name to listen on, e.g. 127.0.0.1, 0.0.0.0, ::1 or localhost (got ${shown(raw)})`
  )
}

const proxyNames = new Set(["loopback", "linklocal", "uniquelocal"])

/**
 * `LATCHKEY_TRUST_PROXY`: what proxy-addr compiles (Express's "trust proxy" string), each item an IP
 * address, a subnet (`10.0.0.0/8`, `10.0.0.0/255.0.0.0`, `fd00::/8`) or one of loopback, linklocal,
 * uniquelocal. A bare number (Express's hop count) is refused: proxy-addr would read it as an IPv4
 * address (`1` is 0.0.0.1).
 */
const trustProxy = (env: NodeJS.ProcessEnv): string | false => {
  const raw = env.LATCHKEY_TRUST_PROXY ?? ""
  const value = raw.trim()
  if (value === "") return false
  const refuse = (why: string) =>
    new EnvError(
      `LATCHKEY_TRUST_PROXY must be a comma-separated list of the proxies' IP addresses or subnets (10.0.0.1, 10.0.0.0/8, fd00::/8) or loopback, linklocal, uniquelocal (got ${shown(raw)}: ${why})`
    )
  const items = value.split(/ *, */)
  for (const item of items) {
    if (proxyNames.has(item)) continue
    const [ip = "", bits, ...more] = item.split("/")
    if (isIP(ip) === 0 || more.length > 0)
      throw refuse(`${JSON.stringify(item)} is not an IP address or subnet`)
    if (bits !== undefined && !/^\d{1,3}$/.test(bits) && isIP(bits) === 0) {
      throw refuse(`${JSON.stringify(item)} has an invalid prefix length or netmask`)
    }
  }
  try {
    proxyaddr.compile(items)
  } catch (e) {
    throw refuse(e instanceof Error ? e.message : String(e))
  }
  return value
}

/** `LOG_LEVEL`, default info; case does not matter. */
const logLevel = (env: NodeJS.ProcessEnv): LogLevel => {
  const raw = env.LOG_LEVEL ?? ""
  const value = raw.trim().toLowerCase()
  if (value === "") return "info"
  const level = logLevels.find((l) => l === value)
  if (level === undefined) {
    throw new EnvError(`LOG_LEVEL must be one of ${logLevels.join(", ")} (got ${shown(raw)})`)
  }
  return level
}

/** An http(s) URL in `name`, or undefined when unset. */
const httpUrl = (env: NodeJS.ProcessEnv, name: string): URL | undefined => {
  const raw = env[name] ?? ""
  if (raw.trim() === "") return undefined
  let url: URL | undefined
  try {
    url = new URL(raw.trim())
  } catch {
    url = undefined
  }
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new EnvError(
      `${name} must be an http:// or https:// URL of an OTLP/HTTP receiver, e.g. http://127.0.0.1:4318 (got ${shown(raw)})`
    )
  }
  return url
}

/**
 * The trace export: on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is
 * set and `OTEL_SDK_DISABLED` is not `true`. Spans go as OTLP/HTTP JSON, the only protocol offered.
 */
const otel = (env: NodeJS.ProcessEnv): OtelEnv | null => {
  for (const name of ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"]) {
    const raw = env[name] ?? ""
    if (raw.trim() !== "" && raw.trim() !== "http/json") {
      throw new EnvError(
        `${name} must be http/json, the protocol Latchkey exports traces with (got ${shown(raw)})`
      )
    }
  }
  const base = httpUrl(env, "OTEL_EXPORTER_OTLP_ENDPOINT")
  const traces = httpUrl(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
  const rawName = env.OTEL_SERVICE_NAME ?? ""
  const serviceName = rawName.trim() || "latchkey"
  if (serviceName.length > 255 || [...serviceName].some((c) => c.charCodeAt(0) < 0x20)) {
    throw new EnvError(
      `OTEL_SERVICE_NAME must be at most 255 characters without control characters (got ${shown(rawName)})`
    )
  }
  const disabled = (env.OTEL_SDK_DISABLED ?? "").trim().toLowerCase()
  if (disabled !== "" && disabled !== "true" && disabled !== "false") {
    throw new EnvError(`OTEL_SDK_DISABLED must be true or false (got ${shown(env.OTEL_SDK_DISABLED ?? "")})`)
  }
  if (disabled === "true" || (base === undefined && traces === undefined)) return null
  const tracesUrl = traces?.toString() ?? `${(base as URL).toString().replace(/\/+$/, "")}/v1/traces`
  return { tracesUrl, serviceName }
}

/** Read and check the environment. */
export const read = (env: NodeJS.ProcessEnv = process.env): ServerEnv => {
  const databaseUrl = postgresUrl(env)
  const port = integer(env, "PORT", 0, 65535) ?? 8080
  const issuer = (env.LATCHKEY_ISSUER ?? "").trim() || null
  if (issuer !== null) {
    const checked = Config.validateIssuer(issuer)
    if (Either.isLeft(checked)) {
      const message = checked.left.message
      throw new EnvError(
        `LATCHKEY_ISSUER ${message}${message.includes("(got") ? "" : ` (got ${JSON.stringify(issuer)})`}`
      )
    }
  }
  const db = (env.LATCHKEY_DB ?? "").trim() || "./data/latchkey.sqlite"
  const secret = env.LATCHKEY_SECRET ?? ""
  if (secret !== "" && secret.length < Config.minServerKeyLength)
    throw new EnvError(
      `LATCHKEY_SECRET must be at least ${Config.minServerKeyLength} characters (got ${secret.length}; a secret is never shown)`
    )
  let scopeDescriptions: ServerEnv["scopeDescriptions"] = {}
  if (env.LATCHKEY_SCOPE_DESCRIPTIONS !== undefined && env.LATCHKEY_SCOPE_DESCRIPTIONS !== "") {
    const isObject = (v: unknown): v is Record<string, unknown> =>
      typeof v === "object" && v !== null && !Array.isArray(v)
    try {
      const parsed: unknown = JSON.parse(env.LATCHKEY_SCOPE_DESCRIPTIONS)
      if (!isObject(parsed)) throw new Error()
      for (const v of Object.values(parsed)) {
        if (typeof v === "string") continue
        if (!isObject(v) || Object.values(v).some((t) => typeof t !== "string")) throw new Error()
      }
      scopeDescriptions = parsed as ServerEnv["scopeDescriptions"]
    } catch {
      throw new EnvError(
        `LATCHKEY_SCOPE_DESCRIPTIONS must be a JSON object of texts, or of texts by language, e.g. {"profile":"Read your profile"} or {"profile":{"en":"Read your profile","zh-CN":"读取你的资料"}} (got ${shown(env.LATCHKEY_SCOPE_DESCRIPTIONS)})`
      )
    }
  }
  const productName = (env.LATCHKEY_PRODUCT_NAME ?? "").trim() || "Latchkey"
  if (productName.length > 64) {
    throw new EnvError(
      `LATCHKEY_PRODUCT_NAME must be at most 64 characters (got ${productName.length}: ${shown(productName)})`
    )
  }
  const adminPort = integer(env, "LATCHKEY_ADMIN_PORT", 0, 65535)
  const adminToken = env.LATCHKEY_ADMIN_TOKEN ?? ""
  let admin: AdminEnv | null = null
  if (adminPort !== undefined) {
    if (adminToken.length < minAdminTokenLength) {
      throw new EnvError(
        `LATCHKEY_ADMIN_TOKEN must be set to at least ${minAdminTokenLength} characters when LATCHKEY_ADMIN_PORT is set, e.g. openssl rand -base64 32 (got ${adminToken.length}; a secret is never shown)`
      )
    }
    admin = { port: adminPort, host: listenAddress(env, "LATCHKEY_ADMIN_HOST"), token: adminToken }
  }
  const d = Throttle.defaultPolicy
  const throttle: Throttle.Policy = {
    freeFailures: integer(env, "LATCHKEY_THROTTLE_FREE_FAILURES", 1, 1_000_000) ?? d.freeFailures,
    addressFreeFailures:
      integer(env, "LATCHKEY_THROTTLE_ADDRESS_FREE_FAILURES", 1, 1_000_000) ?? d.addressFreeFailures,
    slowFreeFailures:
      integer(env, "LATCHKEY_THROTTLE_SLOW_FREE_FAILURES", 1, 1_000_000) ?? d.slowFreeFailures,
    baseLockout: integer(env, "LATCHKEY_THROTTLE_BASE_LOCKOUT", 1, 86_400) ?? d.baseLockout,
    maxLockout: integer(env, "LATCHKEY_THROTTLE_MAX_LOCKOUT", 1, 86_400) ?? d.maxLockout,
    maxDelay: integer(env, "LATCHKEY_THROTTLE_MAX_DELAY", 1, 60) ?? d.maxDelay,
    window: integer(env, "LATCHKEY_THROTTLE_WINDOW", 1, 7 * 86_400) ?? d.window
  }
  const headersTimeoutMs = integer(env, "LATCHKEY_HEADERS_TIMEOUT_MS", 100, 600_000) ?? 10_000
  const requestTimeoutMs = integer(env, "LATCHKEY_REQUEST_TIMEOUT_MS", 100, 3_600_000) ?? 30_000
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new EnvError(
      `LATCHKEY_HEADERS_TIMEOUT_MS must not exceed LATCHKEY_REQUEST_TIMEOUT_MS (got ${headersTimeoutMs} and ${requestTimeoutMs})`
    )
  }
  const workers = integer(env, "LATCHKEY_WORKERS", 1, 64) ?? 1
  if (workers > 1 && databaseUrl === null && db === ":memory:") {
    throw new EnvError(
      "LATCHKEY_WORKERS above 1 needs a database the workers share (LATCHKEY_DB is :memory:)"
    )
  }
  return {
    workers,
    auditRetentionDays: integer(env, "LATCHKEY_AUDIT_RETENTION_DAYS", 1, 3650) ?? 90,
    throttle,
    headersTimeoutMs,
    requestTimeoutMs,
    port,
    host: listenAddress(env, "HOST"),
    issuer,
    dbPath: db === ":memory:" ? db : isAbsolute(db) ? db : resolve(baseDirectory(env), db),
    databaseUrl,
    pgPoolMax: integer(env, "LATCHKEY_PG_POOL_MAX", 1, 1000) ?? 10,
    secret: secret === "" ? null : secret,
    scopeDescriptions,
    productName,
    admin,
    codeTtl: integer(env, "LATCHKEY_CODE_TTL", 1, 600),
    accessTokenTtl: integer(env, "LATCHKEY_ACCESS_TOKEN_TTL", 1, 86400),
    refreshTokenTtl: integer(env, "LATCHKEY_REFRESH_TOKEN_TTL", 1, 365 * 86400),
    refreshReuseGrace: integer(env, "LATCHKEY_REFRESH_REUSE_GRACE", 0, 60),
    sessionTtl: integer(env, "LATCHKEY_SESSION_TTL", 60, 7 * 86400),
    sessionMaxAge: integer(env, "LATCHKEY_SESSION_MAX_AGE", 300, 30 * 86400),
    trustProxy: trustProxy(env),
    logLevel: logLevel(env),
    otel: otel(env)
  }
}

/** Every `LATCHKEY_*` variable the server and the CLI read (the table in apps/server/README.md). */
export const knownVariables: ReadonlyArray<string> = [
  "LATCHKEY_ISSUER",
  "LATCHKEY_DB",
  "LATCHKEY_PG_POOL_MAX",
  "LATCHKEY_SECRET",
  "LATCHKEY_SCOPE_DESCRIPTIONS",
  "LATCHKEY_PRODUCT_NAME",
  "LATCHKEY_ADMIN_PORT",
  "LATCHKEY_ADMIN_HOST",
  "LATCHKEY_ADMIN_TOKEN",
  "LATCHKEY_CODE_TTL",
  "LATCHKEY_ACCESS_TOKEN_TTL",
  "LATCHKEY_REFRESH_TOKEN_TTL",
  "LATCHKEY_REFRESH_REUSE_GRACE",
  "LATCHKEY_SESSION_TTL",
  "LATCHKEY_SESSION_MAX_AGE",
  "LATCHKEY_TRUST_PROXY",
  "LATCHKEY_THROTTLE_FREE_FAILURES",
  "LATCHKEY_THROTTLE_ADDRESS_FREE_FAILURES",
  "LATCHKEY_THROTTLE_SLOW_FREE_FAILURES",
  "LATCHKEY_THROTTLE_BASE_LOCKOUT",
  "LATCHKEY_THROTTLE_MAX_LOCKOUT",
  "LATCHKEY_THROTTLE_MAX_DELAY",
  "LATCHKEY_THROTTLE_WINDOW",
  "LATCHKEY_HEADERS_TIMEOUT_MS",
  "LATCHKEY_REQUEST_TIMEOUT_MS",
  "LATCHKEY_AUDIT_RETENTION_DAYS",
  "LATCHKEY_WORKERS"
]

/** `LATCHKEY_*` variables of the repository's own tools (the benchmark, the runtime tests): no warning. */
const toolVariables = new Set(["LATCHKEY_CMD", "LATCHKEY_CLI_CMD", "LATCHKEY_CWD", "LATCHKEY_RUNTIME"])

/** Levenshtein distance between two strings. */
export const editDistance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1)
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution)
    }
    previous = current
  }
  return previous[b.length] as number
}

/** The known variable nearest to `name` by edit distance (the first of the nearest). */
export const nearestVariable = (name: string): string => {
  let best = knownVariables[0] as string
  let distance = Number.POSITIVE_INFINITY
  for (const known of knownVariables) {
    const d = editDistance(name, known)
    if (d < distance) {
      best = known
      distance = d
    }
  }
  return best
}

const loopback = (host: string): boolean =>
  host === "localhost" || host === "::1" || (isIP(host) === 4 && host.startsWith("127."))

/**
 * Warnings about an environment that `read` accepts: each `LATCHKEY_*` variable nobody reads (a
 * typo, most likely), with the nearest known name, and admin settings that have no effect or
 * expose the admin listener. One line each, without the `latchkey:` prefix; the server logs them
 * once at start and the CLI writes them on stderr.
 */
export const warnings = (env: NodeJS.ProcessEnv = process.env): ReadonlyArray<string> => {
  const known = new Set(knownVariables)
  const found: Array<string> = []
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith("LATCHKEY_") || known.has(name) || toolVariables.has(name)) continue
    found.push(`${name} is not a Latchkey setting and is ignored; did you mean ${nearestVariable(name)}?`)
  }
  const adminPort = (env.LATCHKEY_ADMIN_PORT ?? "").trim()
  if (adminPort === "") {
    for (const name of ["LATCHKEY_ADMIN_TOKEN", "LATCHKEY_ADMIN_HOST"]) {
      if ((env[name] ?? "") !== "")
        found.push(`${name} is set but LATCHKEY_ADMIN_PORT is not: the admin listener is off`)
    }
  } else {
    const host = (env.LATCHKEY_ADMIN_HOST ?? "").trim() || "127.0.0.1"
    if (!loopback(host)) {
      found.push(
        `LATCHKEY_ADMIN_HOST ${host} is not a loopback address: the admin listener speaks plain HTTP, so the admin token crosses the network in clear text unless a TLS proxy or a private network protects it`
      )
    }
  }
  return found
}
