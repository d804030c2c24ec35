/** The PostgreSQL store of registered applications. */
import { ApplicationStore, Tables } from "@latchkey/core"
import { Effect } from "effect"
import { all, changed, first, selectFrom } from "../rows.js"
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

const findSql = selectFrom(Tables.applications, "WHERE app_key = $1")

/** Applications in the `applications` table; removing one revokes its tokens in the same transaction. */
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
  // One UPDATE of the fields given; with none, a read (in a transaction, for attached events).
  update: (appKey, changes) => {
    const { set, values } = applicationChanges(changes)
    return Effect.flatMap(
      set.length === 0
        ? db.transaction((tx) => tx.query(findSql, [appKey]))
        : db.write(
            `UPDATE applications SET ${set.join(", ")} WHERE app_key = $1 RETURNING ${Tables.selectList(Tables.applications)}`,
            [appKey, ...values]
          ),
      (r) => first(Tables.applications, r.rows)
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
})
