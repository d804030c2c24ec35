/**
 * An in-memory storage layer: for tests, examples and embedding. Every operation
 * runs synchronously inside one Effect step, so single use holds trivially.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Application } from "../model/Application.js"
import type { AuthorizationCode } from "../model/AuthorizationCode.js"
import * as Scope from "../model/Scope.js"
import type { Token } from "../model/Token.js"
import type { User } from "../model/User.js"
import type { AuditEvent } from "../security/Audit.js"
import { memoryStore as memoryThrottleStore } from "../security/Throttle.js"
import {
  AppKeyTaken,
  type ApplicationChanges,
  ApplicationStore,
  PreviousSecretMarked
} from "./ApplicationStore.js"
import { AuditStore } from "./AuditStore.js"
import { CodeAlreadyUsed, CodeNotFound, CodeStore } from "./CodeStore.js"
import { ConsentStore, type ConsentWithdrawn, refusal as consentRefusal, type Under } from "./ConsentStore.js"
import { sessionStore } from "./internal/memorySessions.js"
import { OpenIdStore } from "./OpenIdStore.js"
import { defaultLimits, type SessionLimits, SessionStore } from "./SessionStore.js"
import { SettingStore } from "./SettingStore.js"
import { StorageError } from "./StorageError.js"
import type { Stores } from "./Stores.js"
import { ThrottleStore } from "./ThrottleStore.js"
import { RefreshAlreadyRotated, TokenInactive, TokenStore } from "./TokenStore.js"
import { refusal, type UserInactive, UsernameTaken, UserStore } from "./UserStore.js"

const changeable = [
  "name",
  "redirectUris",
  "scopes",
  "grantTypes",
  "requirePkce",
  "accessTokenTtl",
  "refreshTokenTtl"
] as const satisfies ReadonlyArray<keyof ApplicationChanges>

const tokenKey = (kind: Token["kind"], hash: string) => `${kind}:${hash}`

/** Run a write; a unique-key violation (a thrown StorageError) fails the effect like a database would. */
const guard = (f: () => void): Effect.Effect<void, StorageError> =>
  Effect.try({
    try: f,
    catch: (e) => (e instanceof StorageError ? e : new StorageError({ message: "memory store failure" }))
  })

/** Build a fresh, empty set of in-memory stores. */
export const make = (limits: SessionLimits = defaultLimits): Context.Context<Stores> => {
  const apps = new Map<string, Application>()
  const users = new Map<string, User>()
  const sessions = sessionStore(limits, (userId) => users.get(userId))
  const codes = new Map<string, AuthorizationCode>()
  const tokens = new Map<string, Token>()
  const consents = new Map<string, { readonly scope: Scope.ScopeSet; readonly updatedAt: number }>()
  const openIds = new Map<string, string>()
  // (App Key, open_id) → user id, the reverse of openIds
  const usersByOpenId = new Map<string, string>()
  const settings = new Map<string, string>()

  const revokeWhere = (pred: (t: Token) => boolean, now: number): number => {
    let n = 0
    for (const [k, t] of tokens) {
      if (t.revokedAt === null && pred(t)) {
        tokens.set(k, { ...t, revokedAt: now })
        n++
      }
    }
    return n
  }
  const purge = <A>(map: Map<string, A>, expired: (a: A) => boolean, limit: number): number => {
    let n = 0
    for (const [k, v] of map) {
      if (n >= limit) break
      if (expired(v)) {
        map.delete(k)
        n++
      }
    }
    return n
  }
  // D13: a token is saved only for a user who exists and is enabled at the moment of the write
  const inactiveUser = (ts: ReadonlyArray<Token>) =>
    refusal(ts, (userId) => {
      const user = users.get(userId)
      return user !== undefined && (user.disabledAt ?? null) === null
    })
  // D15: the consent a code or implicit token is issued under, read in the same synchronous step
  const withdrawn = (under: Under) =>
    consentRefusal(under, consents.get(`${under.userId}\u0000${under.appKey}`)?.scope)
  // The unused codes of a user (of one application, or of all): a code is retired by deleting it
  const retireCodes = (userId: string, appKey: string | null) => {
    for (const [k, c] of codes) {
      if (c.userId === userId && c.usedAt === null && (appKey === null || c.appKey === appKey))
        codes.delete(k)
    }
  }
  const insertTokens = (ts: ReadonlyArray<Token>) => {
    for (const t of ts) {
      if (tokens.has(tokenKey(t.kind, t.tokenHash)))
        throw new StorageError({ message: "duplicate token hash" })
    }
    for (const t of ts) tokens.set(tokenKey(t.kind, t.tokenHash), { ...t })
  }

  return Context.make(ApplicationStore, {
    insert: (app) =>
      Effect.suspend(() => {
        if (apps.has(app.appKey)) return Effect.fail(new AppKeyTaken({ appKey: app.appKey }))
        apps.set(app.appKey, {
          ...app,
          previousSecretDigest: app.previousSecretDigest ?? null,
          previousSecretExpiresAt: app.previousSecretExpiresAt ?? null,
          previousSecretUsedAt: app.previousSecretUsedAt ?? null
        })
        return Effect.void
      }),
    find: (appKey) => Effect.sync(() => Option.fromNullable(apps.get(appKey))),
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
    update: (appKey, changes) =>
      Effect.sync(() => {
        const app = apps.get(appKey)
        if (app === undefined) return Option.none()
        // Only the fields a registration change may touch, whatever else the value carries
        const updated: Application = { ...app }
        for (const field of changeable) {
          if (changes[field] !== undefined) Object.assign(updated, { [field]: changes[field] })
        }
        apps.set(appKey, updated)
        return Option.some(updated)
      }),
    remove: (appKey, now) =>
      Effect.sync(() => {
        revokeWhere((t) => t.appKey === appKey, now)
        return apps.delete(appKey)
      })
  }).pipe(
    Context.add(UserStore, {
      insert: (user) =>
        Effect.suspend(() => {
          for (const u of users.values()) {
            if (u.username === user.username)
              return Effect.fail(new UsernameTaken({ username: user.username }))
          }
          users.set(user.userId, { ...user, disabledAt: user.disabledAt ?? null })
          return Effect.void
        }),
      setPasswordHash: (userId, passwordHash, options) =>
        Effect.sync(() => {
          const user = users.get(userId)
          if (user === undefined) return false
          if (options?.keepSessions !== true) sessions.endSessionsOf(userId)
          users.set(userId, { ...user, passwordHash })
          return true
        }),
      setDisabled: (userId, disabled, now) =>
        Effect.sync(() => {
          const user = users.get(userId)
          if (user === undefined) return false
          if (disabled) {
            revokeWhere((t) => t.userId === userId, now)
            retireCodes(userId, null)
            sessions.endSessionsOf(userId)
          }
          users.set(userId, { ...user, disabledAt: disabled ? (user.disabledAt ?? now) : null })
          return true
        }),
      findByUsername: (username) =>
        Effect.sync(() => Option.fromNullable([...users.values()].find((u) => u.username === username))),
      findById: (userId) => Effect.sync(() => Option.fromNullable(users.get(userId))),
      list: () => Effect.sync(() => [...users.values()].sort((a, b) => a.createdAt - b.createdAt)),
      remove: (userId, now) =>
        Effect.sync(() => {
          revokeWhere((t) => t.userId === userId, now)
          retireCodes(userId, null)
          for (const k of consents.keys()) if (k.startsWith(`${userId}\u0000`)) consents.delete(k)
          if (!users.delete(userId)) return false
          sessions.endSessionsOf(userId)
          return true
        })
    }),
    Context.add(CodeStore, {
      insert: (code) =>
        guard(() => {
          if (codes.has(code.codeHash)) throw new StorageError({ message: "duplicate code hash" })
          codes.set(code.codeHash, { ...code })
        }),
      find: (codeHash) => Effect.sync(() => Option.fromNullable(codes.get(codeHash))),
      redeem: (codeHash, now, issued) =>
        Effect.suspend(
          (): Effect.Effect<
            void,
            CodeNotFound | CodeAlreadyUsed | UserInactive | ConsentWithdrawn | StorageError
          > => {
            const code = codes.get(codeHash)
            if (code === undefined) return Effect.fail(new CodeNotFound())
            if (code.usedAt !== null) return Effect.fail(new CodeAlreadyUsed({ familyId: code.familyId }))
            if (code.expiresAt <= now) return Effect.fail(new CodeNotFound())
            const refused = inactiveUser(issued) ?? withdrawn(code)
            if (refused !== undefined) return Effect.fail(refused)
            return guard(() => {
              insertTokens(issued)
              codes.set(codeHash, { ...code, usedAt: now })
            })
          }
        ),
      purgeExpired: (now, limit) => Effect.sync(() => purge(codes, (c) => c.expiresAt <= now, limit))
    }),
    Context.add(TokenStore, {
      insert: (ts) =>
        Effect.suspend((): Effect.Effect<void, UserInactive | StorageError> => {
          const inactive = inactiveUser(ts)
          return inactive === undefined ? guard(() => insertTokens(ts)) : Effect.fail(inactive)
        }),
      insertUnderConsent: (ts, under) =>
        Effect.suspend((): Effect.Effect<void, UserInactive | ConsentWithdrawn | StorageError> => {
          const refused = inactiveUser(ts) ?? withdrawn(under)
          return refused === undefined ? guard(() => insertTokens(ts)) : Effect.fail(refused)
        }),
      find: (kind, hash) => Effect.sync(() => Option.fromNullable(tokens.get(tokenKey(kind, hash)))),
      rotate: (hash, now, grace, issued) =>
        Effect.suspend(
          (): Effect.Effect<void, TokenInactive | RefreshAlreadyRotated | UserInactive | StorageError> => {
            const t = tokens.get(tokenKey("refresh", hash))
            if (t === undefined || t.revokedAt !== null || t.expiresAt <= now)
              return Effect.fail(new TokenInactive())
            if (t.rotatedAt !== null && !(grace > 0 && t.rotatedAt >= now - grace)) {
              return Effect.fail(new RefreshAlreadyRotated({ familyId: t.familyId }))
            }
            const inactive = inactiveUser(issued)
            if (inactive !== undefined) return Effect.fail(inactive)
            return guard(() => {
              insertTokens(issued)
              tokens.set(tokenKey("refresh", hash), { ...t, rotatedAt: t.rotatedAt ?? now })
            })
          }
        ),
      revokeFamily: (familyId, now) => Effect.sync(() => revokeWhere((t) => t.familyId === familyId, now)),
      revokeSubject: (subject, now) =>
        Effect.sync(() =>
          revokeWhere(
            (t) =>
              t.appKey === subject.appKey &&
              ("openId" in subject ? t.openId === subject.openId : t.userId === subject.userId),
            now
          )
        ),
      revoke: (kind, hash, now) =>
        Effect.sync(() => {
          const t = tokens.get(tokenKey(kind, hash))
          if (t === undefined || t.revokedAt !== null) return false
          tokens.set(tokenKey(kind, hash), { ...t, revokedAt: now })
          return true
        }),
      purgeExpired: (now, limit) => Effect.sync(() => purge(tokens, (t) => t.expiresAt <= now, limit))
    }),
    Context.add(ConsentStore, {
      find: (userId, appKey) =>
        Effect.sync(() => Option.fromNullable(consents.get(`${userId}\u0000${appKey}`)?.scope)),
      grant: (userId, appKey, scope, now) =>
        Effect.sync(() => {
          const k = `${userId}\u0000${appKey}`
          consents.set(k, {
            scope: Scope.union(consents.get(k)?.scope ?? Scope.empty, scope),
            updatedAt: now
          })
        }),
      list: (userId) =>
        Effect.sync(() =>
          [...consents.entries()]
            .filter(([k]) => k.startsWith(`${userId}\u0000`))
            .map(([k, c]) => ({ appKey: k.slice(userId.length + 1), scope: c.scope, updatedAt: c.updatedAt }))
            .sort((a, b) => (a.appKey < b.appKey ? -1 : a.appKey > b.appKey ? 1 : 0))
        ),
      withdraw: (userId, appKey, now) =>
        Effect.sync(() => {
          if (!consents.delete(`${userId}\u0000${appKey}`)) return false
          retireCodes(userId, appKey)
          revokeWhere((t) => t.appKey === appKey && t.userId === userId, now)
          return true
        })
    }),
    Context.add(OpenIdStore, {
      getOrCreate: (appKey, userId, candidate) =>
        Effect.sync(() => {
          const k = `${appKey}\u0000${userId}`
          const found = openIds.get(k)
          if (found !== undefined) return found
          openIds.set(k, candidate)
          usersByOpenId.set(`${appKey}\u0000${candidate}`, userId)
          return candidate
        }),
      findUser: (appKey, openId) =>
        Effect.sync(() => Option.fromNullable(usersByOpenId.get(`${appKey}\u0000${openId}`)))
    }),
    Context.add(SessionStore, sessions.store),
    Context.add(ThrottleStore, memoryThrottleStore()),
    Context.add(SettingStore, {
      getOrCreate: (name, candidate) =>
        Effect.sync(() => {
          const found = settings.get(name)
          if (found !== undefined) return found
          settings.set(name, candidate)
          return candidate
        })
    })
  )
}

const stored = (event: AuditEvent): AuditEvent => ({ ...event, actor: event.actor ?? null })

/** A fresh in-memory audit store (kept apart from `Stores` so adapters may add it on their own). */
export const makeAudit = (): Context.Context<AuditStore> => {
  const events: Array<AuditEvent> = []
  return Context.make(AuditStore, {
    append: (event) => Effect.sync(() => void events.push(stored(event))),
    // Memory writes complete in one synchronous step: appending after success is atomic with them.
    appendWith: (added, write) => Effect.tap(write, () => void events.push(...added.map(stored))),
    query: ({ limit, appKey, type, since }) =>
      Effect.sync(() =>
        events
          .map((e, i) => ({ e, i }))
          .filter(
            ({ e }) =>
              (appKey === undefined || e.appKey === appKey) &&
              (type === undefined || e.type === type) &&
              (since === undefined || e.at >= since)
          )
          .sort((a, b) => b.e.at - a.e.at || b.i - a.i)
          .slice(0, Math.max(0, limit))
          .map(({ e }) => e)
      ),
    tail: ({ limit, appKey }) =>
      Effect.sync(() => events.filter((e) => appKey === undefined || e.appKey === appKey).slice(-limit)),
    // No retention of its own: deletes whatever the caller asks, oldest first.
    purgeBefore: (cutoff, limit) =>
      Effect.sync(() => {
        const n = limit > 0 ? Math.ceil(limit) : 0
        const doomed = new Set(
          events
            .flatMap((e, i) => (e.at < cutoff ? [{ at: e.at, i }] : []))
            .sort((a, b) => a.at - b.at || a.i - b.i)
            .slice(0, n)
            .map(({ i }) => i)
        )
        let kept = 0
        for (const [i, e] of events.entries()) if (!doomed.has(i)) events[kept++] = e
        events.length = kept
        return doomed.size
      })
  })
}

/** A layer of a fresh in-memory audit store. */
export const auditLayer: Layer.Layer<AuditStore> = Layer.effectContext(Effect.sync(makeAudit))

/** A layer of fresh in-memory stores (a new, empty set each time it is built). */
export const layer: Layer.Layer<Stores> = Layer.effectContext(Effect.sync(() => make()))

/** A layer of fresh in-memory stores whose session store keeps other bounds. */
export const layerWith = (limits: SessionLimits): Layer.Layer<Stores> =>
  Layer.effectContext(Effect.sync(() => make(limits)))
