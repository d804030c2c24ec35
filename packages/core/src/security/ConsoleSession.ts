/**
 * Sessions of the operator console: a random id in an HMAC-signed cookie (HttpOnly,
 * SameSite=Strict, Path=/console, Secure under an https issuer), the session in the
 * `OperatorStore` by the SHA-256 of the id only, a fixed lifetime from the Clock, and the CSRF
 * token of its forms derived from the id under the server key. Before a sign-in the cookie holds
 * an id that is stored nowhere: the sign-in form's token is derived from it, so a form posted
 * from another browser is refused (no login CSRF). A sign-in always starts a new id.
 */
import { Effect, Option } from "effect"
import { Config } from "../model/Config.js"
import type { Operator } from "../model/Operator.js"
import { isPlainText } from "../oauth/requests/Params.js"
import { hmac, sha256, timingSafeEqual } from "../services/Digest.js"
import * as Entropy from "../services/Entropy.js"
import { nowSeconds } from "../services/internal/time.js"
import { type ConsoleSession, OperatorStore } from "../storage/OperatorStore.js"
import { readCookie } from "./Session.js"

/** Name of the console's cookie. */
export const cookieName = "latchkey_console"

/** The cookie's path: the console's, so no other page of the admin listener receives it. */
export const cookiePath = "/console"

/** How long a console session lasts from its sign-in, in seconds: two hours, renewed by nothing. */
export const sessionTtl = 2 * 3600

/** How long the cookie of a browser that has not signed in yet lasts, in seconds. */
export const visitorTtl = 3600

/** The browser's console cookie, read and verified: the id, and the session it names when one is stored. */
export interface Visit {
  /** The id the cookie carries, or a new one when it carried none (then `setCookie` is set). */
  readonly id: string
  /** The signed-in session and its operator, when the id names a live one. */
  readonly signedIn: Option.Option<{ readonly session: ConsoleSession; readonly operator: Operator }>
  /** The `Set-Cookie` value of a new visitor's id, to send with the answer. */
  readonly setCookie: Option.Option<string>
}

const keyOf = (serverKey: string, purpose: string): string => `${serverKey}\u0000latchkey-console-${purpose}`

const signature = (id: string) =>
  Effect.flatMap(Config, ({ serverKey }) => hmac(keyOf(serverKey, "cookie"), id))

/** The CSRF token of the forms of the browser whose cookie carries `id`. */
export const csrfToken = (id: string) =>
  Effect.flatMap(Config, ({ serverKey }) => hmac(keyOf(serverKey, "csrf"), id))

/** Whether `token` is the CSRF token of `id`, compared in constant time. */
export const csrfMatches = (id: string, token: string | undefined) =>
  Effect.map(csrfToken(id), (expected) => token !== undefined && timingSafeEqual(expected, token))

/** The `Set-Cookie` value carrying `id` for `maxAge` seconds (0 removes the cookie). */
export const setCookie = (id: string, maxAge: number) =>
  Effect.flatMap(Config, ({ issuer }) =>
    Effect.map(id === "" ? Effect.succeed("") : signature(id), (sig) => {
      const value = id === "" ? "" : `${id}.${sig}`
      const secure = issuer.startsWith("https:") ? "; Secure" : ""
      return `${cookieName}=${value}; Path=${cookiePath}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure}`
    })
  )

// An id is 43 base64url characters (Entropy.token); anything else is no cookie of ours
const idPattern = /^[A-Za-z0-9_-]{43}$/

/** The verified id of the console cookie in `cookieHeader`, if it carries one signed by this server. */
const verifiedId = (cookieHeader: string | undefined) =>
  Effect.gen(function* () {
    const raw = readCookie(cookieHeader, cookieName)
    if (raw === undefined || !isPlainText(raw)) return Option.none<string>()
    const dot = raw.indexOf(".")
    const id = raw.slice(0, dot)
    if (dot === -1 || !idPattern.test(id)) return Option.none<string>()
    const expected = yield* signature(id)
    return timingSafeEqual(expected, raw.slice(dot + 1)) ? Option.some(id) : Option.none<string>()
  })

/**
 * The browser's visit: its verified id and the session it names, if live at the Clock's now and
 * its operator still exists; a browser without a good cookie gets a new visitor id to keep.
 */
export const load = Effect.fnUntraced(function* (cookieHeader: string | undefined) {
  const known = yield* verifiedId(cookieHeader)
  if (Option.isNone(known)) {
    const id = yield* Entropy.token
    return {
      id,
      signedIn: Option.none(),
      setCookie: Option.some(yield* setCookie(id, visitorTtl))
    } satisfies Visit
  }
  const id = known.value
  const store = yield* OperatorStore
  const session = yield* store.findSession(yield* sha256(id), yield* nowSeconds)
  const operator = Option.isNone(session) ? Option.none() : yield* store.find(session.value.operator)
  const signedIn =
    Option.isSome(session) && Option.isSome(operator)
      ? Option.some({ session: session.value, operator: operator.value })
      : Option.none()
  return { id, signedIn, setCookie: Option.none() } satisfies Visit
})

/**
 * A new session of `operator` under a new id, stored with the sign-in recorded (false when the
 * operator is gone since), and the cookie that carries it.
 */
export const start = Effect.fnUntraced(function* (operator: string) {
  const id = yield* Entropy.token
  const createdAt = yield* nowSeconds
  const session: ConsoleSession = {
    idHash: yield* sha256(id),
    operator,
    createdAt,
    expiresAt: createdAt + sessionTtl
  }
  const write = Effect.flatMap(OperatorStore, (store) => store.startSession(session))
  return { session, write, setCookie: yield* setCookie(id, sessionTtl) }
})
