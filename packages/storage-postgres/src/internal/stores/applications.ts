/** The PostgreSQL store of registered applications. */
import {
  type Application,
  ApplicationStore,
  Review,
  type StorageError,
  Tables,
  type Throttle
} from "@latchkey/core"
import { Effect, Option } from "effect"
import { attemptSync } from "../errors.js"
import { all, changed, first, selectFrom, throttleEntry } from "../rows.js"
import { insertNew, type Over } from "./shared.js"

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
  assign("public", "::boolean", changes.public)
  assign("access_token_format", "::text", changes.accessTokenFormat)
  assign("access_token_audience", "::text", changes.accessTokenAudience)
  assign("web_origins", "::jsonb", asJson(changes.webOrigins))
  assign("token_endpoint_auth_method", "::text", changes.tokenEndpointAuthMethod)
  assign("scope_delimiter", "::text", changes.scopeDelimiter)
  assign("post_logout_redirect_uris", "::jsonb", asJson(changes.postLogoutRedirectUris))
  assign("backchannel_logout_uri", "::text", changes.backchannelLogoutUri)
  assign("backchannel_logout_session_required", "::boolean", changes.backchannelLogoutSessionRequired)
  assign("require_mfa", "::boolean", changes.requireMfa)
  assign("secret_digest", "::text", changes.secretDigest)
  // A new secret digest drops the previous secret in the same statement.
  if (changes.secretDigest !== undefined) {
    set.push(
      "previous_secret_digest = NULL",
      "previous_secret_expires_at = NULL",
      "previous_secret_used_at = NULL"
    )
  }
  return { set, values }
}

const webOriginSql = "SELECT 1 FROM applications WHERE web_origins @> jsonb_build_array($1::text) LIMIT 1"

const findSql = selectFrom(Tables.applications, "WHERE app_key = $1")

// ApplicationStore.endsRefreshFamilies: read before the update, the row as it was
const endFamiliesSql = `UPDATE tokens SET revoked_at = $2
  WHERE app_key = $1 AND revoked_at IS NULL
  AND EXISTS (SELECT 1 FROM applications WHERE app_key = $1 AND NOT public)
  AND family_id IN (SELECT family_id FROM tokens WHERE app_key = $1 AND kind = 'refresh')`

// One row: the application of $1 (its columns null when there is none) and, as JSON, the
// throttle entries of the keys $2.
const findForClientSql = `SELECT a.*, t.entries AS "throttleEntries" FROM (SELECT 1) AS one
  LEFT JOIN (${findSql}) AS a ON true
  CROSS JOIN (SELECT coalesce(json_agg(json_build_object('key', key, 'failures', failures,
    'lastFailure', last_failure, 'lockedUntil', locked_until)), '[]'::json) AS entries
    FROM throttle WHERE key = ANY($2::text[])) AS t`

/** The read of `findForClientSql`: none when the value matched no row (`Database.lookup`). */
const clientRead = (
  keys: ReadonlyArray<Throttle.Key>,
  rows: ReadonlyArray<Record<string, unknown>>
): Effect.Effect<ApplicationStore.ClientRead | null, StorageError.StorageError> => {
  const row = rows[0]
  if (row === undefined) return Effect.succeed(null)
  const { throttleEntries, ...app } = row
  return Effect.flatMap(first(Tables.applications, app.appKey === null ? [] : [app]), (found) =>
    attemptSync(() => {
      const byKey = new Map(
        (throttleEntries as ReadonlyArray<Record<string, unknown>>).map((e) => [
          String(e.key),
          throttleEntry(e)
        ])
      )
      return { app: found, entries: keys.map((k) => byKey.get(k.key)) }
    })
  )
}

// One UPDATE of the fields given; with none, a read (in a transaction, for attached events).
// Turning public ends the refresh token families first, in the same transaction.
const update = (
  db: Over["db"],
  appKey: string,
  changes: ApplicationStore.ApplicationChanges,
  now: number
): Effect.Effect<Option.Option<Application.Application>, StorageError.StorageError> => {
  const { set, values } = applicationChanges(changes)
  const updateSql = `UPDATE applications SET ${set.join(", ")} WHERE app_key = $1 RETURNING ${Tables.selectList(Tables.applications)}`
  return Effect.flatMap(
    set.length === 0
      ? db.transaction((tx) => tx.query(findSql, [appKey]))
      : ApplicationStore.endsRefreshFamilies(false, changes)
        ? db.transaction((tx) =>
            Effect.zipRight(tx.query(endFamiliesSql, [appKey, now]), tx.query(updateSql, [appKey, ...values]))
          )
        : db.write(updateSql, [appKey, ...values]),
    (r) => first(Tables.applications, r.rows)
  )
}

const setStatusSql = `UPDATE applications SET status = $3, status_reason = $4
  WHERE app_key = $1 AND status = $2 RETURNING ${Tables.selectList(Tables.applications)}`

// The application and the user are read (the user's row locked) in the same statement: no owner row outlives either
const addOwnerSql = `INSERT INTO application_owners (app_key, user_id, added_at)
  SELECT a.app_key, u.user_id, $3 FROM applications AS a, users AS u
  WHERE a.app_key = $1 AND u.user_id = $2 FOR SHARE ON CONFLICT DO NOTHING`

const ownedBySql = selectFrom(
  Tables.applications,
  "WHERE app_key IN (SELECT app_key FROM application_owners WHERE user_id = $1) ORDER BY created_at, seq"
)

/**
 * `ApplicationStore.setStatus`: one conditional update; when `Review.endsIssued`, the application's
 * tokens revoked and its unused codes deleted in the same transaction.
 */
const setStatus = (db: Over["db"], appKey: string, change: Review.StatusChange, now: number) =>
  db.transaction((tx) =>
    Effect.gen(function* () {
      const r = yield* tx.query(setStatusSql, [appKey, change.from, change.to, change.reason])
      if (r.rows.length === 0) {
        const current = yield* tx.query("SELECT status FROM applications WHERE app_key = $1", [appKey])
        const row = current.rows[0]
        if (row === undefined) return Option.none<Application.Application>()
        return yield* Effect.fail(new ApplicationStore.StatusChanged({ appKey, status: String(row.status) }))
      }
      if (Review.endsIssued(change.to)) {
        yield* tx.query("UPDATE tokens SET revoked_at = $2 WHERE app_key = $1 AND revoked_at IS NULL", [
          appKey,
          now
        ])
        yield* tx.query("DELETE FROM authorization_codes WHERE app_key = $1 AND used_at IS NULL", [appKey])
      }
      return yield* first(Tables.applications, r.rows)
    })
  )

/** The review status and the owners of the applications (docs/platform.md). */
const reviewMethods = (
  db: Over["db"]
): Pick<
  ApplicationStore.ApplicationStore["Type"],
  "setStatus" | "owners" | "addOwner" | "removeOwner" | "ownedBy"
> => ({
  setStatus: (appKey, change, now) => setStatus(db, appKey, change, now),
  owners: (appKey) =>
    Effect.map(
      db.lookup("SELECT user_id FROM application_owners WHERE app_key = $1 ORDER BY added_at, user_id", [
        appKey
      ]),
      (r) => r.rows.map((row) => String(row.user_id))
    ),
  addOwner: (appKey, userId, now) =>
    Effect.map(db.write(addOwnerSql, [appKey, userId, now]), (r) => changed(r) > 0),
  removeOwner: (appKey, userId) =>
    Effect.map(
      db.write("DELETE FROM application_owners WHERE app_key = $1 AND user_id = $2", [appKey, userId]),
      (r) => changed(r) > 0
    ),
  ownedBy: (userId) =>
    Effect.flatMap(db.lookup(ownedBySql, [userId]), (r) => all(Tables.applications, r.rows))
})

/**
 * Applications in the `applications` table; removing one revokes its tokens, and making one public
 * its refresh token families, in the same transaction.
 */
export const applicationStore = ({ db }: Over): ApplicationStore.ApplicationStore["Type"] => ({
  insert: (app) =>
    insertNew(
      db,
      Tables.applications,
      "app_key",
      app,
      () => new ApplicationStore.AppKeyTaken({ appKey: app.appKey })
    ),
  find: (appKey) => Effect.flatMap(db.lookup(findSql, [appKey]), (r) => first(Tables.applications, r.rows)),
  // One round trip when the throttle is this pool's own (`throttleStore` names `db` its counters)
  findForClient: (appKey, keys, counters) =>
    counters !== db
      ? Effect.map(
          db.lookup(findSql, [appKey]).pipe(Effect.flatMap((r) => first(Tables.applications, r.rows))),
          (app) => ({ app, entries: null })
        )
      : Effect.flatMap(db.lookup(findForClientSql, [appKey, keys.map((k) => k.key)]), (r) =>
          Effect.flatMap(clientRead(keys, r.rows), (read) =>
            read !== null
              ? Effect.succeed(read)
              : Effect.succeed<ApplicationStore.ClientRead>({ app: Option.none(), entries: null })
          )
        ),
  // jsonb containment: an element equal to the origin, compared as the exact string
  webOriginRegistered: (origin) => Effect.map(db.lookup(webOriginSql, [origin]), (r) => r.rows.length > 0),
  list: () =>
    Effect.flatMap(db.query(selectFrom(Tables.applications, "ORDER BY created_at, seq")), (r) =>
      all(Tables.applications, r.rows)
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
          changed(r) === 0 ? Effect.fail(new ApplicationStore.PreviousSecretMarked({ appKey })) : Effect.void
      )
    ),
  update: (appKey, changes, now) => update(db, appKey, changes, now),
  ...reviewMethods(db),
  remove: (appKey, now) =>
    db.transaction((tx) =>
      Effect.zipRight(
        Effect.zipRight(
          tx.query("UPDATE tokens SET revoked_at = $2 WHERE app_key = $1 AND revoked_at IS NULL", [
            appKey,
            now
          ]),
          Effect.zipRight(
            tx.query("DELETE FROM application_owners WHERE app_key = $1", [appKey]),
            tx.query("DELETE FROM client_registrations WHERE app_key = $1", [appKey])
          )
        ),
        Effect.map(tx.query("DELETE FROM applications WHERE app_key = $1", [appKey]), (r) => changed(r) > 0)
      )
    )
})
