/**
 * The store services over one pool. Every read-modify-write is one transaction; single use
 * (a code's redemption, a refresh token's rotation, a pending request's take) is decided by one
 * conditional statement, so it holds across every instance on the database at any isolation level.
 */
import {
  ApplicationStore,
  CodeStore,
  ConsentStore,
  OpenIdStore,
  Scope,
  SessionStore,
  SettingStore,
  type StorageError,
  type Stores,
  Throttle,
  TokenStore,
  UserStore
} from "@latchkey/core"
import { Context, Effect, Option } from "effect"
import { attemptSync, type Database, type Tx } from "./database.js"
import * as Rows from "./rows.js"
import { consentRefusal, insertTokens, lockUsers, retireCodesOfUser } from "./tokenWrites.js"

// A purge is always bounded; LIMIT 0 deletes nothing.
const bound = (limit: number): number => (limit > 0 ? Math.min(Math.ceil(limit), Number.MAX_SAFE_INTEGER) : 0)

// How many eviction candidates past maxPendingBytes one query reads.
const evictionBatch = 16

// The advisory lock every session write that may evict holds (see Database.TransactionOptions.locks).
const sessionLock = ["sessions"]

const changed = (r: { readonly rowCount: number | null }): number => r.rowCount ?? 0

// A session's columns in the order of updateSessionSql and the session insert.
const sessionParams = (s: SessionStore.SessionRecord): ReadonlyArray<unknown> => [
  s.idHash,
  s.userId,
  s.username,
  s.authenticatedAt,
  s.expiresAt
]
const updateSessionSql =
  "UPDATE sessions SET user_id = $2, username = $3, authenticated_at = $4, expires_at = $5 WHERE id_hash = $1"

/** The SET assignments of `ApplicationStore.update` (parameters from $2) and their values. */
const applicationChanges = (
  changes: ApplicationStore.ApplicationChanges
): { readonly set: ReadonlyArray<string>; readonly values: ReadonlyArray<unknown> } => {
  const set: Array<string> = []
  const values: Array<unknown> = []
  const assign = (column: string, cast: string, value: unknown) => {
    if (value === undefined) return
    values.push(value)
    set.push(`${column} = $${values.length + 1}${cast}`)
  }
  const asJson = (value: unknown) => (value === undefined ? undefined : JSON.stringify(value))
  assign("name", "", changes.name)
  assign("redirect_uris", "::jsonb", asJson(changes.redirectUris))
  assign("scopes", "::jsonb", asJson(changes.scopes))
  assign("grant_types", "::jsonb", asJson(changes.grantTypes))
  assign("require_pkce", "::boolean", changes.requirePkce)
  assign("access_token_ttl", "::bigint", changes.accessTokenTtl)
  assign("refresh_token_ttl", "::bigint", changes.refreshTokenTtl)
  return { set, values }
}

/** Build the stores over `db`; the session store keeps `limits`. */
export const make = (db: Database, limits: SessionStore.SessionLimits): Context.Context<Stores.Stores> => {
  const decodeAll = <A>(
    rows: ReadonlyArray<Record<string, unknown>>,
    decode: (row: Record<string, unknown>) => A
  ) => attemptSync(() => rows.map(decode))
  const first = <A>(
    rows: ReadonlyArray<Record<string, unknown>>,
    decode: (row: Record<string, unknown>) => A
  ): Effect.Effect<Option.Option<A>, StorageError.StorageError> =>
    attemptSync(() => {
      const row = rows[0]
      return row === undefined ? Option.none() : Option.some(decode(row))
    })

  // Requests pending in deleted sessions go in the same transaction (there is no foreign key).
  const dropPendingOf = (tx: Tx, idHashes: ReadonlyArray<string>) =>
    idHashes.length === 0
      ? Effect.succeed(0)
      : Effect.as(
          tx.query("DELETE FROM pending_authorizations WHERE session_hash = ANY($1::text[])", [idHashes]),
          idHashes.length
        )
  const idHashes = (r: { readonly rows: ReadonlyArray<Record<string, unknown>> }) =>
    r.rows.map((row) => String(row.id_hash))
  // Every session of the user goes, with the requests pending in them (sessions_by_user).
  const endSessionsOf = (tx: Tx, userId: string) =>
    Effect.flatMap(tx.query("DELETE FROM sessions WHERE user_id = $1 RETURNING id_hash", [userId]), (r) =>
      dropPendingOf(tx, idHashes(r))
    )

  // Past maxSessions the oldest anonymous sessions go first, then the one being saved if it is
  // anonymous, and signed-in sessions only when no anonymous one is left: a flood of anonymous
  // sessions cannot sign anybody out (the order of the memory store).
  const insertSession = (tx: Tx, s: SessionStore.SessionRecord) =>
    Effect.gen(function* () {
      const updated = yield* tx.query(updateSessionSql, sessionParams(s))
      if (changed(updated) > 0) return
      yield* tx.query(
        `INSERT INTO sessions (id_hash, user_id, username, authenticated_at, expires_at)
          VALUES ($1, $2, $3, $4, $5)`,
        sessionParams(s)
      )
      const counted = yield* tx.query("SELECT count(*) AS n FROM sessions")
      let excess = (yield* attemptSync(() => Rows.count(counted.rows[0]?.n))) - limits.maxSessions
      if (excess <= 0) return
      const evict = (anonymous: boolean, n: number) =>
        tx.query(
          `DELETE FROM sessions WHERE id_hash IN (SELECT id_hash FROM sessions
            WHERE user_id IS ${anonymous ? "" : "NOT "}NULL AND id_hash <> $1 ORDER BY expires_at, seq LIMIT $2)
            RETURNING id_hash`,
          [s.idHash, n]
        )
      excess -= yield* dropPendingOf(tx, idHashes(yield* evict(true, excess)))
      if (excess > 0 && s.userId === null) {
        yield* tx.query("DELETE FROM sessions WHERE id_hash = $1", [s.idHash])
        excess -= yield* dropPendingOf(tx, [s.idHash])
      }
      if (excess > 0) yield* dropPendingOf(tx, idHashes(yield* evict(false, excess)))
    })

  // D16 (docs/security.md): the user's row locked FOR SHARE first, as token writes lock it (lockUsers):
  // a disable, delete or new password (each changes that row first) either committed before, and the
  // lock reads the row as it left it, or waits for this write to commit and then ends its session.
  const signIn = (tx: Tx, s: SessionStore.SessionRecord, checked: SessionStore.SignedInAs) =>
    Effect.gen(function* () {
      const found = yield* tx.query(`SELECT ${Rows.userColumns} FROM users WHERE user_id = $1 FOR SHARE`, [
        checked.userId
      ])
      const user = yield* first(found.rows, Rows.user)
      if (!SessionStore.stillAsChecked(checked, Option.getOrUndefined(user))) return false
      yield* insertSession(tx, s)
      return true
    })

  // Past maxPendingBytes the oldest requests go, those of anonymous sessions first: a flood of
  // anonymous requests cannot drop a signed-in user's. Candidates are read a few at a time, so
  // one add that evicts many requests does not read the whole table.
  const evictPending = (tx: Tx) =>
    Effect.gen(function* () {
      const total = yield* tx.query("SELECT chars FROM pending_totals WHERE id = 1")
      let excess = (yield* attemptSync(() => Rows.count(total.rows[0]?.chars))) - limits.maxPendingBytes
      // Sessions nobody signed in to: no session row, or one whose user_id is NULL.
      for (const anonymousOnly of [true, false]) {
        while (excess > 0) {
          const found = yield* tx.query(
            `SELECT session_hash, txn, length(raw_query) AS chars FROM pending_authorizations AS p
              ${anonymousOnly ? "WHERE NOT EXISTS (SELECT 1 FROM sessions WHERE id_hash = p.session_hash AND user_id IS NOT NULL)" : ""}
              ORDER BY created_at, seq, session_hash, txn LIMIT $1`,
            [evictionBatch]
          )
          for (const row of found.rows) {
            if (excess <= 0) break
            yield* tx.query("DELETE FROM pending_authorizations WHERE session_hash = $1 AND txn = $2", [
              row.session_hash,
              row.txn
            ])
            excess -= yield* attemptSync(() => Rows.count(row.chars))
          }
          if (found.rows.length < evictionBatch) break
        }
      }
    })

  // Throttle entries of `keys`, in order (a key given twice reads the same entry).
  const readThrottle = (
    q: Pick<Tx, "query">,
    keys: ReadonlyArray<Throttle.Key>
  ): Effect.Effect<ReadonlyArray<Throttle.Entry | undefined>, StorageError.StorageError> =>
    Effect.flatMap(
      q.query(`SELECT ${Rows.throttleColumns} FROM throttle WHERE key = ANY($1::text[])`, [
        keys.map((k) => k.key)
      ]),
      (r) =>
        attemptSync(() => {
          const found = new Map(r.rows.map((row) => [String(row.key), Rows.throttleEntry(row)]))
          return keys.map((k) => found.get(k.key))
        })
    )
  // The new entries of `keys` (null: delete); of a key given twice the last one counts.
  const writeThrottle = (
    tx: Tx,
    keys: ReadonlyArray<Throttle.Key>,
    next: ReadonlyArray<Throttle.Entry | null>
  ) =>
    Effect.gen(function* () {
      const last = new Map<string, Throttle.Entry | null>()
      keys.forEach((k, i) => {
        last.delete(k.key)
        last.set(k.key, next[i] ?? null)
      })
      const put = [...last].flatMap(([key, e]) => (e === null ? [] : [{ key, ...e }]))
      const drop = [...last].flatMap(([key, e]) => (e === null ? [key] : []))
      if (put.length > 0) {
        yield* tx.query(
          `INSERT INTO throttle (key, failures, last_failure, locked_until)
            SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[])
            ON CONFLICT (key) DO UPDATE SET failures = excluded.failures,
              last_failure = excluded.last_failure, locked_until = excluded.locked_until`,
          [
            put.map((e) => e.key),
            put.map((e) => e.failures),
            put.map((e) => e.lastFailure),
            put.map((e) => e.lockedUntil)
          ]
        )
      }
      if (drop.length > 0) yield* tx.query("DELETE FROM throttle WHERE key = ANY($1::text[])", [drop])
    })
  // Read, compute with the core's rules and write back in one transaction, holding the keys'
  // advisory locks: attempts on the same keys from every instance queue and are all counted.
  const throttled = <A>(
    keys: ReadonlyArray<Throttle.Key>,
    step: (entries: ReadonlyArray<Throttle.Entry | undefined>) => {
      readonly result: A
      readonly next: ReadonlyArray<Throttle.Entry | null> | null
    }
  ) =>
    db.transaction(
      (tx) =>
        Effect.gen(function* () {
          const { result, next } = step(yield* readThrottle(tx, keys))
          if (next !== null) yield* writeThrottle(tx, keys, next)
          return result
        }),
      { locks: keys.map((k) => `throttle:${k.key}`) }
    )

  return Context.make(ApplicationStore.ApplicationStore, {
    insert: (app) =>
      Effect.flatMap(
        db.write(
          `INSERT INTO applications (app_key, name, secret_digest, redirect_uris, scopes, grant_types,
            require_pkce, access_token_ttl, refresh_token_ttl, created_at, previous_secret_digest,
            previous_secret_expires_at, previous_secret_used_at)
            VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6::jsonb, $7, $8, $9, $10, $11, $12, $13)
            ON CONFLICT (app_key) DO NOTHING`,
          [
            app.appKey,
            app.name,
            app.secretDigest,
            JSON.stringify(app.redirectUris),
            JSON.stringify(app.scopes),
            JSON.stringify(app.grantTypes),
            app.requirePkce,
            app.accessTokenTtl,
            app.refreshTokenTtl,
            app.createdAt,
            app.previousSecretDigest ?? null,
            app.previousSecretExpiresAt ?? null,
            app.previousSecretUsedAt ?? null
          ]
        ),
        (r) =>
          changed(r) === 1
            ? Effect.void
            : Effect.fail(new ApplicationStore.AppKeyTaken({ appKey: app.appKey }))
      ),
    find: (appKey) =>
      Effect.flatMap(
        db.lookup(`SELECT ${Rows.applicationColumns} FROM applications WHERE app_key = $1`, [appKey]),
        (r) => first(r.rows, Rows.application)
      ),
    list: () =>
      Effect.flatMap(
        db.query(`SELECT ${Rows.applicationColumns} FROM applications ORDER BY created_at, seq`),
        (r) => decodeAll(r.rows, Rows.application)
      ),
    // The right-hand sides read the row as it was: the digest replaced becomes the previous one.
    updateSecret: (appKey, secretDigest, keepPreviousUntil) =>
      Effect.map(
        db.write(
          `UPDATE applications SET secret_digest = $2,
            previous_secret_digest = CASE WHEN $3::bigint IS NULL THEN NULL ELSE secret_digest END,
            previous_secret_expires_at = $3::bigint, previous_secret_used_at = NULL
            WHERE app_key = $1`,
          [appKey, secretDigest, keepPreviousUntil]
        ),
        (r) => changed(r) > 0
      ),
    // One conditional write: of concurrent callers exactly one changes the row. Refused, the
    // transaction rolls back, with the audit event attached to it.
    markPreviousSecretUsed: (appKey, previousSecretDigest, now) =>
      db.transaction((tx) =>
        Effect.flatMap(
          tx.query(
            `UPDATE applications SET previous_secret_used_at = $3
              WHERE app_key = $1 AND previous_secret_digest = $2 AND previous_secret_used_at IS NULL`,
            [appKey, previousSecretDigest, now]
          ),
          (r) =>
            changed(r) === 0
              ? Effect.fail(new ApplicationStore.PreviousSecretMarked({ appKey }))
              : Effect.void
        )
      ),
    // One UPDATE of the fields given; with none, a read (in a transaction, for attached events).
    update: (appKey, changes) => {
      const { set, values } = applicationChanges(changes)
      return Effect.flatMap(
        set.length === 0
          ? db.transaction((tx) =>
              tx.query(`SELECT ${Rows.applicationColumns} FROM applications WHERE app_key = $1`, [appKey])
            )
          : db.write(
              `UPDATE applications SET ${set.join(", ")} WHERE app_key = $1 RETURNING ${Rows.applicationColumns}`,
              [appKey, ...values]
            ),
        (r) => first(r.rows, Rows.application)
      )
    },
    remove: (appKey, now) =>
      db.transaction((tx) =>
        Effect.zipRight(
          tx.query("UPDATE tokens SET revoked_at = $2 WHERE app_key = $1 AND revoked_at IS NULL", [
            appKey,
            now
          ]),
          Effect.map(tx.query("DELETE FROM applications WHERE app_key = $1", [appKey]), (r) => changed(r) > 0)
        )
      )
  }).pipe(
    Context.add(UserStore.UserStore, {
      insert: (u) =>
        Effect.flatMap(
          db.write(
            `INSERT INTO users (user_id, username, password_hash, created_at, disabled_at)
              VALUES ($1, $2, $3, $4, $5) ON CONFLICT (username) DO NOTHING`,
            [u.userId, u.username, u.passwordHash, u.createdAt, u.disabledAt ?? null]
          ),
          (r) =>
            changed(r) === 1
              ? Effect.void
              : Effect.fail(new UserStore.UsernameTaken({ username: u.username }))
        ),
      findByUsername: (username) =>
        Effect.flatMap(
          db.lookup(`SELECT ${Rows.userColumns} FROM users WHERE username = $1`, [username]),
          (r) => first(r.rows, Rows.user)
        ),
      findById: (userId) =>
        Effect.flatMap(db.lookup(`SELECT ${Rows.userColumns} FROM users WHERE user_id = $1`, [userId]), (r) =>
          first(r.rows, Rows.user)
        ),
      list: () =>
        Effect.flatMap(db.query(`SELECT ${Rows.userColumns} FROM users ORDER BY created_at, seq`), (r) =>
          decodeAll(r.rows, Rows.user)
        ),
      // ASVS V3.3.3: the user's sessions end in the transaction that sets the new password, unless kept.
      setPasswordHash: (userId, passwordHash, options) =>
        db.transaction((tx) =>
          Effect.gen(function* () {
            const set = yield* tx.query("UPDATE users SET password_hash = $2 WHERE user_id = $1", [
              userId,
              passwordHash
            ])
            if (changed(set) === 0) return false
            if (options?.keepSessions !== true) yield* endSessionsOf(tx, userId)
            return true
          })
        ),
      // Disabling locks the user's row first (lockUsers), keeps the first disabled_at, retires the
      // unused codes, revokes and ends the user's sessions in the same transaction; enabling is one
      // statement and brings nothing back.
      setDisabled: (userId, disabled, now) =>
        disabled
          ? db.transaction((tx) =>
              Effect.gen(function* () {
                const marked = yield* tx.query(
                  "UPDATE users SET disabled_at = coalesce(disabled_at, $2::bigint) WHERE user_id = $1",
                  [userId, now]
                )
                if (changed(marked) === 0) return false
                yield* tx.query(retireCodesOfUser, [userId])
                yield* tx.query(
                  "UPDATE tokens SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL",
                  [userId, now]
                )
                yield* endSessionsOf(tx, userId)
                return true
              })
            )
          : Effect.map(
              db.write("UPDATE users SET disabled_at = NULL WHERE user_id = $1", [userId]),
              (r) => changed(r) > 0
            ),
      // The user's row goes first: its lock orders the delete with token writes (lockUsers).
      remove: (userId, now) =>
        db.transaction((tx) =>
          Effect.gen(function* () {
            const deleted = yield* tx.query("DELETE FROM users WHERE user_id = $1", [userId])
            yield* tx.query("DELETE FROM consents WHERE user_id = $1", [userId])
            yield* tx.query(retireCodesOfUser, [userId])
            yield* tx.query("UPDATE tokens SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL", [
              userId,
              now
            ])
            if (changed(deleted) === 0) return false
            yield* endSessionsOf(tx, userId)
            return true
          })
        )
    }),
    Context.add(CodeStore.CodeStore, {
      insert: (c) =>
        Effect.asVoid(
          db.write(
            `INSERT INTO authorization_codes (code_hash, app_key, redirect_uri, user_id, open_id, scope,
              code_challenge, code_challenge_method, family_id, issued_at, expires_at, used_at)
              VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11, $12)`,
            [
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
            ]
          )
        ),
      find: (codeHash) =>
        Effect.flatMap(
          db.lookup(`SELECT ${Rows.codeColumns} FROM authorization_codes WHERE code_hash = $1`, [codeHash]),
          (r) => first(r.rows, Rows.code)
        ),
      // D1 and D5 (docs/security.md): the conditional write decides the winner; its row state,
      // not a timestamp, decides reuse. The tokens are saved in the transaction that consumes the code.
      redeem: (codeHash, now, tokens) =>
        db.transaction<
          void,
          | CodeStore.CodeNotFound
          | CodeStore.CodeAlreadyUsed
          | UserStore.UserInactive
          | ConsentStore.ConsentWithdrawn
        >((tx) =>
          Effect.gen(function* () {
            const refused = yield* lockUsers(tx, tokens)
            const consumed = yield* tx.query(
              `UPDATE authorization_codes SET used_at = $2
                WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING user_id, app_key, scope`,
              [codeHash, now]
            )
            const code = consumed.rows[0]
            if (code === undefined) {
              const state = yield* tx.query(
                "SELECT used_at IS NOT NULL AS used, family_id FROM authorization_codes WHERE code_hash = $1",
                [codeHash]
              )
              const row = state.rows[0]
              return yield* row === undefined || row.used !== true
                ? Effect.fail(new CodeStore.CodeNotFound())
                : Effect.fail(new CodeStore.CodeAlreadyUsed({ familyId: String(row.family_id) }))
            }
            if (refused !== undefined) return yield* Effect.fail(refused)
            // D15: only under the code's consent, read after the user's lock (consentRefusal)
            const scope = yield* attemptSync(() => Rows.decodeScope(Rows.json(code.scope)))
            const under = { userId: String(code.user_id), appKey: String(code.app_key), scope }
            const withdrawn = yield* consentRefusal(tx, under)
            if (withdrawn !== undefined) return yield* Effect.fail(withdrawn)
            yield* insertTokens(tx.query, tokens)
          })
        ),
      purgeExpired: (now, limit) =>
        Effect.map(
          db.write(
            `DELETE FROM authorization_codes WHERE code_hash IN (SELECT code_hash FROM authorization_codes
              WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
            [now, bound(limit)]
          ),
          changed
        )
    }),
    Context.add(TokenStore.TokenStore, {
      // Tokens of no user (an application's own) are one statement; a user's lock the user first.
      insert: (tokens) =>
        UserStore.usersOf(tokens).length > 0
          ? db.transaction<void, UserStore.UserInactive>((tx) =>
              Effect.flatMap(
                lockUsers(tx, tokens),
                (refused): Effect.Effect<void, UserStore.UserInactive | StorageError.StorageError> =>
                  refused === undefined ? insertTokens(tx.query, tokens) : Effect.fail(refused)
              )
            )
          : tokens.length > 0
            ? insertTokens(db.write, tokens)
            : // Nothing to insert: still a write, so audit events attached to it are stored.
              Effect.flatMap(db.eventsAttached, (attached) =>
                attached ? db.transaction(() => Effect.void) : Effect.void
              ),
      insertUnderConsent: (tokens, under) =>
        db.transaction<void, UserStore.UserInactive | ConsentStore.ConsentWithdrawn>((tx) =>
          Effect.gen(function* () {
            const refused = (yield* lockUsers(tx, tokens)) ?? (yield* consentRefusal(tx, under))
            if (refused !== undefined) return yield* Effect.fail(refused)
            yield* insertTokens(tx.query, tokens)
          })
        ),
      find: (kind, tokenHash) =>
        Effect.flatMap(
          db.lookup(`SELECT ${Rows.tokenColumns} FROM tokens WHERE kind = $1 AND token_hash = $2`, [
            kind,
            tokenHash
          ]),
          (r) => first(r.rows, Rows.token)
        ),
      // The grace window is the only time rule; otherwise rotated_at IS NULL decides.
      rotate: (refreshHash, now, grace, tokens) =>
        db.transaction<
          void,
          TokenStore.TokenInactive | TokenStore.RefreshAlreadyRotated | UserStore.UserInactive
        >((tx) =>
          Effect.gen(function* () {
            const refused = yield* lockUsers(tx, tokens)
            const rotated = yield* tx.query(
              `UPDATE tokens SET rotated_at = coalesce(rotated_at, $2::bigint)
                WHERE kind = 'refresh' AND token_hash = $1 AND revoked_at IS NULL AND expires_at > $2::bigint
                  AND (rotated_at IS NULL OR ($3::bigint > 0 AND rotated_at >= $2::bigint - $3::bigint))
                RETURNING family_id`,
              [refreshHash, now, grace]
            )
            if (rotated.rows.length === 0) {
              const state = yield* tx.query(
                `SELECT revoked_at IS NULL AND expires_at > $2::bigint AS active, family_id FROM tokens
                  WHERE kind = 'refresh' AND token_hash = $1`,
                [refreshHash, now]
              )
              const row = state.rows[0]
              return yield* row === undefined || row.active !== true
                ? Effect.fail(new TokenStore.TokenInactive())
                : Effect.fail(new TokenStore.RefreshAlreadyRotated({ familyId: String(row.family_id) }))
            }
            if (refused !== undefined) return yield* Effect.fail(refused)
            yield* insertTokens(tx.query, tokens)
          })
        ),
      // One statement, committed before the caller fails the request.
      revokeFamily: (familyId, now) =>
        Effect.map(
          db.write("UPDATE tokens SET revoked_at = $2 WHERE family_id = $1 AND revoked_at IS NULL", [
            familyId,
            now
          ]),
          changed
        ),
      // One statement (tokens_by_app_open_id, or tokens_by_user).
      revokeSubject: (subject, now) =>
        Effect.map(
          "openId" in subject
            ? db.write(
                "UPDATE tokens SET revoked_at = $3 WHERE app_key = $1 AND open_id = $2 AND revoked_at IS NULL",
                [subject.appKey, subject.openId, now]
              )
            : db.write(
                "UPDATE tokens SET revoked_at = $3 WHERE app_key = $1 AND user_id = $2 AND revoked_at IS NULL",
                [subject.appKey, subject.userId, now]
              ),
          changed
        ),
      revoke: (kind, tokenHash, now) =>
        Effect.map(
          db.write(
            "UPDATE tokens SET revoked_at = $3 WHERE kind = $1 AND token_hash = $2 AND revoked_at IS NULL",
            [kind, tokenHash, now]
          ),
          (r) => changed(r) > 0
        ),
      purgeExpired: (now, limit) =>
        Effect.map(
          db.write(
            `DELETE FROM tokens WHERE (kind, token_hash) IN (SELECT kind, token_hash FROM tokens
              WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
            [now, bound(limit)]
          ),
          changed
        )
    }),
    Context.add(ConsentStore.ConsentStore, {
      find: (userId, appKey) =>
        Effect.flatMap(
          db.lookup("SELECT scope FROM consents WHERE user_id = $1 AND app_key = $2", [userId, appKey]),
          (r) => first(r.rows, (row) => Rows.decodeScope(Rows.json(row.scope)))
        ),
      // The first grant inserts; a later one locks the row and stores the union (Scope.union).
      // A grant racing the first waits for its insert and then merges into it.
      grant: (userId, appKey, scope, now) =>
        db.transaction((tx) =>
          Effect.gen(function* () {
            const inserted = yield* tx.query(
              `INSERT INTO consents (user_id, app_key, scope, updated_at) VALUES ($1, $2, $3::jsonb, $4)
                ON CONFLICT (user_id, app_key) DO NOTHING`,
              [userId, appKey, JSON.stringify(scope), now]
            )
            if (changed(inserted) === 1) return
            const found = yield* tx.query(
              "SELECT scope FROM consents WHERE user_id = $1 AND app_key = $2 FOR UPDATE",
              [userId, appKey]
            )
            const merged = yield* attemptSync(() => {
              const row = found.rows[0]
              return row === undefined ? scope : Scope.union(Rows.decodeScope(Rows.json(row.scope)), scope)
            })
            yield* tx.query(
              `INSERT INTO consents (user_id, app_key, scope, updated_at) VALUES ($1, $2, $3::jsonb, $4)
                ON CONFLICT (user_id, app_key) DO UPDATE SET scope = excluded.scope, updated_at = excluded.updated_at`,
              [userId, appKey, JSON.stringify(merged), now]
            )
          })
        ),
      // By code point (collation "C"), whatever the database's collation.
      list: (userId) =>
        Effect.flatMap(
          db.lookup(
            `SELECT ${Rows.consentColumns} FROM consents WHERE user_id = $1 ORDER BY app_key COLLATE "C"`,
            [userId]
          ),
          (r) => decodeAll(r.rows, Rows.consent)
        ),
      // The delete locks the consent: a grant racing it waits, then inserts a new consent.
      withdraw: (userId, appKey, now) =>
        db.transaction((tx) =>
          Effect.gen(function* () {
            // D13: the user's row first, locked against token writes (lockUsers holds it FOR SHARE):
            // a write that locked it first has committed before the statements below, which then see
            // its tokens; one that comes second waits for this commit and finds the consent's codes
            // gone and its tokens revoked. Then the consent, the codes and the tokens, in the order
            // of remove, so the two never wait for each other in a cycle.
            yield* tx.query("SELECT 1 FROM users WHERE user_id = $1 FOR NO KEY UPDATE", [userId])
            const deleted = yield* tx.query("DELETE FROM consents WHERE user_id = $1 AND app_key = $2", [
              userId,
              appKey
            ])
            if (changed(deleted) === 0) return false
            yield* tx.query(
              "DELETE FROM authorization_codes WHERE user_id = $1 AND app_key = $2 AND used_at IS NULL",
              [userId, appKey]
            )
            yield* tx.query(
              "UPDATE tokens SET revoked_at = $3 WHERE app_key = $2 AND user_id = $1 AND revoked_at IS NULL",
              [userId, appKey, now]
            )
            return true
          })
        )
    }),
    Context.add(OpenIdStore.OpenIdStore, {
      // The insert waits for a concurrent one of the same pair; the read after it sees the winner.
      getOrCreate: (appKey, userId, candidate) =>
        db.transaction((tx) =>
          Effect.gen(function* () {
            yield* tx.query(
              `INSERT INTO open_ids (app_key, user_id, open_id) VALUES ($1, $2, $3)
                ON CONFLICT (app_key, user_id) DO NOTHING`,
              [appKey, userId, candidate]
            )
            const found = yield* tx.query(
              "SELECT open_id FROM open_ids WHERE app_key = $1 AND user_id = $2",
              [appKey, userId]
            )
            return String(found.rows[0]?.open_id ?? candidate)
          })
        ),
      findUser: (appKey, openId) =>
        Effect.map(
          db.lookup("SELECT user_id FROM open_ids WHERE app_key = $1 AND open_id = $2 LIMIT 1", [
            appKey,
            openId
          ]),
          (r) => Option.map(Option.fromNullable(r.rows[0]), (row) => String(row.user_id))
        )
    }),
    Context.add(SettingStore.SettingStore, {
      getOrCreate: (name, candidate) =>
        db.transaction((tx) =>
          Effect.gen(function* () {
            yield* tx.query(
              "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
              [name, candidate]
            )
            const found = yield* tx.query("SELECT value FROM settings WHERE name = $1", [name])
            return String(found.rows[0]?.value ?? candidate)
          })
        )
    }),
    Context.add(SessionStore.SessionStore, {
      find: (idHash, now) =>
        Effect.flatMap(
          db.lookup(`SELECT ${Rows.sessionColumns} FROM sessions WHERE id_hash = $1 AND expires_at > $2`, [
            idHash,
            now
          ]),
          (r) => first(r.rows, Rows.session)
        ),
      // Saving a stored session (its sliding expiry, on every request) is one UPDATE that
      // takes no lock; only a new session, which may evict others, runs under the session lock.
      save: (s) =>
        Effect.flatMap(db.eventsAttached, (withEvents) =>
          withEvents
            ? db.transaction((tx) => insertSession(tx, s), { locks: sessionLock })
            : Effect.flatMap(db.write(updateSessionSql, sessionParams(s)), (r) =>
                changed(r) > 0
                  ? Effect.void
                  : db.transaction((tx) => insertSession(tx, s), { locks: sessionLock })
              )
        ),
      signIn: (s, checked) => db.transaction((tx) => signIn(tx, s, checked), { locks: sessionLock }),
      // One conditional update: a session deleted since it was read stays deleted.
      renew: (s) => Effect.map(db.write(updateSessionSql, sessionParams(s)), (r) => changed(r) > 0),
      remove: (idHash) =>
        db.transaction((tx) =>
          Effect.zipRight(
            tx.query("DELETE FROM pending_authorizations WHERE session_hash = $1", [idHash]),
            Effect.asVoid(tx.query("DELETE FROM sessions WHERE id_hash = $1", [idHash]))
          )
        ),
      // A txn added again moves to the end of its session (a new seq), as in the memory store.
      addPending: (p) =>
        db.transaction(
          (tx) =>
            Effect.gen(function* () {
              yield* tx.query(
                `INSERT INTO pending_authorizations (session_hash, txn, raw_query, csrf_hash, step, created_at,
                  expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
                  ON CONFLICT (session_hash, txn) DO UPDATE SET seq = excluded.seq, raw_query = excluded.raw_query,
                    csrf_hash = excluded.csrf_hash, step = excluded.step, created_at = excluded.created_at,
                    expires_at = excluded.expires_at`,
                [p.sessionHash, p.txn, p.rawQuery, p.csrfHash, p.step, p.createdAt, p.expiresAt]
              )
              yield* tx.query(
                `DELETE FROM pending_authorizations WHERE session_hash = $1 AND txn NOT IN
                  (SELECT txn FROM pending_authorizations WHERE session_hash = $1
                    ORDER BY created_at DESC, seq DESC LIMIT $2)`,
                [p.sessionHash, limits.maxPending]
              )
              yield* evictPending(tx)
            }),
          { locks: sessionLock }
        ),
      findPending: (sessionHash, txn, now) =>
        Effect.flatMap(
          db.lookup(
            `SELECT ${Rows.pendingColumns} FROM pending_authorizations
              WHERE session_hash = $1 AND txn = $2 AND expires_at > $3`,
            [sessionHash, txn, now]
          ),
          (r) => first(r.rows, Rows.pending)
        ),
      // One conditional delete: of any number of racing callers, in any instance, one deletes the row.
      takePending: (sessionHash, txn) =>
        Effect.map(
          db.write("DELETE FROM pending_authorizations WHERE session_hash = $1 AND txn = $2", [
            sessionHash,
            txn
          ]),
          (r) => changed(r) === 1
        ),
      purgeExpired: (now, limit) =>
        db.transaction((tx) =>
          Effect.gen(function* () {
            const sessions = yield* tx.query(
              `DELETE FROM sessions WHERE id_hash IN (SELECT id_hash FROM sessions WHERE expires_at <= $1
                LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING id_hash`,
              [now, bound(limit)]
            )
            const n = yield* dropPendingOf(tx, idHashes(sessions))
            const pending = yield* tx.query(
              `DELETE FROM pending_authorizations WHERE (session_hash, txn) IN (SELECT session_hash, txn
                FROM pending_authorizations WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
              [now, bound(limit)]
            )
            return n + changed(pending)
          })
        ),
      // One statement: the count and the total are of the same snapshot.
      stats: () =>
        Effect.flatMap(
          db.query(`SELECT (SELECT count(*) FROM sessions) AS sessions,
            (SELECT chars FROM pending_totals WHERE id = 1) AS "pendingBytes"`),
          (r) =>
            attemptSync(() => ({
              sessions: Rows.count(r.rows[0]?.sessions),
              pendingBytes: Rows.count(r.rows[0]?.pendingBytes)
            }))
        )
    }),
    Context.add(Throttle.ThrottleStore, {
      lockedFor: (keys, now) =>
        Effect.map(readThrottle(db, keys), (entries) => Throttle.lockWait(keys, entries, now)),
      fail: (keys, now, policy) =>
        throttled(keys, (entries) => {
          const { next, started } = Throttle.countFailure(keys, entries, now, policy)
          return { result: started, next }
        }),
      reserve: (keys, now, policy) =>
        throttled(keys, (entries) => {
          const { reservation, next } = Throttle.reserveAttempt(keys, entries, now, policy)
          return { result: reservation, next }
        }),
      settle: (keys, policy) =>
        throttled(keys, (entries) => ({
          result: undefined,
          next: keys.map((k, i) => Throttle.afterSuccess(entries[i], k, policy))
        })),
      purgeExpired: (now, window, limit) =>
        Effect.map(
          db.write(
            `DELETE FROM throttle WHERE key IN (SELECT key FROM throttle
              WHERE last_failure <= $1::bigint - $2::bigint AND locked_until <= $1::bigint
              LIMIT $3 FOR UPDATE SKIP LOCKED)`,
            [now, window, bound(limit)]
          ),
          changed
        )
    })
  )
}
