/**
 * The tables the SQL storage adapters keep, as plain data: for each table the column holding each
 * field of its record, in the order the adapters insert them. The SQLite and PostgreSQL adapters
 * store the same columns, so a record's column values and a row's record are derived here once:
 * `values` for an INSERT, `selectList` for a SELECT and `fromRow` for what it reads.
 */
import { Schema, SchemaAST } from "effect"
import { Application } from "../model/Application.js"
import { AuthorizationCode } from "../model/AuthorizationCode.js"
import { Operator } from "../model/Operator.js"
import { ScopeSet } from "../model/Scope.js"
import * as ScopeCatalogue from "../model/ScopeCatalogue.js"
import { SigningKey } from "../model/SigningKey.js"
import { Token } from "../model/Token.js"
import { TotpFactor } from "../model/TotpFactor.js"
import { User } from "../model/User.js"
import type { Consent } from "./ConsentStore.js"
import { TrustedDevice } from "./DeviceStore.js"
import { Delivery } from "./LogoutStore.js"
import { ConsoleSession } from "./OperatorStore.js"
import { Passkey } from "./PasskeyStore.js"
import { ClientRegistration, InitialAccessToken } from "./RegistrationStore.js"
import { PendingRecord, SessionRecord } from "./SessionStore.js"
import { StorageError } from "./StorageError.js"

/**
 * How a column holds its field: as is (`text`), a whole number (`int`: epoch seconds, TTLs), a
 * JSON text (`json`: lists and scope sets) or a truth value (`bool`: 0 or 1 where the database has
 * no boolean).
 */
export type ColumnKind = "text" | "int" | "json" | "bool"

/**
 * One column: its SQL name, the record field it holds, and how; `fallback` is the value written
 * for a record that leaves an optional field out (the column's default), null when not given.
 */
export interface Column {
  readonly name: string
  readonly field: string
  readonly kind: ColumnKind
  readonly fallback?: string | boolean | ReadonlyArray<string>
}

/**
 * A table: its name, its columns in insert order, the decoding of its record, and the fields a
 * NULL in their column leaves out of it (`absentWhenNull`).
 */
export interface Table<A> {
  readonly name: string
  readonly columns: ReadonlyArray<Column>
  readonly decode: (record: unknown) => A
  readonly absentWhenNull: ReadonlySet<string>
}

/**
 * The optional fields of `schema`'s records that never take null: a row holds NULL in the column of
 * a record that leaves one out, read back as absent. (An optional field that takes null, a
 * `NullOr`, reads NULL as null.) Declared so rather than as a nullable optional field, whose
 * transformation made a token's decoding about four times as costly.
 */
const absentWhenNull = (schema: Schema.Schema.AnyNoContext): ReadonlySet<string> => {
  const ast = SchemaAST.encodedAST(schema.ast)
  if (!SchemaAST.isTypeLiteral(ast)) return new Set()
  const takesNull = (type: SchemaAST.AST) => Schema.is(Schema.make(type))(null)
  return new Set(
    ast.propertySignatures.filter((p) => p.isOptional && !takesNull(p.type)).map((p) => String(p.name))
  )
}

const table = <A, I>(
  name: string,
  schema: Schema.Schema<A, I>,
  columns: ReadonlyArray<
    readonly [
      name: string,
      field: string,
      kind: ColumnKind,
      fallback?: string | boolean | ReadonlyArray<string>
    ]
  >
): Table<A> => ({
  name,
  columns: columns.map(([column, field, kind, fallback]) =>
    fallback === undefined ? { name: column, field, kind } : { name: column, field, kind, fallback }
  ),
  decode: Schema.decodeUnknownSync(schema),
  absentWhenNull: absentWhenNull(schema)
})

/** Registered applications. */
export const applications: Table<Application> = table("applications", Application, [
  ["app_key", "appKey", "text"],
  ["name", "name", "text"],
  ["secret_digest", "secretDigest", "text"],
  ["redirect_uris", "redirectUris", "json"],
  ["scopes", "scopes", "json"],
  ["grant_types", "grantTypes", "json"],
  ["require_pkce", "requirePkce", "bool"],
  ["access_token_ttl", "accessTokenTtl", "int"],
  ["refresh_token_ttl", "refreshTokenTtl", "int"],
  ["created_at", "createdAt", "int"],
  ["previous_secret_digest", "previousSecretDigest", "text"],
  ["previous_secret_expires_at", "previousSecretExpiresAt", "int"],
  ["previous_secret_used_at", "previousSecretUsedAt", "int"],
  ["public", "public", "bool", false],
  ["access_token_format", "accessTokenFormat", "text", "opaque"],
  ["access_token_audience", "accessTokenAudience", "text"],
  ["web_origins", "webOrigins", "json", []],
  ["token_endpoint_auth_method", "tokenEndpointAuthMethod", "text", "client_secret_basic"],
  ["scope_delimiter", "scopeDelimiter", "text", "comma"],
  ["post_logout_redirect_uris", "postLogoutRedirectUris", "json", []],
  ["backchannel_logout_uri", "backchannelLogoutUri", "text"],
  ["backchannel_logout_session_required", "backchannelLogoutSessionRequired", "bool", false],
  ["require_mfa", "requireMfa", "bool", false],
  ["status", "status", "text", "active"],
  ["status_reason", "statusReason", "text"]
])

/** Platform users. */
export const users: Table<User> = table("users", User, [
  ["user_id", "userId", "text"],
  ["username", "username", "text"],
  ["password_hash", "passwordHash", "text"],
  ["created_at", "createdAt", "int"],
  ["disabled_at", "disabledAt", "int"]
])

/** Authorization codes, by the digest of the code. */
export const codes: Table<AuthorizationCode> = table("authorization_codes", AuthorizationCode, [
  ["code_hash", "codeHash", "text"],
  ["app_key", "appKey", "text"],
  ["redirect_uri", "redirectUri", "text"],
  ["user_id", "userId", "text"],
  ["open_id", "openId", "text"],
  ["scope", "scope", "json"],
  ["code_challenge", "codeChallenge", "text"],
  ["code_challenge_method", "codeChallengeMethod", "text"],
  ["family_id", "familyId", "text"],
  ["issued_at", "issuedAt", "int"],
  ["expires_at", "expiresAt", "int"],
  ["used_at", "usedAt", "int"],
  ["nonce", "nonce", "text"],
  ["auth_time", "authTime", "int"],
  ["sid", "sid", "text"],
  ["sign_in_method", "signInMethod", "text"]
])

/** Access and refresh tokens, by kind and the digest of the token. */
export const tokens: Table<Token> = table("tokens", Token, [
  ["kind", "kind", "text"],
  ["token_hash", "tokenHash", "text"],
  ["app_key", "appKey", "text"],
  ["user_id", "userId", "text"],
  ["open_id", "openId", "text"],
  ["scope", "scope", "json"],
  ["family_id", "familyId", "text"],
  ["parent_hash", "parentHash", "text"],
  ["issued_at", "issuedAt", "int"],
  ["expires_at", "expiresAt", "int"],
  ["revoked_at", "revokedAt", "int"],
  ["rotated_at", "rotatedAt", "int"],
  ["auth_time", "authTime", "int"],
  ["sign_in_method", "signInMethod", "text"]
])

/** Sign-in sessions. */
export const sessions: Table<SessionRecord> = table("sessions", SessionRecord, [
  ["id_hash", "idHash", "text"],
  ["user_id", "userId", "text"],
  ["username", "username", "text"],
  ["authenticated_at", "authenticatedAt", "int"],
  ["expires_at", "expiresAt", "int"],
  ["sign_in_method", "method", "text"]
])

/** Authorization requests pending in a session. */
export const pending: Table<PendingRecord> = table("pending_authorizations", PendingRecord, [
  ["session_hash", "sessionHash", "text"],
  ["txn", "txn", "text"],
  ["raw_query", "rawQuery", "text"],
  ["csrf_hash", "csrfHash", "text"],
  ["step", "step", "text"],
  ["created_at", "createdAt", "int"],
  ["expires_at", "expiresAt", "int"]
])

/** Signing keys, by kid. */
export const signingKeys: Table<SigningKey> = table("signing_keys", SigningKey, [
  ["kid", "kid", "text"],
  ["alg", "alg", "text"],
  ["public_jwk", "publicJwk", "text"],
  ["sealed_private_jwk", "sealedPrivateJwk", "text"],
  ["created_at", "createdAt", "int"],
  ["retired_at", "retiredAt", "int"],
  ["publish_until", "publishUntil", "int"]
])

/** Authenticator apps (TOTP), by user id. */
export const totpFactors: Table<TotpFactor> = table("totp_factors", TotpFactor, [
  ["user_id", "userId", "text"],
  ["sealed_secret", "sealedSecret", "text"],
  ["created_at", "createdAt", "int"],
  ["confirmed_at", "confirmedAt", "int"],
  ["last_step", "lastStep", "int"]
])

/** A recovery code of a user's second factor, stored only as its keyed digest. */
export const RecoveryCode = Schema.Struct({ userId: Schema.String, codeDigest: Schema.String })

/** Recovery codes, by user id and digest; a used one is deleted. */
export const recoveryCodes: Table<typeof RecoveryCode.Type> = table("recovery_codes", RecoveryCode, [
  ["user_id", "userId", "text"],
  ["code_digest", "codeDigest", "text"]
])

/** A user's consents, as listed (the user's id is the key they are read by). */
export const consents: Table<Consent> = table(
  "consents",
  Schema.Struct({ appKey: Schema.String, scope: ScopeSet, updatedAt: Schema.Number }),
  [
    ["app_key", "appKey", "text"],
    ["scope", "scope", "json"],
    ["updated_at", "updatedAt", "int"]
  ]
)

/** Passkeys (WebAuthn credentials), by credential id. */
export const passkeys: Table<Passkey> = table("passkeys", Passkey, [
  ["credential_id", "credentialId", "text"],
  ["user_id", "userId", "text"],
  ["public_key", "publicKey", "text"],
  ["counter", "counter", "int"],
  ["transports", "transports", "json"],
  ["device_type", "deviceType", "text"],
  ["backed_up", "backedUp", "bool"],
  ["name", "name", "text"],
  ["created_at", "createdAt", "int"],
  ["last_used_at", "lastUsedAt", "int"]
])

/** Trusted devices (`DeviceStore`), by the digest of their cookie's nonce. */
export const trustedDevices: Table<TrustedDevice> = table("trusted_devices", TrustedDevice, [
  ["id_hash", "idHash", "text"],
  ["user_id", "userId", "text"],
  ["browser", "browser", "text"],
  ["system", "system", "text"],
  ["trusted_at", "trustedAt", "int"],
  ["last_sign_in_at", "lastSignInAt", "int"],
  ["expires_at", "expiresAt", "int"]
])

/** The scope catalogue (`ScopeStore`), by scope name. */
export const scopeCatalogue: Table<ScopeCatalogue.Entry> = table("scope_catalogue", ScopeCatalogue.Entry, [
  ["name", "name", "text"],
  ["descriptions", "descriptions", "json"],
  ["developer_requestable", "developerRequestable", "bool"],
  ["needs_review", "needsReview", "bool"],
  ["created_at", "createdAt", "int"],
  ["updated_at", "updatedAt", "int"]
])
/** Initial access tokens of dynamic client registration (`RegistrationStore`), by digest. */
export const initialAccessTokens: Table<InitialAccessToken> = table(
  "initial_access_tokens",
  InitialAccessToken,
  [
    ["token_hash", "tokenHash", "text"],
    ["uses_left", "usesLeft", "int"],
    ["expires_at", "expiresAt", "int"],
    ["created_at", "createdAt", "int"]
  ]
)

/** Applications registered through the registration endpoint (`RegistrationStore`), by App Key. */
export const clientRegistrations: Table<ClientRegistration> = table(
  "client_registrations",
  ClientRegistration,
  [
    ["app_key", "appKey", "text"],
    ["access_token_hash", "accessTokenHash", "text"],
    ["registered_at", "registeredAt", "int"]
  ]
)
/** Operator accounts (`OperatorStore`), by name. */
export const operators: Table<Operator> = table("operators", Operator, [
  ["name", "name", "text"],
  ["password_hash", "passwordHash", "text"],
  ["role", "role", "text"],
  ["created_at", "createdAt", "int"],
  ["last_sign_in_at", "lastSignInAt", "int"]
])

/** Console sessions (`OperatorStore`), by the digest of their id. */
export const consoleSessions: Table<ConsoleSession> = table("console_sessions", ConsoleSession, [
  ["id_hash", "idHash", "text"],
  ["operator", "operator", "text"],
  ["created_at", "createdAt", "int"],
  ["expires_at", "expiresAt", "int"]
])

/**
 * Back-channel logout deliveries owed (`LogoutStore`), by `sid` and App Key; the table also holds
 * the claim and its lease, which no record carries.
 */
export const logoutDeliveries: Table<Delivery> = table("logout_deliveries", Delivery, [
  ["sid", "sid", "text"],
  ["app_key", "appKey", "text"],
  ["user_id", "userId", "text"],
  ["sub", "sub", "text"],
  ["attempts", "attempts", "int"],
  ["next_attempt_at", "nextAttemptAt", "int"]
])

/** The column names of `t` in insert order, comma-separated: `kind, token_hash, ...`. */
export const columnList = (t: Table<unknown>): string => t.columns.map((c) => c.name).join(", ")

/** The columns of `t` named by their fields, for a SELECT: `token_hash AS "tokenHash", kind, ...`. */
export const selectList = (t: Table<unknown>): string =>
  t.columns.map((c) => (c.name === c.field ? c.name : `${c.name} AS "${c.field}"`)).join(", ")

/**
 * The column values of `record` in the order of `columnList`: JSON columns as their text, a field
 * left out as its column's `fallback` or null, truth values as they are (`asIntegers` turns them into 1 and 0).
 */
export const values = <A>(t: Table<A>, record: A): ReadonlyArray<unknown> =>
  t.columns.map((c) => {
    const value = (record as Record<string, unknown>)[c.field] ?? c.fallback ?? null
    return c.kind === "json" && value !== null ? JSON.stringify(value) : value
  })

/** `values` for a database without a boolean type: true as 1, false as 0. */
export const asIntegers = (values: ReadonlyArray<unknown>): ReadonlyArray<unknown> =>
  values.map((v) => (typeof v === "boolean" ? (v ? 1 : 0) : v))

const integer = /^-?[0-9]+$/

/**
 * A whole-number column as a JavaScript number. A driver may read a bigint column as a string
 * or a bigint (it may not fit a double): epoch seconds and counts fit exactly; anything beyond
 * 2^53 is refused with StorageError rather than rounded. Any other value is left as it is.
 */
export const num = (value: unknown): unknown => {
  if (typeof value === "bigint" || (typeof value === "string" && integer.test(value))) {
    const n = Number(value)
    if (!Number.isSafeInteger(n)) {
      throw new StorageError({ message: "a stored number is beyond the range of a JavaScript number" })
    }
    return n
  }
  return value
}

/** A JSON column: parsed, unless the driver parsed it already. */
export const json = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)

const decodeScope = Schema.decodeUnknownSync(ScopeSet)

/** A scope column as read (JSON text or parsed), decoded. */
export const scopeOf = (value: unknown): ScopeSet => decodeScope(json(value))

const field = (kind: ColumnKind, value: unknown): unknown =>
  kind === "json" ? json(value) : kind === "int" ? num(value) : kind === "bool" ? bool(value) : value
const bool = (value: unknown): unknown => (typeof value === "number" ? value !== 0 : value)

/**
 * The record of a row read with `selectList` (keyed by field), decoded with the table's Schema (a
 * NULL of an `absentWhenNull` field left out); throws (a ParseError, a SyntaxError or
 * StorageError) on a row it refuses.
 */
export const fromRow = <A>(t: Table<A>, row: Readonly<Record<string, unknown>>): A => {
  const record: Record<string, unknown> = {}
  for (const c of t.columns) {
    if (!(c.field in row)) continue
    const value = row[c.field]
    if (value !== null || !t.absentWhenNull.has(c.field)) record[c.field] = field(c.kind, value)
  }
  return t.decode(record)
}

/**
 * An INSERT of `rows` rows of `t`, their parameters in the order of `values`, row after row;
 * `param` writes the placeholder of the parameter numbered `n` (from 0) for `column`.
 */
export const insertSql = (
  t: Table<unknown>,
  param: (n: number, column: Column) => string,
  rows = 1
): string => {
  const row = (r: number) => t.columns.map((c, i) => param(r * t.columns.length + i, c)).join(", ")
  const all = Array.from({ length: rows }, (_, r) => `(${row(r)})`).join(", ")
  return `INSERT INTO ${t.name} (${columnList(t)}) VALUES ${all}`
}
