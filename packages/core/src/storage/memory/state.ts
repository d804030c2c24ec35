/**
 * What the memory stores hold, and the writes several of them share (revoking tokens, retiring
 * codes, the checks of a token write). Every store of one `Memory.make` reads and writes the same
 * state in one synchronous step, so a change that touches several stores is atomic.
 */
import { Effect } from "effect"
import type { Application } from "../../model/Application.js"
import type { AuthorizationCode } from "../../model/AuthorizationCode.js"
import type { Operator } from "../../model/Operator.js"
import type { ScopeSet } from "../../model/Scope.js"
import type { Entry as ScopeEntry } from "../../model/ScopeCatalogue.js"
import type { SigningKey } from "../../model/SigningKey.js"
import type { Token } from "../../model/Token.js"
import type { TotpFactor } from "../../model/TotpFactor.js"
import type { User } from "../../model/User.js"
import { refusal as consentRefusal, type Under } from "../ConsentStore.js"
import type { TrustedDevice } from "../DeviceStore.js"
import type { ConsoleSession } from "../OperatorStore.js"
import type { Passkey } from "../PasskeyStore.js"
import type { ClientRegistration, InitialAccessToken } from "../RegistrationStore.js"
import type { SessionLimits } from "../SessionStore.js"
import { StorageError } from "../StorageError.js"
import { refusal } from "../UserStore.js"
import { logoutState, type MemoryLogout } from "./logout.js"
import { type MemorySessions, sessionStore } from "./sessions.js"

/** The records of one set of memory stores. */
export interface State {
  readonly apps: Map<string, Application>
  readonly users: Map<string, User>
  readonly codes: Map<string, AuthorizationCode>
  /** By `tokenKey`. */
  readonly tokens: Map<string, Token>
  /** By `consentKey`. */
  readonly consents: Map<string, { readonly scope: ScopeSet; readonly updatedAt: number }>
  /** (App Key, user id) → open_id. */
  readonly openIds: Map<string, string>
  /** (App Key, open_id) → user id, the reverse of openIds. */
  readonly usersByOpenId: Map<string, string>
  readonly settings: Map<string, string>
  readonly sessions: MemorySessions
  /** Back-channel logout: sessions' clients and the outbox. */
  readonly logout: MemoryLogout
  /** Signing keys, oldest first. */
  readonly keys: Array<SigningKey>
  /** Authenticator apps, by user id. */
  readonly factors: Map<string, TotpFactor>
  /** User id → the digests of their unused recovery codes. */
  readonly recoveryCodes: Map<string, Set<string>>
  /** Passkeys by credential id. */
  readonly passkeys: Map<string, Passkey>
  /** User id → their trusted-device generation, once `forgetDevices` moved it from 0. */
  readonly deviceGenerations: Map<string, number>
  /** Trusted devices by id digest. */
  readonly devices: Map<string, TrustedDevice>
  /** The scope catalogue, by scope name. */
  readonly scopes: Map<string, ScopeEntry>
  /** App Key → the user ids of its owners, in the order they were added. */
  readonly owners: Map<string, Set<string>>
  /** Initial access tokens by digest. */
  readonly initialTokens: Map<string, InitialAccessToken>
  /** Registrations by App Key (deleted with their application). */
  readonly registrations: Map<string, ClientRegistration>
  /** Operators by name. */
  readonly operators: Map<string, Operator>
  /** Console sessions by id digest. */
  readonly consoleSessions: Map<string, ConsoleSession>
}

/** A fresh, empty state whose session store keeps `limits`. */
export const empty = (limits: SessionLimits): State => {
  const users = new Map<string, User>()
  const logout = logoutState()
  return {
    apps: new Map(),
    users,
    codes: new Map(),
    tokens: new Map(),
    consents: new Map(),
    openIds: new Map(),
    usersByOpenId: new Map(),
    settings: new Map(),
    keys: [],
    factors: new Map(),
    recoveryCodes: new Map(),
    passkeys: new Map(),
    logout,
    deviceGenerations: new Map(),
    devices: new Map(),
    scopes: new Map(),
    owners: new Map(),
    initialTokens: new Map(),
    registrations: new Map(),
    operators: new Map(),
    consoleSessions: new Map(),
    sessions: sessionStore(limits, (userId) => users.get(userId), logout.ended)
  }
}

/** The key of a token in `State.tokens`. */
export const tokenKey = (kind: Token["kind"], hash: string): string => `${kind}:${hash}`

/** The key of two names in one map (a consent's user and App Key, an open_id's App Key and user). */
export const pairKey = (a: string, b: string): string => `${a}\u0000${b}`

/** Run a write; a unique-key violation (a thrown StorageError) fails the effect like a database would. */
export const guard = (f: () => void): Effect.Effect<void, StorageError> =>
  Effect.try({
    try: f,
    catch: (e) => (e instanceof StorageError ? e : new StorageError({ message: "memory store failure" }))
  })

/** Revoke the active tokens `pred` selects at `now`; how many. */
export const revokeWhere = (state: State, pred: (t: Token) => boolean, now: number): number => {
  let n = 0
  for (const [k, t] of state.tokens) {
    if (t.revokedAt === null && pred(t)) {
      state.tokens.set(k, { ...t, revokedAt: now })
      n++
    }
  }
  return n
}

/** Delete at most `limit` entries of `map` that `expired` selects, in map order; how many. */
export const purge = <A>(map: Map<string, A>, expired: (a: A) => boolean, limit: number): number => {
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

/** D13: a token is saved only for a user who exists and is enabled at the moment of the write. */
export const inactiveUser = (state: State, ts: ReadonlyArray<Token>) =>
  refusal(ts, (userId) => {
    const user = state.users.get(userId)
    return user !== undefined && (user.disabledAt ?? null) === null
  })

/** D15: the consent a code or implicit token is issued under, read in the same synchronous step. */
export const withdrawn = (state: State, under: Under) =>
  consentRefusal(under, state.consents.get(pairKey(under.userId, under.appKey))?.scope)

/** Retire the unused codes of a user (of one application, or of all) by deleting them. */
export const retireCodes = (state: State, userId: string, appKey: string | null): void => {
  for (const [k, c] of state.codes) {
    if (c.userId === userId && c.usedAt === null && (appKey === null || c.appKey === appKey))
      state.codes.delete(k)
  }
}

/** Save `ts`; throws StorageError, saving none, when one's hash is taken (run it in `guard`). */
export const insertTokens = (state: State, ts: ReadonlyArray<Token>): void => {
  for (const t of ts) {
    if (state.tokens.has(tokenKey(t.kind, t.tokenHash)))
      throw new StorageError({ message: "duplicate token hash" })
  }
  for (const t of ts) state.tokens.set(tokenKey(t.kind, t.tokenHash), { ...t })
}

/** Forget every trusted device of the user but `keep` (an id digest, or none); how many. */
export const forgetDevicesOf = (state: State, userId: string, keep: string | null): number => {
  let n = 0
  for (const [k, d] of state.devices) {
    if (d.userId === userId && k !== keep) {
      state.devices.delete(k)
      n++
    }
  }
  return n
}
