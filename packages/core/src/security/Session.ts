/**
 * Sign-in sessions of the authorize pages: a random id in an HMAC-signed cookie,
 * the session and the authorization requests pending in it in the SessionStore
 * (by digest only), a sliding lifetime from the Clock within an absolute one from
 * the sign-in, a new id at every change of user (no session fixation), and forms
 * that are good once.
 */
import { Effect, Option } from "effect"
import { Config } from "../model/Config.js"
import type { User } from "../model/User.js"
import { isPlainText } from "../oauth/requests/Params.js"
import { hmac, sha256, timingSafeEqual } from "../services/Digest.js"
import * as Entropy from "../services/Entropy.js"
import { issueSeconds, nowSeconds } from "../services/internal/time.js"
import { DeviceStore, type TrustedDevice } from "../storage/DeviceStore.js"
import {
  type PendingRecord,
  type SessionRecord,
  SessionStore,
  type SignInMethod,
  type Step
} from "../storage/SessionStore.js"
import type { StorageError } from "../storage/StorageError.js"
import { UserStore } from "../storage/UserStore.js"
import { labelOf } from "./DeviceLabel.js"

/** Name of the session cookie. */
export const cookieName = "latchkey_session"

/** A browser's session as the pages use it. */
export interface Session {
  /** The id the cookie carries; only its digest is stored. */
  readonly id: string
  readonly idHash: string
  readonly userId: string | null
  readonly username: string | null
  /** When the user signed in (epoch seconds), or null while nobody has. */
  readonly authenticatedAt: number | null
  /** Read from the store: saving it only renews it, and a session ended since stays ended. */
  readonly stored: boolean
  /** How the user signed in, when not with a password (`SessionRecord.method`). */
  readonly method?: SignInMethod
}

// A session's sign-in method as an optional field: absent for a password
const methodOf = (method: SignInMethod | undefined) => (method === undefined ? {} : { method })

/** What a page needs to continue a pending request: the hidden fields of its form. */
export interface FormTicket {
  readonly txn: string
  readonly csrf: string
}

const cookieKey = (serverKey: string): string => `${serverKey}\u0000latchkey-session-cookie`

const signature = (id: string) =>
  Effect.flatMap(Config, ({ serverKey }) => hmac(cookieKey(serverKey), `latchkey-session\u0000${id}`))

/** One cookie's value from a `Cookie` header. */
export const readCookie = (header: string | undefined, name: string): string | undefined => {
  if (header === undefined) return undefined
  for (const part of header.split(";")) {
    const eq = part.indexOf("=")
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/** A `Set-Cookie` value: HttpOnly, SameSite=Lax, Secure under an https issuer. */
const setCookie = (
  name: string,
  value: string,
  maxAge: number,
  cookie: { readonly path: string; readonly secure: boolean }
): string =>
  `${name}=${value}; Path=${cookie.path}; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${cookie.secure ? "; Secure" : ""}`

/** The `Set-Cookie` value that removes the session cookie from the browser (a logout). */
export const clearing = (cookie: { readonly path: string; readonly secure: boolean }): string =>
  setCookie(cookieName, "", 0, cookie)

/** The cookie value for a session: `id.signature`. */
export const cookieValue = (session: Session) =>
  Effect.map(signature(session.id), (sig) => `${session.id}.${sig}`)

/** When a session signed in at `authenticatedAt` is over, whatever its idle lifetime says (ASVS V3.3.2). */
export const absoluteEnd = (authenticatedAt: number) =>
  Effect.map(Config, ({ sessionMaxAge }) => authenticatedAt + sessionMaxAge)

/**
 * The live session a `Cookie` header names; none when absent, forged, expired or unknown, or
 * signed in longer ago than `Config.sessionMaxAge` (then its user signs in again).
 */
export const load = Effect.fnUntraced(function* (cookieHeader: string | undefined) {
  const value = readCookie(cookieHeader, cookieName)
  const dot = value?.indexOf(".") ?? -1
  if (value === undefined || dot <= 0) return Option.none<Session>()
  const id = value.slice(0, dot)
  if (!timingSafeEqual(value.slice(dot + 1), yield* signature(id))) return Option.none<Session>()
  const idHash = yield* sha256(id)
  const now = yield* nowSeconds
  const found = yield* Effect.flatMap(SessionStore, (s) => s.find(idHash, now))
  if (Option.isNone(found)) return Option.none<Session>()
  const { userId, username, authenticatedAt, method } = found.value
  // ASVS V3.3.2: checked here too, so a shorter sessionMaxAge applies at once to stored sessions
  if (userId !== null && (authenticatedAt === null || (yield* absoluteEnd(authenticatedAt)) <= now)) {
    return Option.none<Session>()
  }
  return Option.some<Session>({
    id,
    idHash,
    userId,
    username,
    authenticatedAt,
    stored: true,
    ...methodOf(method)
  })
})

/**
 * The session's `sid` (OpenID Connect Front-/Back-Channel Logout's session id, carried by the ID
 * tokens issued in it): a digest of the digest the store keeps it under, so it is stable for the
 * session's life, names it to whoever holds the store (a later back-channel logout finds its
 * session by it), and tells nothing of the cookie's secret value.
 */
export const sidOf = (idHash: string): Effect.Effect<string, never, never> =>
  sha256(`latchkey-sid\u0000${idHash}`)

/** A new anonymous session, not stored until it is saved. */
export const fresh: Effect.Effect<Session, never, Entropy.Entropy> = Effect.gen(function* () {
  const id = yield* Entropy.token
  return { id, idHash: yield* sha256(id), userId: null, username: null, authenticatedAt: null, stored: false }
})

// The record of `session` with its lifetime renewed from now, and the cookie's Max-Age
const renewed = Effect.fnUntraced(function* (session: Session) {
  const { sessionTtl } = yield* Config
  // Rounded up, like token lifetimes: a session lives at least sessionTtl seconds
  const now = yield* issueSeconds
  const idle = now + sessionTtl
  // ASVS V3.3.2: the sliding lifetime never reaches past the absolute one
  const expiresAt =
    session.authenticatedAt === null ? idle : Math.min(idle, yield* absoluteEnd(session.authenticatedAt))
  const record: SessionRecord = {
    idHash: session.idHash,
    userId: session.userId,
    username: session.username,
    authenticatedAt: session.authenticatedAt,
    expiresAt,
    ...methodOf(session.method)
  }
  return { record, maxAge: Math.max(0, expiresAt - now) }
})

/** A write prepared: `write` (store calls only, for `Transaction.atomically`) and what it gives the browser. */
export interface Prepared<A, B> {
  /** The store calls, not run yet. */
  readonly write: Effect.Effect<A, StorageError, SessionStore>
  /** What the browser gets once `write` committed (a `Set-Cookie` value, a form's ticket). */
  readonly value: B
}

/**
 * Store the session with a renewed lifetime, never past its absolute end (a session read from
 * the store is only renewed, never stored again once ended), prepared: the write, and the
 * `Set-Cookie` value.
 */
export const saving = Effect.fnUntraced(function* (
  session: Session,
  cookie: { path: string; secure: boolean }
) {
  const { record, maxAge } = yield* renewed(session)
  // A session read before a disable (or a new password) ended it is not stored again
  const write = Effect.flatMap(SessionStore, (s) =>
    session.stored ? Effect.asVoid(s.renew(record)) : s.save(record)
  )
  const prepared: Prepared<void, string> = {
    write,
    value: setCookie(cookieName, yield* cookieValue(session), maxAge, cookie)
  }
  return prepared
})

/** `saving`, written: returns the `Set-Cookie` value. */
export const save = Effect.fnUntraced(function* (
  session: Session,
  cookie: { path: string; secure: boolean }
) {
  const { write, value } = yield* saving(session, cookie)
  yield* write
  return value
})

/** A new session for `user` (or anonymous), the old one deleted: a sign-in or sign-out never keeps an id. */
export const regenerate = Effect.fnUntraced(function* (
  old: Option.Option<Session>,
  user: { readonly userId: string; readonly username: string } | null
) {
  if (Option.isSome(old)) yield* Effect.flatMap(SessionStore, (s) => s.remove(old.value.idHash))
  const next = yield* fresh
  if (user === null) return next
  return { ...next, userId: user.userId, username: user.username, authenticatedAt: yield* nowSeconds }
})

/** A sign-in prepared: the write (true once stored), the new session's `Set-Cookie` value, and the new session. */
export interface SigningIn extends Prepared<boolean, string> {
  /** The new session, as it is once `write` answered true (a page shown with it saves it again). */
  readonly session: Session
}

/**
 * Sign `user` in (the account as its password was checked), prepared: the write stores a new
 * session only while the account is still enabled with that password (D16, docs/security.md),
 * then deletes the old session, and answers whether it did; nothing is stored and the old
 * session is kept when the account was disabled, deleted or given a new password since it was
 * read. The value is the new session's `Set-Cookie`. `method` records a sign-in that was not
 * with a password (a passkey's: the account as it was read, password hash included).
 */
export const signingIn = Effect.fnUntraced(function* (
  old: Session,
  user: Pick<User, "userId" | "username" | "passwordHash">,
  cookie: { path: string; secure: boolean },
  method?: SignInMethod
) {
  const next = { ...(yield* regenerate(Option.none(), user)), ...methodOf(method) }
  const { record, maxAge } = yield* renewed(next)
  const write = Effect.flatMap(SessionStore, (store) =>
    Effect.flatMap(
      store.signIn(record, { userId: user.userId, passwordHash: user.passwordHash }),
      (stored) =>
        // A new session id at sign-in: an id planted before it is worth nothing after
        stored ? Effect.as(store.remove(old.idHash), true) : Effect.succeed(false)
    )
  )
  const prepared: SigningIn = {
    write,
    value: setCookie(cookieName, yield* cookieValue(next), maxAge, cookie),
    session: { ...next, stored: true }
  }
  return prepared
})

/** Remember an authorization request in the session until its form comes back, prepared: the write, and the form's ticket. */
export const pending = Effect.fnUntraced(function* (session: Session, rawQuery: string, step: Step) {
  const { sessionTtl } = yield* Config
  const now = yield* issueSeconds
  const ticket: FormTicket = { txn: yield* Entropy.id(), csrf: yield* Entropy.token }
  const record: PendingRecord = {
    sessionHash: session.idHash,
    txn: ticket.txn,
    rawQuery,
    csrfHash: yield* sha256(ticket.csrf),
    step,
    createdAt: now,
    expiresAt: now + sessionTtl
  }
  const prepared: Prepared<void, FormTicket> = {
    write: Effect.flatMap(SessionStore, (s) => s.addPending(record)),
    value: ticket
  }
  return prepared
})

/** `pending`, written: returns the form's ticket. */
export const addPending = Effect.fnUntraced(function* (session: Session, rawQuery: string, step: Step) {
  const { write, value } = yield* pending(session, rawQuery, step)
  yield* write
  return value
})

/**
 * The request a form continues, before it is taken: it must be pending in this session for
 * this step, and the form must carry its CSRF token. `take` deletes it and answers whether this
 * caller did: true for one caller only, however many post the same form, from any server
 * instance. None when the form continues nothing.
 */
export const claimPending = Effect.fnUntraced(function* (
  session: Session,
  txn: string | undefined,
  csrf: string | undefined,
  step: Step
) {
  // docs/security.md T13: a txn that is not plain text names no pending request, in any store
  if (txn === undefined || csrf === undefined || txn.length > 64 || csrf.length > 64 || !isPlainText(txn))
    return Option.none<Prepared<boolean, PendingRecord>>()
  const store = yield* SessionStore
  const found = yield* store.findPending(session.idHash, txn, yield* nowSeconds)
  if (Option.isNone(found) || found.value.step !== step)
    return Option.none<Prepared<boolean, PendingRecord>>()
  if (!timingSafeEqual(yield* sha256(csrf), found.value.csrfHash))
    return Option.none<Prepared<boolean, PendingRecord>>()
  return Option.some<Prepared<boolean, PendingRecord>>({
    write: store.takePending(session.idHash, txn),
    value: found.value
  })
})

/**
 * Take the request a form continues (`claimPending`): taken once, so a second post of the same
 * form, from any server instance, finds nothing.
 */
export const takePending = Effect.fnUntraced(function* (
  session: Session,
  txn: string | undefined,
  csrf: string | undefined,
  step: Step
) {
  const claimed = yield* claimPending(session, txn, csrf, step)
  if (Option.isNone(claimed)) return Option.none<PendingRecord>()
  return (yield* claimed.value.write) ? Option.some(claimed.value.value) : Option.none<PendingRecord>()
})

/** Name of the trusted-device cookie. */
export const deviceCookieName = "latchkey_device"

/** How long a browser stays trusted for the user who signed in with it (180 days). */
export const deviceTtl = 180 * 24 * 3600

/** What a trusted-device cookie is bound to: one account, by id, with its current password. */
export type DeviceOwner = Pick<User, "userId" | "passwordHash">

// Stands in for an unknown username, so that checking a cookie for it costs the same
const nobody: DeviceOwner = { userId: "", passwordHash: "" }

const deviceKey = (serverKey: string): string => `${serverKey}\u0000latchkey-device-cookie`

/**
 * The signature of a cookie from before device records: bound to the password hash (a new
 * password, or a new account under the same username, ends the trust) and to the user's device
 * generation (`UserStore.forgetDevices` ends it too); generation 0 signs what every cookie set
 * before generations existed carries.
 */
const legacySignature = (nonce: string, owner: DeviceOwner, generation: number) =>
  Effect.flatMap(Config, ({ serverKey }) =>
    hmac(
      deviceKey(serverKey),
      generation === 0
        ? `latchkey-device-v2\u0000${nonce}\u0000${owner.userId}\u0000${owner.passwordHash}`
        : `latchkey-device-v3\u0000${nonce}\u0000${owner.userId}\u0000${owner.passwordHash}\u0000${generation}`
    )
  )

/**
 * The signature of a recorded cookie (`recordedForm`): bound to the password hash; its record
 * (`DeviceStore`), not a generation, is what forgetting it deletes.
 */
const recordedSignature = (nonce: string, owner: DeviceOwner) =>
  Effect.flatMap(Config, ({ serverKey }) =>
    hmac(
      deviceKey(serverKey),
      `latchkey-device-v4\u0000${nonce}\u0000${owner.userId}\u0000${owner.passwordHash}`
    )
  )

/** How a recorded cookie's value starts (`r.nonce.signature`): it is trusted only while its record is. */
const recordedForm = "r."

/** The user's device generation, as the store keeps it. */
const generationOf = (userId: string) => Effect.flatMap(UserStore, (users) => users.deviceGeneration(userId))

/** A trusted device a browser's cookie names. */
export interface Device {
  /** The nonce the cookie carries: the key of the browser's own sign-in throttle budget. */
  readonly nonce: string
  /** SHA-256 of the nonce, the key of its `DeviceStore` record; null for a cookie from before records. */
  readonly idHash: string | null
}

/**
 * The trusted device a `Cookie` header names for `owner` (null: an unknown username, never
 * trusted, checked at the same cost: the same HMAC and the same store read): set in a browser when
 * that user signs in there, it gives the browser a sign-in throttle budget of its own, so failures
 * sent from elsewhere for the same username never lock it out (OWASP's device cookies). None when
 * absent, forged, another account's, set before the account's password last changed, or
 * forgotten: a recorded cookie whose record is gone (forgotten one by one or with the others,
 * expired), a cookie from before records whose generation the user moved on.
 */
export const device = Effect.fnUntraced(function* (
  cookieHeader: string | undefined,
  owner: DeviceOwner | null
) {
  const value = readCookie(cookieHeader, deviceCookieName)
  if (value === undefined || value.length > 200) return Option.none<Device>()
  const recorded = value.startsWith(recordedForm)
  const rest = recorded ? value.slice(recordedForm.length) : value
  const dot = rest.indexOf(".")
  if (dot <= 0) return Option.none<Device>()
  const nonce = rest.slice(0, dot)
  const signer = owner ?? nobody
  if (!recorded) {
    const expected = yield* legacySignature(nonce, signer, yield* generationOf(signer.userId))
    const ok = timingSafeEqual(rest.slice(dot + 1), expected)
    return ok && owner !== null ? Option.some<Device>({ nonce, idHash: null }) : Option.none<Device>()
  }
  const idHash = yield* sha256(nonce)
  const expected = yield* recordedSignature(nonce, signer)
  const now = yield* nowSeconds
  const found = yield* Effect.flatMap(DeviceStore, (d) => d.find(idHash, now))
  const live = Option.isSome(found) && found.value.userId === signer.userId
  const ok = timingSafeEqual(rest.slice(dot + 1), expected) && live
  return ok && owner !== null ? Option.some<Device>({ nonce, idHash }) : Option.none<Device>()
})

/** The nonce of the trusted device a `Cookie` header names for `owner` (`device`): its throttle budget's key. */
export const trustedDevice = (cookieHeader: string | undefined, owner: DeviceOwner | null) =>
  Effect.map(
    device(cookieHeader, owner),
    Option.map((d) => d.nonce)
  )

/** A trusted device prepared: the store calls (for `Transaction.atomically`) and the `Set-Cookie` value, if any. */
export interface DeviceWrite<B> {
  readonly write: Effect.Effect<unknown, StorageError, DeviceStore>
  readonly value: B
}

/**
 * Make this browser a trusted device of `owner` while its password stays and its record does,
 * prepared: the write records it (its label from `userAgent`, `DeviceLabel.labelOf`), the value
 * is the recorded cookie's `Set-Cookie`.
 */
export const trusting = Effect.fnUntraced(function* (
  owner: DeviceOwner,
  cookie: { path: string; secure: boolean },
  userAgent: string | undefined
) {
  const nonce = yield* Entropy.id()
  const signature = yield* recordedSignature(nonce, owner)
  const now = yield* nowSeconds
  const record: TrustedDevice = {
    idHash: yield* sha256(nonce),
    userId: owner.userId,
    ...labelOf(userAgent),
    trustedAt: now,
    lastSignInAt: now,
    expiresAt: now + deviceTtl
  }
  const prepared: DeviceWrite<string> = {
    write: Effect.flatMap(DeviceStore, (d) => d.insert(record)),
    value: setCookie(deviceCookieName, `${recordedForm}${nonce}.${signature}`, deviceTtl, cookie)
  }
  return prepared
})

/**
 * What a sign-in of `owner` does for this browser's trust (`here`: its device as read before),
 * prepared: a recorded device has the sign-in recorded on it and keeps its cookie (null); any
 * other browser, untrusted or trusted with a cookie from before records, is made a recorded
 * trusted device (`trusting`).
 */
export const atSignIn = Effect.fnUntraced(function* (
  here: Option.Option<Device>,
  owner: DeviceOwner,
  cookie: { path: string; secure: boolean },
  userAgent: string | undefined
) {
  const idHash = Option.isSome(here) ? here.value.idHash : null
  if (idHash === null) {
    const trusted: DeviceWrite<string | null> = yield* trusting(owner, cookie, userAgent)
    return trusted
  }
  const at = yield* nowSeconds
  const prepared: DeviceWrite<string | null> = {
    write: Effect.flatMap(DeviceStore, (d) => d.recordSignIn(owner.userId, idHash, at)),
    value: null
  }
  return prepared
})
