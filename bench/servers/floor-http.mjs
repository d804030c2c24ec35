// Shared by the two baselines durable-floor.mjs and durable-floor-pipelined.mjs (NOT Latchkey):
// everything of their client_credentials request but where the token and its audit row are
// committed. Each floor opens the store with `openStore`, logs with `floorLog`, and answers with
// `floorServer`, handing each token to its own `write`; what is done here, and what is left out,
// is in durable-floor.mjs's header.
import * as crypto from "node:crypto"
import { createHash, createHmac, randomFillSync, randomUUID, timingSafeEqual } from "node:crypto"
import { realpathSync } from "node:fs"
import { createServer } from "node:http"
import { createRequire } from "node:module"
import BetterSqlite3 from "better-sqlite3"

const maxBodyBytes = 16 * 1024
const tokenPath = "/oauth2/oauth2/token"

/** The database as @latchkey/storage-sqlite opens it. */
export const openStore = (file) => {
  const db = new BetterSqlite3(file, { fileMustExist: true, timeout: 5000 })
  db.pragma("busy_timeout = 5000")
  if (db.pragma("journal_mode = WAL", { simple: true }) !== "wal") throw new Error("journal_mode=WAL refused")
  db.pragma("synchronous = FULL")
  if (db.pragma("synchronous", { simple: true }) !== 2) throw new Error("synchronous=FULL refused")
  db.pragma("foreign_keys = ON")
  return db
}

/**
 * The server key: LATCHKEY_SECRET when set, else the `server_key` the Latchkey CLI kept in the
 * `settings` table, as in apps/server/src/Services.ts.
 */
export const serverKeyOf = (db) => {
  const key =
    (process.env.LATCHKEY_SECRET ?? "") !== ""
      ? process.env.LATCHKEY_SECRET
      : db.prepare("SELECT value FROM settings WHERE name = 'server_key'").pluck().get()
  if (typeof key !== "string") throw new Error("no server_key in settings: seed the store with the CLI")
  return key
}

/**
 * A pino logger to stdout through its asynchronous destination, pino as the reference server
 * resolves it: apps/server's own dependency (bench depends on @latchkey/server), so the same
 * pino version writes the same kind of line.
 */
export const floorLog = (service) => {
  const pino = createRequire(
    realpathSync(new URL("../node_modules/@latchkey/server/package.json", import.meta.url))
  )("pino")
  return pino(
    {
      level: process.env.LOG_LEVEL || "info",
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) }
    },
    pino.destination({ fd: 1, sync: false })
  )
}

// Random bytes from a pool refilled in one call, each handed out once (as @latchkey/node does)
const pool = Buffer.alloc(4096)
let offset = pool.length
const draw = (n) => {
  if (offset + n > pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const out = Buffer.from(pool.subarray(offset, offset + n))
  pool.fill(0, offset, offset + n)
  offset += n
  return out
}
// One-shot SHA-256 where Node has it (20.12 and later), as @latchkey/node does
const sha256 =
  typeof crypto.hash === "function"
    ? (value) => crypto.hash("sha256", value, "base64url")
    : (value) => createHash("sha256").update(value, "utf8").digest("base64url")

// HTTP Basic as packages/core/src/oauth/requests/BasicAuth.ts decodes it
const utf8 = new TextDecoder("utf-8", { fatal: true })
const formDecode = (s) => (s.includes("%") || s.includes("+") ? decodeURIComponent(s.replace(/\+/g, " ")) : s)
const basic = (header) => {
  if (header === undefined || header.length > 2048) return null
  const m = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header)
  if (m === null) return null
  try {
    const text = utf8.decode(Buffer.from(m[1], "base64"))
    const colon = text.indexOf(":")
    if (colon <= 0) return null
    const appKey = formDecode(text.slice(0, colon))
    const appSecret = formDecode(text.slice(colon + 1))
    return appKey === "" || appSecret === "" ? null : { appKey, appSecret }
  } catch {
    return null
  }
}

/**
 * The HTTP server of a floor, not listening yet: POST /oauth2/oauth2/token with
 * client_credentials, the application read with `db`'s prepared SELECT on every request. Each
 * token goes to `write(job, done)` (job: tokenHash, appKey, scope, familyId, now, ttl, address,
 * reqId), which calls `done(null)` once the job's rows are committed, `done(error)` if they are
 * not; the answer is written then.
 */
export const floorServer = ({ db, log, write }) => {
  const accessTtl = Number(process.env.LATCHKEY_ACCESS_TOKEN_TTL || 3600)
  const hmacKey = Buffer.from(serverKeyOf(db), "utf8")
  const findApp = db.prepare(
    "SELECT secret_digest, scopes, grant_types, access_token_ttl FROM applications WHERE app_key = ?"
  )
  const send = (res, ctx, status, value, extra) => {
    const body = JSON.stringify(value)
    res.writeHead(status, {
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-store",
      pragma: "no-cache",
      ...extra,
      "x-request-id": ctx.reqId,
      "content-length": Buffer.byteLength(body)
    })
    res.end(body)
    log.info(
      {
        reqId: ctx.reqId,
        method: ctx.method,
        path: ctx.path,
        status,
        durationMs: Number((process.hrtime.bigint() - ctx.start) / 1000n) / 1000,
        remoteAddress: ctx.address
      },
      "request"
    )
  }
  const oauthError = (res, ctx, status, error, description, extra) =>
    send(res, ctx, status, { error, error_description: description }, extra)

  const token = (req, res, ctx, body) => {
    const type = (req.headers["content-type"] ?? "").toLowerCase().split(";")[0].trim()
    if (type !== "application/x-www-form-urlencoded")
      return oauthError(
        res,
        ctx,
        400,
        "invalid_request",
        "content type must be application/x-www-form-urlencoded"
      )
    const params = new URLSearchParams(body)
    if (params.get("grant_type") !== "client_credentials")
      return oauthError(res, ctx, 400, "unsupported_grant_type", "only client_credentials here")
    if (params.has("open_id")) return oauthError(res, ctx, 400, "invalid_request", "open_id is not supported")
    const creds = basic(req.headers.authorization)
    const failed = () =>
      oauthError(res, ctx, 401, "invalid_client", "client authentication failed", {
        "www-authenticate": 'Basic realm="latchkey"'
      })
    if (creds === null) return failed()
    const sentId = params.get("client_id")
    if (params.has("client_secret") || (sentId !== null && sentId !== creds.appKey))
      return oauthError(
        res,
        ctx,
        400,
        "invalid_request",
        "client credentials only in the Authorization header"
      )
    let app
    try {
      app = findApp.get(creds.appKey)
    } catch {
      return oauthError(res, ctx, 503, "temporarily_unavailable", "storage is unavailable", {
        "retry-after": "1"
      })
    }
    const digest = Buffer.from(
      createHmac("sha256", hmacKey)
        .update(`app_secret\u0000${creds.appKey}\u0000${creds.appSecret}`, "utf8")
        .digest("base64url"),
      "latin1"
    )
    const expected = app === undefined ? null : Buffer.from(app.secret_digest, "latin1")
    const same =
      expected !== null && expected.length === digest.length
        ? timingSafeEqual(digest, expected)
        : !timingSafeEqual(digest, digest)
    if (!same) return failed()
    if (!app.grant_types.includes('"client_credentials"'))
      return oauthError(
        res,
        ctx,
        400,
        "unauthorized_client",
        "this application may not use the client_credentials grant"
      )
    const accessToken = draw(32).toString("base64url")
    const ttl = app.access_token_ttl ?? accessTtl
    const scope = app.scopes
    write(
      {
        tokenHash: sha256(accessToken),
        appKey: creds.appKey,
        scope,
        familyId: draw(16).toString("base64url"),
        now: Math.floor(Date.now() / 1000),
        ttl,
        address: ctx.address ?? null,
        reqId: ctx.reqId
      },
      (error) =>
        error === null
          ? send(res, ctx, 200, {
              access_token: accessToken,
              token_type: "Bearer",
              expires_in: ttl,
              scope: JSON.parse(scope).join(",")
            })
          : oauthError(res, ctx, 503, "temporarily_unavailable", "storage is unavailable; retry shortly", {
              "retry-after": "1"
            })
    )
  }

  // Latchkey's request lifetimes (docs/security.md, catalogue T9) and keep-alive
  const server = createServer(
    { headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 1_000 },
    (req, res) => {
      const url = req.url ?? "/"
      const q = url.indexOf("?")
      const ctx = {
        start: process.hrtime.bigint(),
        reqId: randomUUID(),
        method: req.method,
        path: q === -1 ? url : url.slice(0, q),
        address: req.socket.remoteAddress
      }
      if (ctx.path !== tokenPath) {
        req.resume()
        return oauthError(res, ctx, 404, "not_found", "no such endpoint")
      }
      if (req.method !== "POST") {
        req.resume()
        return oauthError(res, ctx, 405, "invalid_request", "method not allowed", { allow: "POST" })
      }
      const encoding = req.headers["content-encoding"]
      if (encoding !== undefined && encoding.toLowerCase() !== "identity") {
        req.resume()
        return oauthError(res, ctx, 415, "invalid_request", "content encoding is not supported")
      }
      const chunks = []
      let size = 0
      req.on("data", (chunk) => {
        size += chunk.length
        if (size <= maxBodyBytes) chunks.push(chunk)
      })
      req.on("end", () => {
        if (size > maxBodyBytes)
          return oauthError(res, ctx, 413, "invalid_request", "request body is too large", {
            connection: "close"
          })
        token(req, res, ctx, Buffer.concat(chunks).toString("utf8"))
      })
    }
  )
  server.keepAliveTimeout = 5_000
  return server
}
