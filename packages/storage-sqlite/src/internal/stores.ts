/**
 * The store services over one open database. Statements are prepared once; every
 * read-modify-write runs in a BEGIN IMMEDIATE transaction.
 */
import {
  Application,
  ApplicationStore,
  AuthorizationCode,
  CodeStore,
  ConsentStore,
  OpenIdStore,
  Scope,
  SessionStore,
  SettingStore,
  type Stores,
  Throttle,
  Token,
  TokenStore,
  User,
  UserStore
} from "@latchkey/core"
import type BetterSqlite3 from "better-sqlite3"
import { Context, Effect, Option, Schema } from "effect"
import { attempt } from "./database.js"
import { refuse, type Writer } from "./writer.js"

const decodeApplication = Schema.decodeUnknownSync(Application.Application)
const decodeUser = Schema.decodeUnknownSync(User.User)
const decodeCode = Schema.decodeUnknownSync(AuthorizationCode.AuthorizationCode)
const decodeToken = Schema.decodeUnknownSync(Token.Token)
const decodeScope = Schema.decodeUnknownSync(Scope.ScopeSet)
const decodeSession = Schema.decodeUnknownSync(SessionStore.SessionRecord)
const decodePending = Schema.decodeUnknownSync(SessionStore.PendingRecord)
const decodeConsent = Schema.decodeUnknownSync(
  Schema.Struct({ appKey: Schema.String, scope: Scope.ScopeSet, updatedAt: Schema.Number })
)

interface ApplicationRow {
  readonly appKey: string
  readonly name: string
  readonly secretDigest: string
  readonly redirectUris: string
  readonly scopes: string
  readonly grantTypes: string
  readonly requirePkce: number
  readonly accessTokenTtl: number | null
  readonly refreshTokenTtl: number | null
  readonly createdAt: number
  readonly previousSecretDigest: string | null
  readonly previousSecretExpiresAt: number | null
  readonly previousSecretUsedAt: number | null
}

type WithScope<A> = Omit<A, "scope"> & { readonly scope: string }

const applicationColumns = `app_key AS appKey, name, secret_digest AS secretDigest,
  redirect_uris AS redirectUris, scopes, grant_types AS grantTypes, require_pkce AS requirePkce,
  access_token_ttl AS accessTokenTtl, refresh_token_ttl AS refreshTokenTtl, created_at AS createdAt,
  previous_secret_digest AS previousSecretDigest, previous_secret_expires_at AS previousSecretExpiresAt,
  previous_secret_used_at AS previousSecretUsedAt`
const userColumns = `user_id AS userId, username, password_hash AS passwordHash, created_at AS createdAt,
  disabled_at AS disabledAt`
const codeColumns = `code_hash AS codeHash, app_key AS appKey, redirect_uri AS redirectUri, user_id AS userId,
  open_id AS openId, scope, code_challenge AS codeChallenge, code_challenge_method AS codeChallengeMethod,
  family_id AS familyId, issued_at AS issuedAt, expires_at AS expiresAt, used_at AS usedAt`
const tokenColumns = `token_hash AS tokenHash, kind, app_key AS appKey, user_id AS userId, open_id AS openId,
  scope, family_id AS familyId, parent_hash AS parentHash, issued_at AS issuedAt, expires_at AS expiresAt,
  revoked_at AS revokedAt, rotated_at AS rotatedAt`
const sessionColumns = `id_hash AS idHash, user_id AS userId, username, authenticated_at AS authenticatedAt,
  expires_at AS expiresAt`
const pendingColumns = `session_hash AS sessionHash, txn, raw_query AS rawQuery, csrf_hash AS csrfHash, step,
  created_at AS createdAt, expires_at AS expiresAt`

const applicationFromRow = (row: ApplicationRow): Application.Application =>
  decodeApplication({
    ...row,
    redirectUris: JSON.parse(row.redirectUris),
    scopes: JSON.parse(row.scopes),
    grantTypes: JSON.parse(row.grantTypes),
    requirePkce: row.requirePkce === 1
  })
const sameRow = (a: ApplicationRow, b: ApplicationRow): boolean => {
  for (const k in a) if (a[k as keyof ApplicationRow] !== b[k as keyof ApplicationRow]) return false
  return true
}

/**
 * Decoded applications by App Key, reused while the stored row is unchanged: every
 * lookup still reads the row (so another process's change is seen at once), but
 * only a changed row is decoded again. Bounded; the oldest entry goes first.
 */
const applicationCache = (limit = 1000) => {
  const decoded = new Map<string, { readonly row: ApplicationRow; readonly app: Application.Application }>()
  return (row: ApplicationRow): Application.Application => {
    const hit = decoded.get(row.appKey)
    if (hit !== undefined && sameRow(hit.row, row)) return hit.app
    const app = applicationFromRow(row)
    decoded.delete(row.appKey)
    if (decoded.size >= limit) decoded.delete(decoded.keys().next().value as string)
    decoded.set(row.appKey, { row, app })
    return app
  }
}

const codeFromRow = (
  row: WithScope<AuthorizationCode.AuthorizationCode>
): AuthorizationCode.AuthorizationCode => decodeCode({ ...row, scope: JSON.parse(row.scope) })
const tokenFromRow = (row: WithScope<Token.Token>): Token.Token =>
  decodeToken({ ...row, scope: JSON.parse(row.scope) })

const tokenParams = (t: Token.Token) => [
  t.kind,
  t.tokenHash,
  t.appKey,
  t.userId,
  t.openId,
  JSON.stringify(t.scope),
  t.familyId,
  t.parentHash,
  t.issuedAt,
  t.expiresAt,
  t.revokedAt,
  t.rotatedAt
]

// SQLite reads a negative LIMIT as "no limit"; a purge is always bounded.
const bound = (limit: number): number => (limit > 0 ? Math.ceil(limit) : 0)

// How many eviction candidates past maxPendingBytes one query reads.
const evictionBatch = 16

/**
 * Prepare every statement once and build the stores over `db`; every write goes through `writer`.
 * The session store keeps `limits`.
 */
export const make = (
  db: BetterSqlite3.Database,
  writer: Writer,
  limits: SessionStore.SessionLimits
): Context.Context<Stores.Stores> => {
  const { write } = writer
  const cachedApplication = applicationCache()
  const q = {
    findThrottle: db.prepare(
      "SELECT failures, last_failure AS lastFailure, locked_until AS lockedUntil FROM throttle WHERE key = ?"
    ),
    putThrottle: db.prepare(`INSERT INTO throttle (key, failures, last_failure, locked_until)
      VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET failures = excluded.failures,
      last_failure = excluded.last_failure, locked_until = excluded.locked_until`),
    deleteThrottle: db.prepare("DELETE FROM throttle WHERE key = ?"),
    purgeThrottle: db.prepare(`DELETE FROM throttle WHERE key IN (SELECT key FROM throttle
      WHERE last_failure <= ? AND locked_until <= ? LIMIT ?)`),
    insertApp: db.prepare(`INSERT INTO applications (app_key, name, secret_digest, redirect_uris, scopes,
      grant_types, require_pkce, access_token_ttl, refresh_token_ttl, created_at, previous_secret_digest,
      previous_secret_expires_at, previous_secret_used_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (app_key) DO NOTHING`),
    findApp: db.prepare(`SELECT ${applicationColumns} FROM applications WHERE app_key = ?`),
    listApps: db.prepare(`SELECT ${applicationColumns} FROM applications ORDER BY created_at, rowid`),
    // The right-hand sides read the row as it was: the digest replaced becomes the previous one
    updateSecret: db.prepare(`UPDATE applications SET secret_digest = @digest,
      previous_secret_digest = CASE WHEN @until IS NULL THEN NULL ELSE secret_digest END,
      previous_secret_expires_at = @until, previous_secret_used_at = NULL
      WHERE app_key = @appKey`),
    markPreviousUsed: db.prepare(`UPDATE applications SET previous_secret_used_at = ?
      WHERE app_key = ? AND previous_secret_digest = ? AND previous_secret_used_at IS NULL`),
    // A change left out (NULL) keeps the column; a TTL may be set to NULL, so it has its own flag.
    updateApp: db.prepare(`UPDATE applications SET name = coalesce(@name, name),
      redirect_uris = coalesce(@redirectUris, redirect_uris), scopes = coalesce(@scopes, scopes),
      grant_types = coalesce(@grantTypes, grant_types), require_pkce = coalesce(@requirePkce, require_pkce),
      access_token_ttl = CASE WHEN @setAccessTokenTtl THEN @accessTokenTtl ELSE access_token_ttl END,
      refresh_token_ttl = CASE WHEN @setRefreshTokenTtl THEN @refreshTokenTtl ELSE refresh_token_ttl END
      WHERE app_key = @appKey RETURNING ${applicationColumns}`),
    deleteApp: db.prepare("DELETE FROM applications WHERE app_key = ?"),
    revokeByApp: db.prepare("UPDATE tokens SET revoked_at = ? WHERE app_key = ? AND revoked_at IS NULL"),

    insertUser: db.prepare(`INSERT INTO users (user_id, username, password_hash, created_at, disabled_at)
      VALUES (?, ?, ?, ?, ?) ON CONFLICT (username) DO NOTHING`),
    findUserByName: db.prepare(`SELECT ${userColumns} FROM users WHERE username = ?`),
    findUserById: db.prepare(`SELECT ${userColumns} FROM users WHERE user_id = ?`),
    listUsers: db.prepare(`SELECT ${userColumns} FROM users ORDER BY created_at, rowid`),
    deleteUser: db.prepare("DELETE FROM users WHERE user_id = ?"),
    setPasswordHash: db.prepare("UPDATE users SET password_hash = ? WHERE user_id = ?"),
    // Disabling an account already disabled keeps the first time.
    disableUser: db.prepare("UPDATE users SET disabled_at = coalesce(disabled_at, ?) WHERE user_id = ?"),
    enableUser: db.prepare("UPDATE users SET disabled_at = NULL WHERE user_id = ?"),
    revokeByUser: db.prepare("UPDATE tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL"),
    userActive: db.prepare("SELECT 1 FROM users WHERE user_id = ? AND disabled_at IS NULL").pluck(),
    deleteConsentsOfUser: db.prepare("DELETE FROM consents WHERE user_id = ?"),

    insertCode:
      db.prepare(`INSERT INTO authorization_codes (code_hash, app_key, redirect_uri, user_id, open_id,
      scope, code_challenge, code_challenge_method, family_id, issued_at, expires_at, used_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    findCode: db.prepare(`SELECT ${codeColumns} FROM authorization_codes WHERE code_hash = ?`),
    // D1 and D5 (docs/security.md): the conditional write decides the winner; its row state, not a timestamp, decides reuse.
    consumeCode: db.prepare(`UPDATE authorization_codes SET used_at = ?
      WHERE code_hash = ? AND used_at IS NULL AND expires_at > ? RETURNING user_id, app_key, scope`),
    codeState: db.prepare(
      "SELECT used_at AS usedAt, family_id AS familyId FROM authorization_codes WHERE code_hash = ?"
    ),
    // A code is retired by deleting it: redeemed later, it is unknown (nothing issued, nothing revoked).
    retireCodesOfUser: db.prepare("DELETE FROM authorization_codes WHERE user_id = ? AND used_at IS NULL"),
    retireCodesOfAppUser: db.prepare(
      "DELETE FROM authorization_codes WHERE user_id = ? AND app_key = ? AND used_at IS NULL"
    ),
    purgeCodes: db.prepare(`DELETE FROM authorization_codes WHERE rowid IN
      (SELECT rowid FROM authorization_codes WHERE expires_at <= ? LIMIT ?)`),

    insertToken:
      db.prepare(`INSERT INTO tokens (kind, token_hash, app_key, user_id, open_id, scope, family_id,
      parent_hash, issued_at, expires_at, revoked_at, rotated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    findToken: db.prepare(`SELECT ${tokenColumns} FROM tokens WHERE kind = ? AND token_hash = ?`),
    // The grace window is the only time rule; otherwise rotated_at IS NULL decides.
    rotateToken: db.prepare(`UPDATE tokens SET rotated_at = coalesce(rotated_at, @now)
      WHERE kind = 'refresh' AND token_hash = @hash AND revoked_at IS NULL AND expires_at > @now
        AND (rotated_at IS NULL OR (@grace > 0 AND rotated_at >= @now - @grace))
      RETURNING family_id`),
    refreshState: db.prepare(`SELECT revoked_at AS revokedAt, expires_at AS expiresAt, family_id AS familyId
      FROM tokens WHERE kind = 'refresh' AND token_hash = ?`),
    revokeFamily: db.prepare("UPDATE tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL"),
    revokeByOpenId: db.prepare(
      "UPDATE tokens SET revoked_at = ? WHERE app_key = ? AND open_id = ? AND revoked_at IS NULL"
    ),
    revokeByAppUser: db.prepare(
      "UPDATE tokens SET revoked_at = ? WHERE app_key = ? AND user_id = ? AND revoked_at IS NULL"
    ),
    revokeToken: db.prepare(
      "UPDATE tokens SET revoked_at = ? WHERE kind = ? AND token_hash = ? AND revoked_at IS NULL"
    ),
    purgeTokens: db.prepare(`DELETE FROM tokens WHERE rowid IN
      (SELECT rowid FROM tokens WHERE expires_at <= ? LIMIT ?)`),

    findConsent: db.prepare("SELECT scope FROM consents WHERE user_id = ? AND app_key = ?").pluck(),
    upsertConsent: db.prepare(`INSERT INTO consents (user_id, app_key, scope, updated_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (user_id, app_key) DO UPDATE SET scope = excluded.scope, updated_at = excluded.updated_at`),
    // In primary-key order: by App Key, BINARY collation (code units, as the memory store sorts).
    listConsents: db.prepare(`SELECT app_key AS appKey, scope, updated_at AS updatedAt FROM consents
      WHERE user_id = ? ORDER BY app_key`),
    deleteConsent: db.prepare("DELETE FROM consents WHERE user_id = ? AND app_key = ?"),

    insertOpenId: db.prepare(
      "INSERT INTO open_ids (app_key, user_id, open_id) VALUES (?, ?, ?) ON CONFLICT (app_key, user_id) DO NOTHING"
    ),
    findOpenId: db.prepare("SELECT open_id FROM open_ids WHERE app_key = ? AND user_id = ?").pluck(),
    findOpenIdUser: db
      .prepare("SELECT user_id FROM open_ids WHERE app_key = ? AND open_id = ? LIMIT 1")
      .pluck(),
    insertSetting: db.prepare(
      "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING"
    ),
    findSetting: db.prepare("SELECT value FROM settings WHERE name = ?").pluck(),

    findSession: db.prepare(`SELECT ${sessionColumns} FROM sessions WHERE id_hash = ? AND expires_at > ?`),
    // An update keeps the row (and its rowid); only an insert can take the store past maxSessions.
    updateSession: db.prepare(
      "UPDATE sessions SET user_id = ?, username = ?, authenticated_at = ?, expires_at = ? WHERE id_hash = ?"
    ),
    insertSession: db.prepare(
      "INSERT INTO sessions (id_hash, user_id, username, authenticated_at, expires_at) VALUES (?, ?, ?, ?, ?)"
    ),
    // sessions_by_user (migration 10)
    deleteSessionsOfUser: db.prepare("DELETE FROM sessions WHERE user_id = ? RETURNING id_hash").pluck(),
    countSessions: db.prepare("SELECT count(*) FROM sessions").pluck(),
    // The oldest sessions are those whose sliding lifetime ends first; the rowid breaks ties.
    evictAnonymous: db
      .prepare(`DELETE FROM sessions WHERE rowid IN (SELECT rowid FROM sessions
        WHERE user_id IS NULL AND id_hash <> ? ORDER BY expires_at, rowid LIMIT ?) RETURNING id_hash`)
      .pluck(),
    evictSignedIn: db
      .prepare(`DELETE FROM sessions WHERE rowid IN (SELECT rowid FROM sessions
        WHERE user_id IS NOT NULL AND id_hash <> ? ORDER BY expires_at, rowid LIMIT ?) RETURNING id_hash`)
      .pluck(),
    deleteSession: db.prepare("DELETE FROM sessions WHERE id_hash = ?"),
    purgeSessions: db
      .prepare(`DELETE FROM sessions WHERE rowid IN
        (SELECT rowid FROM sessions WHERE expires_at <= ? LIMIT ?) RETURNING id_hash`)
      .pluck(),

    // A txn added again moves to the end of its session (a new seq), as in the memory store.
    addPending:
      db.prepare(`INSERT INTO pending_authorizations (session_hash, txn, seq, raw_query, csrf_hash, step,
      created_at, expires_at) VALUES (@sessionHash, @txn,
        (SELECT coalesce(max(seq), 0) + 1 FROM pending_authorizations WHERE session_hash = @sessionHash),
        @rawQuery, @csrfHash, @step, @createdAt, @expiresAt)
      ON CONFLICT (session_hash, txn) DO UPDATE SET seq = excluded.seq, raw_query = excluded.raw_query,
        csrf_hash = excluded.csrf_hash, step = excluded.step, created_at = excluded.created_at,
        expires_at = excluded.expires_at`),
    trimPending: db.prepare(`DELETE FROM pending_authorizations WHERE session_hash = @sessionHash
      AND txn NOT IN (SELECT txn FROM pending_authorizations WHERE session_hash = @sessionHash
        ORDER BY created_at DESC, seq DESC LIMIT @keep)`),
    findPending: db.prepare(`SELECT ${pendingColumns} FROM pending_authorizations
      WHERE session_hash = ? AND txn = ? AND expires_at > ?`),
    takePending: db.prepare("DELETE FROM pending_authorizations WHERE session_hash = ? AND txn = ?"),
    deletePendingOf: db.prepare("DELETE FROM pending_authorizations WHERE session_hash = ?"),
    // Kept by the triggers of migration 4.
    pendingChars: db.prepare("SELECT chars FROM pending_totals WHERE id = 1").pluck(),
    // The oldest requests (pending_authorizations_by_created_at) of sessions nobody signed in to:
    // no session row, or one whose user_id is NULL.
    oldestAnonymousPending: db.prepare(`SELECT session_hash AS sessionHash, txn, length(raw_query) AS chars
      FROM pending_authorizations AS p WHERE NOT EXISTS (SELECT 1 FROM sessions
        WHERE id_hash = p.session_hash AND user_id IS NOT NULL)
      ORDER BY created_at, seq, session_hash, txn LIMIT ?`),
    oldestPending: db.prepare(`SELECT session_hash AS sessionHash, txn, length(raw_query) AS chars
      FROM pending_authorizations ORDER BY created_at, seq, session_hash, txn LIMIT ?`),
    stats: db.prepare(`SELECT (SELECT count(*) FROM sessions) AS sessions,
      (SELECT chars FROM pending_totals WHERE id = 1) AS pendingBytes`),
    purgePending: db.prepare(`DELETE FROM pending_authorizations WHERE (session_hash, txn) IN
      (SELECT session_hash, txn FROM pending_authorizations WHERE expires_at <= ? LIMIT ?)`)
  }

  // Requests pending in deleted sessions go in the same transaction (there is no foreign key, see migration 3).
  const dropPendingOf = (idHashes: ReadonlyArray<string>): number => {
    for (const idHash of idHashes) q.deletePendingOf.run(idHash)
    return idHashes.length
  }

  // Past maxPendingBytes the oldest requests go, those of anonymous sessions first: a flood of
  // anonymous requests cannot drop a signed-in user's. Candidates are read a few at a time, so
  // one add that evicts many requests does not read the whole table.
  const evictPending = (): void => {
    let excess = (q.pendingChars.get() as number) - limits.maxPendingBytes
    for (const oldest of [q.oldestAnonymousPending, q.oldestPending]) {
      while (excess > 0) {
        const rows = oldest.all(evictionBatch) as Array<{ sessionHash: string; txn: string; chars: number }>
        for (const row of rows) {
          if (excess <= 0) break
          q.takePending.run(row.sessionHash, row.txn)
          excess -= row.chars
        }
        if (rows.length < evictionBatch) break
      }
    }
  }

  // Every session of the user goes, with the requests pending in them.
  const endSessionsOf = (userId: string): void => {
    dropPendingOf(q.deleteSessionsOfUser.all(userId) as Array<string>)
  }

  // D13 (docs/security.md): read inside the write's BEGIN IMMEDIATE transaction, so a disable or
  // delete either committed before (and refuses the write) or runs after it (and revokes its tokens).
  // D15: the consent a code or implicit token is issued under, read in the same transaction, so a
  // withdrawal either committed before (and refuses the write) or runs after it (and revokes it).
  const insertTokens = (tokens: ReadonlyArray<Token.Token>, under?: ConsentStore.Under): void => {
    const refused =
      UserStore.refusal(tokens, (userId) => q.userActive.get(userId) !== undefined) ??
      (under === undefined ? undefined : ConsentStore.refusal(under, findConsent(under.userId, under.appKey)))
    if (refused !== undefined) refuse(refused)
    for (const t of tokens) q.insertToken.run(tokenParams(t))
  }

  const findConsent = (userId: string, appKey: string): Scope.ScopeSet | undefined => {
    const found = q.findConsent.get(userId, appKey) as string | undefined
    return found === undefined ? undefined : decodeScope(JSON.parse(found))
  }

  // Each runs inside the writer's transaction (better-sqlite3 nests them as savepoints).
  const tx = {
    removeApp: db.transaction((appKey: string, now: number): boolean => {
      q.revokeByApp.run(now, appKey)
      return q.deleteApp.run(appKey).changes > 0
    }),
    removeUser: db.transaction((userId: string, now: number): boolean => {
      q.revokeByUser.run(now, userId)
      q.retireCodesOfUser.run(userId)
      q.deleteConsentsOfUser.run(userId)
      if (q.deleteUser.run(userId).changes === 0) return false
      endSessionsOf(userId)
      return true
    }),
    // A user's tokens are revoked and sessions ended in the transaction that disables the account.
    setDisabled: db.transaction((userId: string, disabled: boolean, now: number): boolean => {
      if (!disabled) return q.enableUser.run(userId).changes > 0
      if (q.disableUser.run(now, userId).changes === 0) return false
      q.revokeByUser.run(now, userId)
      q.retireCodesOfUser.run(userId)
      endSessionsOf(userId)
      return true
    }),
    // ASVS V3.3.3: the user's sessions end in the transaction that sets the new password, unless kept.
    setPasswordHash: db.transaction(
      (userId: string, passwordHash: string, keepSessions: boolean): boolean => {
        if (q.setPasswordHash.run(passwordHash, userId).changes === 0) return false
        if (!keepSessions) endSessionsOf(userId)
        return true
      }
    ),
    // The application's tokens of the user are revoked, and its unused codes for the user retired,
    // in the transaction that forgets the consent.
    withdrawConsent: db.transaction((userId: string, appKey: string, now: number): boolean => {
      if (q.deleteConsent.run(userId, appKey).changes === 0) return false
      q.retireCodesOfAppUser.run(userId, appKey)
      q.revokeByAppUser.run(now, appKey, userId)
      return true
    }),
    redeem: db.transaction((codeHash: string, now: number, tokens: ReadonlyArray<Token.Token>): void => {
      const code = q.consumeCode.get(now, codeHash, now) as
        | { user_id: string; app_key: string; scope: string }
        | undefined
      if (code === undefined) {
        const state = q.codeState.get(codeHash) as { usedAt: number | null; familyId: string } | undefined
        if (state === undefined || state.usedAt === null) refuse(new CodeStore.CodeNotFound())
        else refuse(new CodeStore.CodeAlreadyUsed({ familyId: state.familyId }))
        return
      }
      // The tokens are saved in the transaction that consumes the code, under the code's consent.
      const scope = decodeScope(JSON.parse(code.scope))
      insertTokens(tokens, { userId: code.user_id, appKey: code.app_key, scope })
    }),
    rotate: db.transaction(
      (hash: string, now: number, grace: number, tokens: ReadonlyArray<Token.Token>): void => {
        if (q.rotateToken.get({ hash, now, grace }) === undefined) {
          const state = q.refreshState.get(hash) as
            | { revokedAt: number | null; expiresAt: number; familyId: string }
            | undefined
          if (state === undefined || state.revokedAt !== null || state.expiresAt <= now) {
            refuse(new TokenStore.TokenInactive())
          } else refuse(new TokenStore.RefreshAlreadyRotated({ familyId: state.familyId }))
        }
        insertTokens(tokens)
      }
    ),
    grantConsent: db.transaction(
      (userId: string, appKey: string, scope: Scope.ScopeSet, now: number): void => {
        const found = q.findConsent.get(userId, appKey) as string | undefined
        const merged = found === undefined ? scope : Scope.union(decodeScope(JSON.parse(found)), scope)
        q.upsertConsent.run(userId, appKey, JSON.stringify(merged), now)
      }
    ),
    openId: db.transaction((appKey: string, userId: string, candidate: string): string => {
      q.insertOpenId.run(appKey, userId, candidate)
      return q.findOpenId.get(appKey, userId) as string
    }),
    setting: db.transaction((name: string, candidate: string): string => {
      q.insertSetting.run(name, candidate)
      return q.findSetting.get(name) as string
    }),
    // Past maxSessions the oldest anonymous sessions go first, then the one being saved if it is
    // anonymous, and signed-in sessions only when no anonymous one is left: a flood of anonymous
    // sessions cannot sign anybody out (the order of the memory store).
    saveSession: db.transaction((s: SessionStore.SessionRecord): void => {
      if (q.updateSession.run(s.userId, s.username, s.authenticatedAt, s.expiresAt, s.idHash).changes > 0)
        return
      q.insertSession.run(s.idHash, s.userId, s.username, s.authenticatedAt, s.expiresAt)
      let excess = (q.countSessions.get() as number) - limits.maxSessions
      if (excess <= 0) return
      excess -= dropPendingOf(q.evictAnonymous.all(s.idHash, excess) as Array<string>)
      if (excess > 0 && s.userId === null) {
        q.deleteSession.run(s.idHash)
        excess -= dropPendingOf([s.idHash])
      }
      if (excess > 0) dropPendingOf(q.evictSignedIn.all(s.idHash, excess) as Array<string>)
    }),
    // D16 (docs/security.md): the user is read in the transaction (one writer) that stores the
    // session, so a disable, delete or new password either committed before it or ends the session.
    signIn: db.transaction((s: SessionStore.SessionRecord, checked: SessionStore.SignedInAs): boolean => {
      const row = q.findUserById.get(checked.userId)
      if (!SessionStore.stillAsChecked(checked, row === undefined ? undefined : decodeUser(row))) return false
      tx.saveSession(s)
      return true
    }),
    removeSession: db.transaction((idHash: string): void => {
      q.deletePendingOf.run(idHash)
      q.deleteSession.run(idHash)
    }),
    addPending: db.transaction((p: SessionStore.PendingRecord): void => {
      q.addPending.run({
        sessionHash: p.sessionHash,
        txn: p.txn,
        rawQuery: p.rawQuery,
        csrfHash: p.csrfHash,
        step: p.step,
        createdAt: p.createdAt,
        expiresAt: p.expiresAt
      })
      q.trimPending.run({ sessionHash: p.sessionHash, keep: limits.maxPending })
      evictPending()
    }),
    purgeSessions: db.transaction((now: number, limit: number): number => {
      const sessions = dropPendingOf(q.purgeSessions.all(now, bound(limit)) as Array<string>)
      return sessions + q.purgePending.run(now, bound(limit)).changes
    })
  }

  // Throttle entries of `keys`, in order; written back inside the same write transaction.
  const readThrottle = (keys: ReadonlyArray<Throttle.Key>) =>
    keys.map((k) => q.findThrottle.get(k.key) as Throttle.Entry | undefined)
  const writeThrottle = (keys: ReadonlyArray<Throttle.Key>, next: ReadonlyArray<Throttle.Entry | null>) =>
    keys.forEach((k, i) => {
      const e = next[i] ?? null
      if (e === null) q.deleteThrottle.run(k.key)
      else q.putThrottle.run(k.key, e.failures, e.lastFailure, e.lockedUntil)
    })
  const throttle: Throttle.ThrottleStore["Type"] = {
    lockedFor: (keys, now) => attempt(() => Throttle.lockWait(keys, readThrottle(keys), now)),
    fail: (keys, now, policy) =>
      write(() => {
        const { next, started } = Throttle.countFailure(keys, readThrottle(keys), now, policy)
        writeThrottle(keys, next)
        return started
      }),
    // The read and the write are one transaction: attempts from every process are all counted.
    reserve: (keys, now, policy) =>
      write(() => {
        const { reservation, next } = Throttle.reserveAttempt(keys, readThrottle(keys), now, policy)
        if (next !== null) writeThrottle(keys, next)
        return reservation
      }),
    settle: (keys, policy) =>
      write(() => {
        const prev = readThrottle(keys)
        writeThrottle(
          keys,
          keys.map((k, i) => Throttle.afterSuccess(prev[i], k, policy))
        )
      }),
    purgeExpired: (now, window, limit) =>
      write(() => q.purgeThrottle.run(now - window, now, bound(limit)).changes)
  }

  return Context.make(ApplicationStore.ApplicationStore, {
    insert: (app) =>
      Effect.flatMap(
        write(
          () =>
            q.insertApp.run(
              app.appKey,
              app.name,
              app.secretDigest,
              JSON.stringify(app.redirectUris),
              JSON.stringify(app.scopes),
              JSON.stringify(app.grantTypes),
              app.requirePkce ? 1 : 0,
              app.accessTokenTtl,
              app.refreshTokenTtl,
              app.createdAt,
              app.previousSecretDigest ?? null,
              app.previousSecretExpiresAt ?? null,
              app.previousSecretUsedAt ?? null
            ).changes
        ),
        (changes) =>
          changes === 1 ? Effect.void : Effect.fail(new ApplicationStore.AppKeyTaken({ appKey: app.appKey }))
      ),
    find: (appKey) =>
      attempt(() => {
        const row = q.findApp.get(appKey) as ApplicationRow | undefined
        return row === undefined ? Option.none() : Option.some(cachedApplication(row))
      }),
    list: () => attempt(() => (q.listApps.all() as Array<ApplicationRow>).map(applicationFromRow)),
    updateSecret: (appKey, secretDigest, keepPreviousUntil) =>
      write(() => q.updateSecret.run({ digest: secretDigest, until: keepPreviousUntil, appKey }).changes > 0),
    markPreviousSecretUsed: (appKey, previousSecretDigest, now) =>
      write<void, ApplicationStore.PreviousSecretMarked>(() => {
        // Refused, nothing written (the audit event attached to this write included)
        if (q.markPreviousUsed.run(now, appKey, previousSecretDigest).changes === 0)
          refuse(new ApplicationStore.PreviousSecretMarked({ appKey }))
      }),
    // Decoded inside the write: a row the schema refuses rolls the change back.
    update: (appKey, changes) =>
      write(() => {
        const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value))
        const row = q.updateApp.get({
          appKey,
          name: changes.name ?? null,
          redirectUris: json(changes.redirectUris),
          scopes: json(changes.scopes),
          grantTypes: json(changes.grantTypes),
          requirePkce: changes.requirePkce === undefined ? null : changes.requirePkce ? 1 : 0,
          setAccessTokenTtl: changes.accessTokenTtl === undefined ? 0 : 1,
          accessTokenTtl: changes.accessTokenTtl ?? null,
          setRefreshTokenTtl: changes.refreshTokenTtl === undefined ? 0 : 1,
          refreshTokenTtl: changes.refreshTokenTtl ?? null
        }) as ApplicationRow | undefined
        return row === undefined ? Option.none() : Option.some(cachedApplication(row))
      }),
    remove: (appKey, now) => write(() => tx.removeApp(appKey, now))
  }).pipe(
    Context.add(UserStore.UserStore, {
      insert: (user) =>
        Effect.flatMap(
          write(
            () =>
              q.insertUser.run(
                user.userId,
                user.username,
                user.passwordHash,
                user.createdAt,
                user.disabledAt ?? null
              ).changes
          ),
          (changes) =>
            changes === 1
              ? Effect.void
              : Effect.fail(new UserStore.UsernameTaken({ username: user.username }))
        ),
      findByUsername: (username) =>
        attempt(() => {
          const row = q.findUserByName.get(username)
          return row === undefined ? Option.none() : Option.some(decodeUser(row))
        }),
      findById: (userId) =>
        attempt(() => {
          const row = q.findUserById.get(userId)
          return row === undefined ? Option.none() : Option.some(decodeUser(row))
        }),
      list: () => attempt(() => q.listUsers.all().map((row) => decodeUser(row))),
      setPasswordHash: (userId, passwordHash, options) =>
        write(() => tx.setPasswordHash(userId, passwordHash, options?.keepSessions === true)),
      setDisabled: (userId, disabled, now) => write(() => tx.setDisabled(userId, disabled, now)),
      remove: (userId, now) => write(() => tx.removeUser(userId, now))
    }),
    Context.add(CodeStore.CodeStore, {
      insert: (c) =>
        write(() => {
          q.insertCode.run(
            c.codeHash,
            c.appKey,
            c.redirectUri,
            c.userId,
            c.openId,
            JSON.stringify(c.scope),
            c.codeChallenge,
            c.codeChallengeMethod,
            c.familyId,
            c.issuedAt,
            c.expiresAt,
            c.usedAt
          )
        }),
      find: (codeHash) =>
        attempt(() => {
          const row = q.findCode.get(codeHash) as WithScope<AuthorizationCode.AuthorizationCode> | undefined
          return row === undefined ? Option.none() : Option.some(codeFromRow(row))
        }),
      redeem: (codeHash, now, tokens) =>
        write<
          void,
          | CodeStore.CodeNotFound
          | CodeStore.CodeAlreadyUsed
          | UserStore.UserInactive
          | ConsentStore.ConsentWithdrawn
        >(() => tx.redeem(codeHash, now, tokens)),
      purgeExpired: (now, limit) => write(() => q.purgeCodes.run(now, bound(limit)).changes)
    }),
    Context.add(TokenStore.TokenStore, {
      insert: (tokens) => write<void, UserStore.UserInactive>(() => insertTokens(tokens)),
      insertUnderConsent: (tokens, under) =>
        write<void, UserStore.UserInactive | ConsentStore.ConsentWithdrawn>(() =>
          insertTokens(tokens, under)
        ),
      find: (kind, tokenHash) =>
        attempt(() => {
          const row = q.findToken.get(kind, tokenHash) as WithScope<Token.Token> | undefined
          return row === undefined ? Option.none() : Option.some(tokenFromRow(row))
        }),
      rotate: (refreshHash, now, grace, tokens) =>
        write<void, TokenStore.TokenInactive | TokenStore.RefreshAlreadyRotated | UserStore.UserInactive>(
          () => tx.rotate(refreshHash, now, grace, tokens)
        ),
      // Committed before the caller fails the request.
      revokeFamily: (familyId, now) => write(() => q.revokeFamily.run(now, familyId).changes),
      revokeSubject: (subject, now) =>
        write(() =>
          "openId" in subject
            ? q.revokeByOpenId.run(now, subject.appKey, subject.openId).changes
            : q.revokeByAppUser.run(now, subject.appKey, subject.userId).changes
        ),
      revoke: (kind, tokenHash, now) => write(() => q.revokeToken.run(now, kind, tokenHash).changes > 0),
      purgeExpired: (now, limit) => write(() => q.purgeTokens.run(now, bound(limit)).changes)
    }),
    Context.add(ConsentStore.ConsentStore, {
      find: (userId, appKey) => attempt(() => Option.fromNullable(findConsent(userId, appKey))),
      grant: (userId, appKey, scope, now) => write(() => tx.grantConsent(userId, appKey, scope, now)),
      list: (userId) =>
        attempt(() =>
          (q.listConsents.all(userId) as Array<{ appKey: string; scope: string; updatedAt: number }>).map(
            (row) => decodeConsent({ ...row, scope: JSON.parse(row.scope) })
          )
        ),
      withdraw: (userId, appKey, now) => write(() => tx.withdrawConsent(userId, appKey, now))
    }),
    Context.add(OpenIdStore.OpenIdStore, {
      getOrCreate: (appKey, userId, candidate) => write(() => tx.openId(appKey, userId, candidate)),
      findUser: (appKey, openId) =>
        attempt(() => Option.fromNullable(q.findOpenIdUser.get(appKey, openId) as string | undefined))
    }),
    Context.add(SettingStore.SettingStore, {
      getOrCreate: (name, candidate) => write(() => tx.setting(name, candidate))
    }),
    Context.add(SessionStore.SessionStore, {
      find: (idHash, now) =>
        attempt(() => {
          const row = q.findSession.get(idHash, now)
          return row === undefined ? Option.none() : Option.some(decodeSession(row))
        }),
      save: (session) => write(() => tx.saveSession(session)),
      signIn: (session, checked) => write(() => tx.signIn(session, checked)),
      // One conditional update: a session deleted since it was read stays deleted.
      renew: (s) =>
        write(
          () =>
            q.updateSession.run(s.userId, s.username, s.authenticatedAt, s.expiresAt, s.idHash).changes > 0
        ),
      remove: (idHash) => write(() => tx.removeSession(idHash)),
      addPending: (pending) => write(() => tx.addPending(pending)),
      findPending: (sessionHash, txn, now) =>
        attempt(() => {
          const row = q.findPending.get(sessionHash, txn, now)
          return row === undefined ? Option.none() : Option.some(decodePending(row))
        }),
      // One conditional delete: of any number of racing callers, one sees changes === 1.
      takePending: (sessionHash, txn) => write(() => q.takePending.run(sessionHash, txn).changes === 1),
      purgeExpired: (now, limit) => write(() => tx.purgeSessions(now, limit)),
      // One statement: the count and the total are of the same snapshot.
      stats: () =>
        attempt(() => {
          const row = q.stats.get() as { sessions: number; pendingBytes: number }
          return { sessions: row.sessions, pendingBytes: row.pendingBytes }
        })
    }),
    Context.add(Throttle.ThrottleStore, throttle)
  )
}
