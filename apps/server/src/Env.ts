/**
 * The server's configuration, read from environment variables (the table in apps/server/README.md).
 */
import { isAbsolute, resolve } from "node:path"
import { Config, Throttle } from "@latchkey/core"
import { Either } from "effect"

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
  /** Express "trust proxy" setting, or false. */
  readonly trustProxy: string | false
  readonly logLevel: string
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

/** Read and check the environment. */
export const read = (env: NodeJS.ProcessEnv = process.env): ServerEnv => {
  const databaseUrl = postgresUrl(env)
  const port = integer(env, "PORT", 0, 65535) ?? 8080
  const issuer = (env.LATCHKEY_ISSUER ?? "").trim() || null
  if (issuer !== null) {
    const checked = Config.validateIssuer(issuer)
    if (Either.isLeft(checked)) throw new EnvError(`LATCHKEY_ISSUER ${checked.left.message}`)
  }
  const db = (env.LATCHKEY_DB ?? "").trim() || "./data/latchkey.sqlite"
  const secret = env.LATCHKEY_SECRET ?? ""
  if (secret !== "" && secret.length < Config.minServerKeyLength)
    throw new EnvError(`LATCHKEY_SECRET must be at least ${Config.minServerKeyLength} characters`)
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
        'LATCHKEY_SCOPE_DESCRIPTIONS must be a JSON object of texts, or of texts by language, e.g. {"profile":"Read your profile"} or {"profile":{"en":"Read your profile","zh-CN":"读取你的资料"}}'
      )
    }
  }
  const productName = (env.LATCHKEY_PRODUCT_NAME ?? "").trim() || "Latchkey"
  if (productName.length > 64) {
    throw new EnvError(`LATCHKEY_PRODUCT_NAME must be at most 64 characters (got ${productName.length})`)
  }
  const adminPort = integer(env, "LATCHKEY_ADMIN_PORT", 0, 65535)
  const adminToken = env.LATCHKEY_ADMIN_TOKEN ?? ""
  let admin: AdminEnv | null = null
  if (adminPort !== undefined) {
    if (adminToken.length < minAdminTokenLength) {
      throw new EnvError(
        `LATCHKEY_ADMIN_TOKEN must be set to at least ${minAdminTokenLength} characters when LATCHKEY_ADMIN_PORT is set (e.g. openssl rand -base64 32)`
      )
    }
    admin = { port: adminPort, host: (env.LATCHKEY_ADMIN_HOST ?? "").trim() || "127.0.0.1", token: adminToken }
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
    throw new EnvError("LATCHKEY_HEADERS_TIMEOUT_MS must not exceed LATCHKEY_REQUEST_TIMEOUT_MS")
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
    host: (env.HOST ?? "").trim() || "127.0.0.1",
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
    trustProxy: (env.LATCHKEY_TRUST_PROXY ?? "").trim() || false,
    logLevel: (env.LOG_LEVEL ?? "").trim() || "info"
  }
}
