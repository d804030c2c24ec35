/** The SQLite store of registered applications. */
import { type Application, ApplicationStore, Review, Tables, type Throttle } from "@latchkey/core"
import type BetterSqlite3 from "better-sqlite3"
import { Option } from "effect"
import { attempt } from "../database.js"
import { insertSql, selectFrom } from "../rows.js"
import { refuse } from "../writer.js"
import { insertNew, type Over } from "./shared.js"

type Row = Readonly<Record<string, unknown>>

// A row of the application's columns read raw, in the order of `Tables.applications`' columns;
// the throttle entries of `findForClient` follow them
type Raw = ReadonlyArray<unknown>

const columns = Tables.applications.columns
const width = columns.length
const appKeyAt = columns.findIndex((c) => c.field === "appKey")

/** The application's columns of `row` as the record `Tables.fromRow` decodes (named by field). */
const recordOf = (row: Raw): Row => {
  const record: Record<string, unknown> = {}
  columns.forEach((c, i) => {
    record[c.field] = row[i]
  })
  return record
}

/** Whether the application's columns of two raw rows hold the same values. */
const sameColumns = (a: Raw, b: Raw): boolean => {
  for (let i = 0; i < width; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * Decoded applications by App Key, reused while the stored row is unchanged: every
 * lookup still reads the row (so another process's change is seen at once), but
 * only a changed row is decoded again. Bounded; the oldest entry goes first.
 */
const applicationCache = (limit = 1000) => {
  const decoded = new Map<unknown, { readonly row: Raw; readonly app: Application.Application }>()
  return (row: Raw): Application.Application => {
    const appKey = row[appKeyAt]
    const hit = decoded.get(appKey)
    if (hit !== undefined && sameColumns(hit.row, row)) return hit.app
    const app = Tables.fromRow(Tables.applications, recordOf(row))
    decoded.delete(appKey)
    if (decoded.size >= limit) decoded.delete(decoded.keys().next().value)
    decoded.set(appKey, { row: row.slice(0, width), app })
    return app
  }
}

/**
 * `findForClient`'s one statement for `n` keys: one row, the application's columns (null when
 * there is none) and then each key's failures, last failure and lock (null when it has no entry).
 */
const clientReadSql = (n: number): string => {
  const keys = Array.from({ length: n }, (_, i) => i)
  return `SELECT ${columns.map((c) => `a.${c.name}`).join(", ")}${keys
    .map((i) => `, t${i}.failures, t${i}.last_failure, t${i}.locked_until`)
    .join("")} FROM (SELECT 1) LEFT JOIN applications AS a ON a.app_key = ?${keys
    .map((i) => ` LEFT JOIN throttle AS t${i} ON t${i}.key = ?`)
    .join("")}`
}

/** The throttle entries of `n` keys in a row of `clientReadSql(n)`. */
const entriesOf = (row: Raw, n: number): Array<Throttle.Entry | undefined> => {
  const entries: Array<Throttle.Entry | undefined> = []
  for (let at = width; at < width + 3 * n; at += 3) {
    entries.push(
      row[at] === null
        ? undefined
        : {
            failures: row[at] as number,
            lastFailure: row[at + 1] as number,
            lockedUntil: row[at + 2] as number
          }
    )
  }
  return entries
}

const prepare = ({ db }: Over) => ({
  insert: db.prepare(`${insertSql(Tables.applications)} ON CONFLICT (app_key) DO NOTHING`),
  find: db.prepare(selectFrom(Tables.applications, "WHERE app_key = ?")).raw(),
  webOriginRegistered: db.prepare(
    "SELECT EXISTS (SELECT 1 FROM applications, json_each(applications.web_origins) AS o WHERE o.value = ?) AS registered"
  ),
  list: db.prepare(selectFrom(Tables.applications, "ORDER BY created_at, rowid")),
  // The right-hand sides read the row as it was: the digest replaced becomes the previous one
  updateSecret: db.prepare(`UPDATE applications SET secret_digest = @digest,
    previous_secret_digest = CASE WHEN @until IS NULL THEN NULL ELSE secret_digest END,
    previous_secret_expires_at = @until, previous_secret_used_at = NULL
    WHERE app_key = @appKey`),
  markPreviousUsed: db.prepare(`UPDATE applications SET previous_secret_used_at = ?
    WHERE app_key = ? AND previous_secret_digest = ? AND previous_secret_used_at IS NULL`),
  // A change left out (NULL) keeps the column; one that may be set to NULL (a TTL, the audience)
  // has its own flag. A new secret digest drops the previous secret in the same statement.
  update: db
    .prepare(`UPDATE applications SET name = coalesce(@name, name),
    redirect_uris = coalesce(@redirectUris, redirect_uris), scopes = coalesce(@scopes, scopes),
    grant_types = coalesce(@grantTypes, grant_types), require_pkce = coalesce(@requirePkce, require_pkce),
    access_token_ttl = CASE WHEN @setAccessTokenTtl THEN @accessTokenTtl ELSE access_token_ttl END,
    refresh_token_ttl = CASE WHEN @setRefreshTokenTtl THEN @refreshTokenTtl ELSE refresh_token_ttl END,
    public = coalesce(@public, public),
    access_token_format = coalesce(@accessTokenFormat, access_token_format),
    access_token_audience = CASE WHEN @setAccessTokenAudience THEN @accessTokenAudience
      ELSE access_token_audience END,
    web_origins = coalesce(@webOrigins, web_origins),
    token_endpoint_auth_method = coalesce(@tokenEndpointAuthMethod, token_endpoint_auth_method),
    scope_delimiter = coalesce(@scopeDelimiter, scope_delimiter),
    post_logout_redirect_uris = coalesce(@postLogoutRedirectUris, post_logout_redirect_uris),
    backchannel_logout_uri = CASE WHEN @setBackchannelLogoutUri THEN @backchannelLogoutUri
      ELSE backchannel_logout_uri END,
    backchannel_logout_session_required = coalesce(@backchannelLogoutSessionRequired,
      backchannel_logout_session_required),
    require_mfa = coalesce(@requireMfa, require_mfa),
    secret_digest = coalesce(@secretDigest, secret_digest),
    previous_secret_digest = CASE WHEN @secretDigest IS NULL THEN previous_secret_digest END,
    previous_secret_expires_at = CASE WHEN @secretDigest IS NULL THEN previous_secret_expires_at END,
    previous_secret_used_at = CASE WHEN @secretDigest IS NULL THEN previous_secret_used_at END
    WHERE app_key = @appKey RETURNING ${Tables.selectList(Tables.applications)}`)
    .raw(),
  // ApplicationStore.endsRefreshFamilies: read before the update, the row as it was
  endFamilies: db.prepare(`UPDATE tokens SET revoked_at = @now
    WHERE app_key = @appKey AND revoked_at IS NULL
    AND EXISTS (SELECT 1 FROM applications WHERE app_key = @appKey AND public = 0)
    AND family_id IN (SELECT family_id FROM tokens WHERE app_key = @appKey AND kind = 'refresh')`),
  remove: db.prepare("DELETE FROM applications WHERE app_key = ?"),
  removeOwners: db.prepare("DELETE FROM application_owners WHERE app_key = ?"),
  setStatus: db
    .prepare(`UPDATE applications SET status = @to, status_reason = @reason
    WHERE app_key = @appKey AND status = @from RETURNING ${Tables.selectList(Tables.applications)}`)
    .raw(),
  statusOf: db.prepare("SELECT status FROM applications WHERE app_key = ?").pluck(),
  retireCodes: db.prepare("DELETE FROM authorization_codes WHERE app_key = ? AND used_at IS NULL"),
  owners: db
    .prepare("SELECT user_id FROM application_owners WHERE app_key = ? ORDER BY added_at, user_id")
    .pluck(),
  // The application and the user are read in the same statement: no owner row outlives either
  addOwner: db.prepare(`INSERT INTO application_owners (app_key, user_id, added_at)
    SELECT a.app_key, u.user_id, @now FROM applications AS a, users AS u
    WHERE a.app_key = @appKey AND u.user_id = @userId ON CONFLICT DO NOTHING`),
  removeOwner: db.prepare("DELETE FROM application_owners WHERE app_key = ? AND user_id = ?"),
  ownedBy: db.prepare(
    selectFrom(
      Tables.applications,
      "WHERE app_key IN (SELECT app_key FROM application_owners WHERE user_id = ?) ORDER BY created_at, rowid"
    )
  ),
  forgetRegistration: db.prepare("DELETE FROM client_registrations WHERE app_key = ?"),
  revokeByApp: db.prepare("UPDATE tokens SET revoked_at = ? WHERE app_key = ? AND revoked_at IS NULL")
})

/** The named parameters of the `update` statement for `changes`. */
const updateParams = (appKey: string, changes: ApplicationStore.ApplicationChanges) => {
  const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value))
  const flag = (value: boolean | undefined) => (value === undefined ? null : value ? 1 : 0)
  return {
    appKey,
    name: changes.name ?? null,
    redirectUris: json(changes.redirectUris),
    scopes: json(changes.scopes),
    grantTypes: json(changes.grantTypes),
    requirePkce: flag(changes.requirePkce),
    setAccessTokenTtl: changes.accessTokenTtl === undefined ? 0 : 1,
    accessTokenTtl: changes.accessTokenTtl ?? null,
    setRefreshTokenTtl: changes.refreshTokenTtl === undefined ? 0 : 1,
    refreshTokenTtl: changes.refreshTokenTtl ?? null,
    public: flag(changes.public),
    accessTokenFormat: changes.accessTokenFormat ?? null,
    setAccessTokenAudience: changes.accessTokenAudience === undefined ? 0 : 1,
    accessTokenAudience: changes.accessTokenAudience ?? null,
    webOrigins: json(changes.webOrigins),
    tokenEndpointAuthMethod: changes.tokenEndpointAuthMethod ?? null,
    scopeDelimiter: changes.scopeDelimiter ?? null,
    postLogoutRedirectUris: json(changes.postLogoutRedirectUris),
    setBackchannelLogoutUri: changes.backchannelLogoutUri === undefined ? 0 : 1,
    backchannelLogoutUri: changes.backchannelLogoutUri ?? null,
    backchannelLogoutSessionRequired: flag(changes.backchannelLogoutSessionRequired),
    requireMfa: flag(changes.requireMfa),
    secretDigest: changes.secretDigest ?? null
  }
}

/** The review status and the owners of the applications (docs/platform.md). */
const reviewMethods = (
  { write }: Over,
  q: ReturnType<typeof prepare>,
  found: (row: unknown) => Option.Option<Application.Application>
): Pick<
  ApplicationStore.ApplicationStore["Type"],
  "setStatus" | "owners" | "addOwner" | "removeOwner" | "ownedBy"
> => {
  // Review.endsIssued: the tokens and unused codes end in the write that changes the status
  const setStatus = (appKey: string, change: Review.StatusChange, now: number) => {
    const row = q.setStatus.get({ appKey, from: change.from, to: change.to, reason: change.reason })
    if (row === undefined) {
      const current = q.statusOf.get(appKey) as string | undefined
      if (current === undefined) return Option.none()
      return refuse(new ApplicationStore.StatusChanged({ appKey, status: current }))
    }
    if (Review.endsIssued(change.to)) {
      q.revokeByApp.run(now, appKey)
      q.retireCodes.run(appKey)
    }
    return found(row)
  }
  return {
    setStatus: (appKey, change, now) =>
      write<Option.Option<Application.Application>, ApplicationStore.StatusChanged>(() =>
        setStatus(appKey, change, now)
      ),
    owners: (appKey) => attempt(() => q.owners.all(appKey) as Array<string>),
    addOwner: (appKey, userId, now) => write(() => q.addOwner.run({ appKey, userId, now }).changes > 0),
    removeOwner: (appKey, userId) => write(() => q.removeOwner.run(appKey, userId).changes > 0),
    ownedBy: (userId) =>
      attempt(() => q.ownedBy.all(userId).map((row) => Tables.fromRow(Tables.applications, row as Row)))
  }
}

/**
 * Applications in the `applications` table; removing one revokes its tokens, and making one public
 * its refresh token families, in the same transaction.
 */
export const applicationStore = (over: Over): ApplicationStore.ApplicationStore["Type"] => {
  const { db, write } = over
  const q = prepare(over)
  const cached = applicationCache()
  const found = (row: unknown) => {
    const raw = row as Raw | undefined
    return raw === undefined || raw[appKeyAt] === null ? Option.none() : Option.some(cached(raw))
  }
  // One statement per number of keys, prepared at its first use
  const clientReads = new Map<number, BetterSqlite3.Statement>()
  const clientRead = (appKey: string, keys: ReadonlyArray<Throttle.Key>) => {
    let statement = clientReads.get(keys.length)
    if (statement === undefined) {
      statement = db.prepare(clientReadSql(keys.length)).raw()
      clientReads.set(keys.length, statement)
    }
    const row = statement.get(appKey, ...keys.map((k) => k.key)) as Raw
    return { app: found(row), entries: entriesOf(row, keys.length) }
  }
  const update = (appKey: string, changes: ApplicationStore.ApplicationChanges, now: number) => {
    if (ApplicationStore.endsRefreshFamilies(false, changes)) q.endFamilies.run({ appKey, now })
    return found(q.update.get(updateParams(appKey, changes)))
  }
  const remove = db.transaction((appKey: string, now: number): boolean => {
    q.revokeByApp.run(now, appKey)
    q.removeOwners.run(appKey)
    q.forgetRegistration.run(appKey)
    return q.remove.run(appKey).changes > 0
  })
  return {
    insert: (app) =>
      insertNew(
        over,
        q.insert,
        Tables.applications,
        app,
        () => new ApplicationStore.AppKeyTaken({ appKey: app.appKey })
      ),
    find: (appKey) => attempt(() => found(q.find.get(appKey))),
    // The entries too, in the same statement, when the throttle is this database's own
    // (`throttleStore` names `db` its counters)
    findForClient: (appKey, keys, counters) =>
      attempt(() =>
        counters === db ? clientRead(appKey, keys) : { app: found(q.find.get(appKey)), entries: null }
      ),
    webOriginRegistered: (origin) =>
      attempt(() => (q.webOriginRegistered.get(origin) as { readonly registered: number }).registered === 1),
    list: () => attempt(() => q.list.all().map((row) => Tables.fromRow(Tables.applications, row as Row))),
    updateSecret: (appKey, secretDigest, keepPreviousUntil) =>
      write(() => q.updateSecret.run({ digest: secretDigest, until: keepPreviousUntil, appKey }).changes > 0),
    markPreviousSecretUsed: (appKey, previousSecretDigest, now) =>
      write<void, ApplicationStore.PreviousSecretMarked>(() => {
        // Refused, nothing written (the audit event attached to this write included)
        if (q.markPreviousUsed.run(now, appKey, previousSecretDigest).changes === 0)
          refuse(new ApplicationStore.PreviousSecretMarked({ appKey }))
      }),
    // Decoded inside the write: a row the schema refuses rolls the change back.
    update: (appKey, changes, now) => write(() => update(appKey, changes, now)),
    ...reviewMethods(over, q, found),
    remove: (appKey, now) => write(() => remove(appKey, now))
  }
}
