/**
 * Sign-in sessions of the authorize pages: server-side records in memory, found
 * through a random id carried in an HMAC-signed, HttpOnly, SameSite=Lax cookie.
 * Pending authorization requests live in the session (never in hidden fields),
 * each with its own CSRF token.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"

/** A pending authorization request: its raw query and the CSRF token of the form that continues it. */
export interface Pending {
  /** The authorize request's raw query string, re-validated on every POST. */
  readonly rawQuery: string
  /** The CSRF token the page's form must send back. */
  readonly csrf: string
  /** Which form continues it: the sign-in form or the consent form. */
  readonly step: "login" | "consent"
}

/** One browser's session. */
export interface Session {
  readonly id: string
  /** The signed-in platform user, if any. */
  userId: string | null
  username: string | null
  /** Pending authorization requests by transaction id (bounded; oldest dropped). */
  readonly pending: Map<string, Pending>
  /** Epoch milliseconds after which the session is gone (sliding). */
  expiresAt: number
}

/** Most pending requests one session keeps (one per open tab, roughly). */
export const maxPending = 8

/** Name of the session cookie. */
export const cookieName = "latchkey_session"

/** A random 256-bit identifier, base64url. */
export const randomId = (): string => randomBytes(32).toString("base64url")

const sign = (key: string, id: string): string =>
  createHmac("sha256", key).update(`latchkey-session\u0000${id}`).digest("base64url")

/** The cookie value for a session id: `id.signature`. */
export const cookieValue = (key: string, id: string): string => `${id}.${sign(key, id)}`

/** The session id in a cookie value when its signature is valid. */
export const verifyCookie = (key: string, value: string): string | null => {
  const dot = value.indexOf(".")
  if (dot <= 0) return null
  const id = value.slice(0, dot)
  const given = Buffer.from(value.slice(dot + 1))
  const expected = Buffer.from(sign(key, id))
  return given.length === expected.length && timingSafeEqual(given, expected) ? id : null
}

/** Compare two secrets in constant time (false for different lengths, without throwing). */
export const safeEqual = (a: string, b: string): boolean => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** Read one cookie from a `Cookie` header. */
export const readCookie = (header: string | undefined, name: string): string | undefined => {
  if (header === undefined) return undefined
  for (const part of header.split(";")) {
    const eq = part.indexOf("=")
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/** Where sessions are kept. */
export interface SessionStore {
  readonly get: (id: string) => Session | undefined
  readonly set: (session: Session) => void
  readonly delete: (id: string) => void
}

/**
 * Sessions in this process's memory, at most `maxSessions`. Under pressure the
 * oldest anonymous session goes first, so a flood of anonymous authorize requests
 * cannot push signed-in users out. Several server instances need sticky routing
 * for the pages, or a shared store.
 */
export const memoryStore = (maxSessions = 10_000): SessionStore => {
  const anonymous = new Map<string, Session>()
  const signedIn = new Map<string, Session>()
  // Both maps are in expiry order (one lifetime, refreshed on every set): expired ones lead
  const dropExpired = (m: Map<string, Session>) => {
    for (const [id, s] of m) {
      if (s.expiresAt > Date.now()) break
      m.delete(id)
    }
  }
  const remove = (id: string) => {
    anonymous.delete(id)
    signedIn.delete(id)
  }
  return {
    get: (id) => {
      const s = signedIn.get(id) ?? anonymous.get(id)
      if (s === undefined) return undefined
      if (s.expiresAt <= Date.now()) {
        remove(id)
        return undefined
      }
      return s
    },
    set: (session) => {
      remove(session.id)
      ;(session.userId === null ? anonymous : signedIn).set(session.id, session)
      while (anonymous.size + signedIn.size > maxSessions) {
        const pool = anonymous.size > 0 ? anonymous : signedIn
        const oldest = pool.keys().next().value
        if (oldest === undefined) break
        pool.delete(oldest)
      }
      dropExpired(anonymous)
      dropExpired(signedIn)
    },
    delete: remove
  }
}

/** A new, empty session. */
export const make = (ttlSeconds: number): Session => ({
  id: randomId(),
  userId: null,
  username: null,
  pending: new Map(),
  expiresAt: Date.now() + ttlSeconds * 1000
})

/** Add a pending request to a session and return its transaction id. */
export const addPending = (
  session: Session,
  pending: Omit<Pending, "csrf">
): { txn: string; csrf: string } => {
  const txn = randomId()
  const csrf = randomId()
  session.pending.set(txn, { ...pending, csrf })
  while (session.pending.size > maxPending) {
    const oldest = session.pending.keys().next().value
    if (oldest === undefined) break
    session.pending.delete(oldest)
  }
  return { txn, csrf }
}

/**
 * Take the pending request `txn` when `csrf` matches its token and it belongs to
 * `step`. A taken request is removed, so each form is good once.
 */
export const takePending = (
  session: Session,
  txn: string | undefined,
  csrf: string | undefined,
  step: Pending["step"]
): Pending | null => {
  if (txn === undefined || csrf === undefined) return null
  const p = session.pending.get(txn)
  if (p === undefined || p.step !== step || !safeEqual(p.csrf, csrf)) return null
  session.pending.delete(txn)
  return p
}
