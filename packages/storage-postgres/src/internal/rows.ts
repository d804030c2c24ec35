/**
 * Rows to records: column values as the drivers return them, converted to what the core's
 * Schemas decode (every row read is decoded, so a malformed row is a StorageError).
 */
import {
  Application,
  Audit,
  AuthorizationCode,
  type ConsentStore,
  Scope,
  SessionStore,
  StorageError,
  type Throttle,
  Token,
  User
} from "@latchkey/core"
import { Schema } from "effect"

type Row = Record<string, unknown>

const decodeApplication = Schema.decodeUnknownSync(Application.Application)
const decodeUser = Schema.decodeUnknownSync(User.User)
const decodeCode = Schema.decodeUnknownSync(AuthorizationCode.AuthorizationCode)
const decodeToken = Schema.decodeUnknownSync(Token.Token)
const decodeSession = Schema.decodeUnknownSync(SessionStore.SessionRecord)
const decodePending = Schema.decodeUnknownSync(SessionStore.PendingRecord)
const decodeEvent = Schema.decodeUnknownSync(Audit.AuditEvent)
export const decodeScope = Schema.decodeUnknownSync(Scope.ScopeSet)
const decodeConsent = Schema.decodeUnknownSync(
  Schema.Struct({ appKey: Schema.String, scope: Scope.ScopeSet, updatedAt: Schema.Number })
)

const integer = /^-?[0-9]+$/

/**
 * A bigint column as a JavaScript number. node-postgres reads int8 as a string (it may not fit a
 * double); PGlite reads it as a number. Epoch seconds and counts fit exactly; anything beyond
 * 2^53 is refused rather than rounded.
 */
export const num = (value: unknown): unknown => {
  if (typeof value === "bigint" || (typeof value === "string" && integer.test(value))) {
    const n = Number(value)
    if (!Number.isSafeInteger(n)) {
      throw new StorageError.StorageError({
        message: "a stored number is beyond the range of a JavaScript number"
      })
    }
    return n
  }
  return value
}

const nullableNum = (value: unknown): unknown => (value === null ? null : num(value))

/** A jsonb column: parsed by the drivers already, unless one hands over the text. */
export const json = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)

/** A count or other bigint the adapter itself computes; a number, never a wrong one. */
export const count = (value: unknown): number => {
  const n = num(value)
  if (typeof n !== "number" || !Number.isSafeInteger(n)) {
    throw new StorageError.StorageError({ message: "the database answered a count that is not a number" })
  }
  return n
}

export const applicationColumns = `app_key AS "appKey", name, secret_digest AS "secretDigest",
  redirect_uris AS "redirectUris", scopes, grant_types AS "grantTypes", require_pkce AS "requirePkce",
  access_token_ttl AS "accessTokenTtl", refresh_token_ttl AS "refreshTokenTtl", created_at AS "createdAt",
  previous_secret_digest AS "previousSecretDigest", previous_secret_expires_at AS "previousSecretExpiresAt",
  previous_secret_used_at AS "previousSecretUsedAt"`
export const userColumns = `user_id AS "userId", username, password_hash AS "passwordHash", created_at AS "createdAt",
  disabled_at AS "disabledAt"`
export const codeColumns = `code_hash AS "codeHash", app_key AS "appKey", redirect_uri AS "redirectUri",
  user_id AS "userId", open_id AS "openId", scope, code_challenge AS "codeChallenge",
  code_challenge_method AS "codeChallengeMethod", family_id AS "familyId", issued_at AS "issuedAt",
  expires_at AS "expiresAt", used_at AS "usedAt"`
export const tokenColumns = `token_hash AS "tokenHash", kind, app_key AS "appKey", user_id AS "userId",
  open_id AS "openId", scope, family_id AS "familyId", parent_hash AS "parentHash", issued_at AS "issuedAt",
  expires_at AS "expiresAt", revoked_at AS "revokedAt", rotated_at AS "rotatedAt"`
export const sessionColumns = `id_hash AS "idHash", user_id AS "userId", username,
  authenticated_at AS "authenticatedAt", expires_at AS "expiresAt"`
export const pendingColumns = `session_hash AS "sessionHash", txn, raw_query AS "rawQuery",
  csrf_hash AS "csrfHash", step, created_at AS "createdAt", expires_at AS "expiresAt"`
export const throttleColumns = `key, failures, last_failure AS "lastFailure", locked_until AS "lockedUntil"`
export const eventColumns = `at, type, app_key AS "appKey", user_id AS "userId", open_id AS "openId", address,
  request_id AS "requestId", detail, actor`
export const consentColumns = `app_key AS "appKey", scope, updated_at AS "updatedAt"`

export const application = (row: Row): Application.Application =>
  decodeApplication({
    ...row,
    redirectUris: json(row.redirectUris),
    scopes: json(row.scopes),
    grantTypes: json(row.grantTypes),
    accessTokenTtl: nullableNum(row.accessTokenTtl),
    refreshTokenTtl: nullableNum(row.refreshTokenTtl),
    createdAt: num(row.createdAt),
    previousSecretExpiresAt: nullableNum(row.previousSecretExpiresAt),
    previousSecretUsedAt: nullableNum(row.previousSecretUsedAt)
  })

export const user = (row: Row): User.User =>
  decodeUser({ ...row, createdAt: num(row.createdAt), disabledAt: nullableNum(row.disabledAt) })

export const code = (row: Row): AuthorizationCode.AuthorizationCode =>
  decodeCode({
    ...row,
    scope: json(row.scope),
    issuedAt: num(row.issuedAt),
    expiresAt: num(row.expiresAt),
    usedAt: nullableNum(row.usedAt)
  })

export const token = (row: Row): Token.Token =>
  decodeToken({
    ...row,
    scope: json(row.scope),
    issuedAt: num(row.issuedAt),
    expiresAt: num(row.expiresAt),
    revokedAt: nullableNum(row.revokedAt),
    rotatedAt: nullableNum(row.rotatedAt)
  })

export const session = (row: Row): SessionStore.SessionRecord =>
  decodeSession({ ...row, authenticatedAt: nullableNum(row.authenticatedAt), expiresAt: num(row.expiresAt) })

export const pending = (row: Row): SessionStore.PendingRecord =>
  decodePending({ ...row, createdAt: num(row.createdAt), expiresAt: num(row.expiresAt) })

export const event = (row: Row): Audit.AuditEvent => decodeEvent({ ...row, at: num(row.at) })

export const consent = (row: Row): ConsentStore.Consent =>
  decodeConsent({ ...row, scope: json(row.scope), updatedAt: num(row.updatedAt) })

/** A throttle entry; the counters are the adapter's own, so they are checked, not decoded. */
export const throttleEntry = (row: Row): Throttle.Entry => ({
  failures: count(row.failures),
  lastFailure: count(row.lastFailure),
  lockedUntil: count(row.lockedUntil)
})
