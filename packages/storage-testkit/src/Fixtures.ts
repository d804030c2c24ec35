/**
 * Record builders with fresh random identifiers, so tests sharing one store stay apart.
 */
import type {
  Application,
  Audit,
  AuthorizationCode,
  PasskeyStore,
  SessionStore,
  SigningKey,
  Token,
  TotpFactor,
  User
} from "@latchkey/core"
import { AuditStore, CodeStore, ConsentStore, Scope } from "@latchkey/core"
import { Effect, Schema } from "effect"

/** A base time (epoch seconds) the contract's records are issued around. */
export const baseTime = 1_800_000_000

/** A fresh random identifier with a readable prefix. */
export const id = (prefix: string): string => `${prefix}-${crypto.randomUUID()}`

/** A fresh random stand-in for a SHA-256 digest, base64url-like. */
export const hash = (): string =>
  `h${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().slice(0, 10)}`

const decodeScope = Schema.decodeUnknownSync(Scope.ScopeSet)

/** A scope set from its items, in any order. */
export const scope = (...items: ReadonlyArray<string>): Scope.ScopeSet =>
  decodeScope([...new Set(items)].sort())

/** A registered application. */
export const application = (overrides: Partial<Application.Application> = {}): Application.Application => ({
  appKey: id("app"),
  name: "Example app",
  secretDigest: hash(),
  redirectUris: ["https://app.example/cb", "http://127.0.0.1/cb"],
  scopes: scope("read", "write"),
  grantTypes: ["authorization_code", "refresh_token", "client_credentials"],
  requirePkce: false,
  accessTokenTtl: null,
  refreshTokenTtl: null,
  createdAt: baseTime,
  previousSecretDigest: null,
  previousSecretExpiresAt: null,
  previousSecretUsedAt: null,
  public: false,
  accessTokenFormat: "opaque",
  accessTokenAudience: null,
  webOrigins: [],
  tokenEndpointAuthMethod: "client_secret_basic",
  scopeDelimiter: "comma",
  postLogoutRedirectUris: [],
  backchannelLogoutUri: null,
  backchannelLogoutSessionRequired: false,
  requireMfa: false,
  status: "active",
  statusReason: null,
  ...overrides
})

/** An enabled platform user (`disabledAt` null, as the stores return it). */
export const user = (overrides: Partial<User.User> = {}): User.User => ({
  userId: id("user"),
  username: id("name"),
  passwordHash: `scrypt$${hash()}`,
  createdAt: baseTime,
  disabledAt: null,
  ...overrides
})

/** An issued, unused authorization code valid for 60 s from `baseTime`. */
export const code = (
  overrides: Partial<AuthorizationCode.AuthorizationCode> = {}
): AuthorizationCode.AuthorizationCode => ({
  codeHash: hash(),
  appKey: id("app"),
  redirectUri: "https://app.example/cb",
  userId: id("user"),
  openId: id("open"),
  scope: scope("read"),
  codeChallenge: null,
  codeChallengeMethod: null,
  familyId: id("family"),
  issuedAt: baseTime,
  expiresAt: baseTime + 60,
  usedAt: null,
  nonce: null,
  authTime: null,
  sid: null,
  ...overrides
})

/**
 * Insert `code` with the consent it is issued under (its user's, to its application, for its scope):
 * a store redeems a code only while that consent stands and covers its scope (D15).
 */
export const insertCode = (
  code: AuthorizationCode.AuthorizationCode
): Effect.Effect<void, unknown, CodeStore.CodeStore | ConsentStore.ConsentStore> =>
  Effect.gen(function* () {
    const consents = yield* ConsentStore.ConsentStore
    yield* consents.grant(code.userId, code.appKey, code.scope, code.issuedAt)
    yield* Effect.flatMap(CodeStore.CodeStore, (codes) => codes.insert(code))
  })

/**
 * An active token (access unless `kind` says otherwise) valid for an hour from `baseTime`, of no
 * platform user unless `userId` is given: a store saves a user's token only while the user exists
 * and is enabled (D13), so a test that names one inserts the user first.
 */
export const token = (overrides: Partial<Token.Token> = {}): Token.Token => ({
  tokenHash: hash(),
  kind: "access",
  appKey: id("app"),
  userId: null,
  openId: id("open"),
  scope: scope("read"),
  familyId: id("family"),
  parentHash: null,
  issuedAt: baseTime,
  expiresAt: baseTime + 3600,
  revokedAt: null,
  rotatedAt: null,
  ...overrides
})

/** An access and a refresh token of one family, as a grant issues them. */
export const pair = (overrides: Partial<Token.Token> = {}): readonly [Token.Token, Token.Token] => {
  const familyId = overrides.familyId ?? id("family")
  const appKey = overrides.appKey ?? id("app")
  return [
    token({ ...overrides, familyId, appKey, kind: "access" }),
    token({ expiresAt: baseTime + 30 * 86400, ...overrides, familyId, appKey, kind: "refresh" })
  ]
}

/**
 * A signing key (the signing key unless `retiredAt` is given) created at `baseTime`, with a fresh
 * kid. Its JWKs are stand-ins: a store keeps them as text and never reads them.
 */
export const signingKey = (overrides: Partial<SigningKey.SigningKey> = {}): SigningKey.SigningKey => {
  const kid = id("kid")
  return {
    kid,
    alg: "ES256",
    publicJwk: JSON.stringify({ kty: "EC", crv: "P-256", kid, x: hash(), y: hash() }),
    sealedPrivateJwk: `sealed.${hash()}.${hash()}`,
    createdAt: baseTime,
    retiredAt: null,
    publishUntil: null,
    ...overrides
  }
}

/**
 * A pending authenticator app of a fresh user, enrolled at `baseTime`. Its sealed secret is a
 * stand-in: a store keeps it as text and never reads it.
 */
export const totpFactor = (overrides: Partial<TotpFactor.TotpFactor> = {}): TotpFactor.TotpFactor => ({
  userId: id("user"),
  sealedSecret: `sealed.${hash()}`,
  createdAt: baseTime,
  confirmedAt: null,
  lastStep: null,
  ...overrides
})

/** A passkey of `userId` registered at `baseTime`, never used, with a fresh credential id and key. */
export const passkey = (
  userId: string,
  overrides: Partial<PasskeyStore.Passkey> = {}
): PasskeyStore.Passkey => ({
  credentialId: hash(),
  userId,
  publicKey: `${hash()}${hash()}`,
  counter: 0,
  transports: ["internal", "hybrid"],
  deviceType: "multiDevice",
  backedUp: true,
  name: "Passkey",
  createdAt: baseTime,
  lastUsedAt: null,
  ...overrides
})

/** An anonymous sign-in session valid for an hour from `baseTime`. */
export const session = (overrides: Partial<SessionStore.SessionRecord> = {}): SessionStore.SessionRecord => ({
  idHash: hash(),
  userId: null,
  username: null,
  authenticatedAt: null,
  expiresAt: baseTime + 3600,
  ...overrides
})

/** A signed-in sign-in session, signed in a minute before `baseTime` and valid for an hour from it. */
export const signedInSession = (
  overrides: Partial<SessionStore.SessionRecord> = {}
): SessionStore.SessionRecord =>
  session({ userId: id("user"), username: id("name"), authenticatedAt: baseTime - 60, ...overrides })

/** An authorization request pending in a session (a fresh one unless `sessionHash` is given), valid for an hour. */
export const pending = (overrides: Partial<SessionStore.PendingRecord> = {}): SessionStore.PendingRecord => ({
  sessionHash: hash(),
  txn: id("txn"),
  rawQuery: `response_type=code&client_id=${id("app")}&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=s`,
  csrfHash: hash(),
  step: "login",
  createdAt: baseTime,
  expiresAt: baseTime + 3600,
  ...overrides
})

/** An audit event of the application (or of none), at `at` (`baseTime` unless given). */
export const auditEvent = (
  appKey: string | null,
  detail: string,
  at: number = baseTime,
  type: Audit.EventType = "token_issued"
): Audit.AuditEvent => ({
  at,
  type,
  appKey,
  userId: null,
  openId: null,
  address: "127.0.0.1",
  requestId: id("req"),
  detail,
  actor: null
})

/** The details of the application's stored audit events, oldest first. */
export const auditDetails = (
  appKey: string
): Effect.Effect<ReadonlyArray<string | null>, unknown, AuditStore.AuditStore> =>
  Effect.map(
    Effect.flatMap(AuditStore.AuditStore, (a) => a.tail({ limit: 1000, appKey })),
    (events) => events.map((e) => e.detail)
  )
