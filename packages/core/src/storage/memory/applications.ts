/** The memory store of registered applications. */
import { Effect, Option } from "effect"
import { type Application, allowsWebOrigin, status } from "../../model/Application.js"
import { endsIssued } from "../../model/Review.js"
import {
  AppKeyTaken,
  type ApplicationChanges,
  type ApplicationStore,
  endsRefreshFamilies,
  PreviousSecretMarked,
  StatusChanged
} from "../ApplicationStore.js"
import { revokeWhere, type State } from "./state.js"

const changeable = [
  "name",
  "redirectUris",
  "scopes",
  "grantTypes",
  "requirePkce",
  "accessTokenTtl",
  "refreshTokenTtl",
  "public",
  "accessTokenFormat",
  "accessTokenAudience",
  "webOrigins",
  "tokenEndpointAuthMethod",
  "scopeDelimiter",
  "postLogoutRedirectUris",
  "backchannelLogoutUri",
  "backchannelLogoutSessionRequired",
  "requireMfa"
] as const satisfies ReadonlyArray<keyof ApplicationChanges>

/** The application as the SQL stores return it: every optional field at its default when left out. */
const withDefaults = (app: Application): Application => ({
  ...app,
  previousSecretDigest: app.previousSecretDigest ?? null,
  previousSecretExpiresAt: app.previousSecretExpiresAt ?? null,
  previousSecretUsedAt: app.previousSecretUsedAt ?? null,
  public: app.public ?? false,
  accessTokenFormat: app.accessTokenFormat ?? "opaque",
  accessTokenAudience: app.accessTokenAudience ?? null,
  webOrigins: app.webOrigins ?? [],
  tokenEndpointAuthMethod: app.tokenEndpointAuthMethod ?? "client_secret_basic",
  scopeDelimiter: app.scopeDelimiter ?? "comma",
  postLogoutRedirectUris: app.postLogoutRedirectUris ?? [],
  backchannelLogoutUri: app.backchannelLogoutUri ?? null,
  backchannelLogoutSessionRequired: app.backchannelLogoutSessionRequired ?? false,
  requireMfa: app.requireMfa ?? false,
  status: app.status ?? "active",
  statusReason: app.statusReason ?? null
})

/** `app` with `changes` applied: only the fields a registration change may touch. */
const changed = (app: Application, changes: ApplicationChanges): Application => {
  const updated: Application = { ...app }
  for (const field of changeable) {
    if (changes[field] !== undefined) Object.assign(updated, { [field]: changes[field] })
  }
  // A new secret digest drops the previous secret with it
  if (changes.secretDigest !== undefined) {
    Object.assign(updated, {
      secretDigest: changes.secretDigest,
      previousSecretDigest: null,
      previousSecretExpiresAt: null,
      previousSecretUsedAt: null
    })
  }
  return updated
}

/** The review status and the owners of the applications in `state.apps` (docs/platform.md). */
const reviewMethods = (
  state: State
): Pick<ApplicationStore["Type"], "setStatus" | "owners" | "addOwner" | "removeOwner" | "ownedBy"> => {
  const { apps } = state
  return {
    setStatus: (appKey, change, now) =>
      Effect.suspend(() => {
        const app = apps.get(appKey)
        if (app === undefined) return Effect.succeed(Option.none())
        if (status(app) !== change.from)
          return Effect.fail(new StatusChanged({ appKey, status: status(app) }))
        if (endsIssued(change.to)) {
          revokeWhere(state, (t) => t.appKey === appKey, now)
          for (const [k, c] of state.codes)
            if (c.appKey === appKey && c.usedAt === null) state.codes.delete(k)
        }
        const updated: Application = { ...app, status: change.to, statusReason: change.reason }
        apps.set(appKey, updated)
        return Effect.succeed(Option.some(updated))
      }),
    owners: (appKey) => Effect.sync(() => [...(state.owners.get(appKey) ?? [])]),
    addOwner: (appKey, userId) =>
      Effect.sync(() => {
        if (!apps.has(appKey) || !state.users.has(userId)) return false
        const owners = state.owners.get(appKey) ?? new Set<string>()
        if (owners.has(userId)) return false
        state.owners.set(appKey, owners.add(userId))
        return true
      }),
    removeOwner: (appKey, userId) => Effect.sync(() => state.owners.get(appKey)?.delete(userId) ?? false),
    ownedBy: (userId) =>
      Effect.sync(() =>
        [...apps.values()]
          .filter((a) => state.owners.get(a.appKey)?.has(userId) === true)
          .sort((a, b) => a.createdAt - b.createdAt)
      )
  }
}

/** Applications in `state.apps`; removing one revokes its tokens, making one public its refresh token families. */
export const applicationStore = (state: State): ApplicationStore["Type"] => {
  const { apps } = state
  return {
    insert: (app) =>
      Effect.suspend(() => {
        if (apps.has(app.appKey)) return Effect.fail(new AppKeyTaken({ appKey: app.appKey }))
        apps.set(app.appKey, withDefaults(app))
        return Effect.void
      }),
    find: (appKey) => Effect.sync(() => Option.fromNullable(apps.get(appKey))),
    webOriginRegistered: (origin) =>
      Effect.sync(() => {
        for (const app of apps.values()) if (allowsWebOrigin(app, origin)) return true
        return false
      }),
    list: () => Effect.sync(() => [...apps.values()].sort((a, b) => a.createdAt - b.createdAt)),
    updateSecret: (appKey, secretDigest, keepPreviousUntil) =>
      Effect.sync(() => {
        const app = apps.get(appKey)
        if (app === undefined) return false
        apps.set(appKey, {
          ...app,
          secretDigest,
          previousSecretDigest: keepPreviousUntil === null ? null : app.secretDigest,
          previousSecretExpiresAt: keepPreviousUntil,
          previousSecretUsedAt: null
        })
        return true
      }),
    markPreviousSecretUsed: (appKey, previousSecretDigest, now) =>
      Effect.suspend(() => {
        const app = apps.get(appKey)
        if (
          app === undefined ||
          app.previousSecretDigest !== previousSecretDigest ||
          (app.previousSecretUsedAt ?? null) !== null
        )
          return Effect.fail(new PreviousSecretMarked({ appKey }))
        apps.set(appKey, { ...app, previousSecretUsedAt: now })
        return Effect.void
      }),
    update: (appKey, changes, now) =>
      Effect.sync(() => {
        const app = apps.get(appKey)
        if (app === undefined) return Option.none()
        if (endsRefreshFamilies(app.public ?? false, changes)) {
          const families = new Set<string>()
          for (const t of state.tokens.values())
            if (t.appKey === appKey && t.kind === "refresh") families.add(t.familyId)
          revokeWhere(state, (t) => t.appKey === appKey && families.has(t.familyId), now)
        }
        const updated = changed(app, changes)
        apps.set(appKey, updated)
        return Option.some(updated)
      }),
    ...reviewMethods(state),
    remove: (appKey, now) =>
      Effect.sync(() => {
        revokeWhere(state, (t) => t.appKey === appKey, now)
        state.owners.delete(appKey)
        state.registrations.delete(appKey)
        return apps.delete(appKey)
      })
  }
}
