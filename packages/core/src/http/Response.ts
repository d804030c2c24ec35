/**
 * The response value every endpoint answers with, its JSON form, and the one boundary between an
 * endpoint's failures and its answer (`settle`). Re-exported by `Http`; a module of its own so
 * the protocol modules that answer (the Bearer check) import it without importing the router.
 */
import { Cause, Effect, Option } from "effect"
import * as OAuthError from "../model/OAuthError.js"

/** A response for the binding to write. */
export interface HttpResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /**
   * The OAuth error code this response answers with (its JSON `error`, or the `error` of its
   * Bearer challenge), as a value for metrics and logs: bindings never write it.
   */
  readonly error?: OAuthError.Code | undefined
}

const jsonHeaders = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
  pragma: "no-cache"
} as const

/**
 * A JSON response with the no-store headers of RFC 6749 §5.1: the one shared headers object when
 * there is nothing to add (a response's headers are never changed in place), else a copy with `extra`.
 */
export const json = (
  status: number,
  value: unknown,
  extra?: Readonly<Record<string, string>>
): HttpResponse => ({
  status,
  headers: extra === undefined ? jsonHeaders : { ...jsonHeaders, ...extra },
  body: JSON.stringify(value)
})

/** The `Retry-After` header for a wait of `seconds`: whole seconds, at least one. */
export const retryAfter = (seconds: number): { readonly "retry-after": string } => ({
  "retry-after": String(Math.max(1, Math.ceil(seconds)))
})

/** The answer when a store is unavailable (RFC 6749 §5.2 `temporarily_unavailable`), with Retry-After. */
export const unavailable = new OAuthError.TemporarilyUnavailable({
  description: "storage is unavailable; retry shortly",
  retryAfter: 1
})

/** The answer to a defect; its cause goes to the log, never to the client. */
export const serverError = new OAuthError.ServerError({ description: "internal server error" })

/** A store's failure to answer (`StorageError`), by its tag. */
export type StorageFailure = { readonly _tag: "StorageError" }

const isStorageFailure = (e: unknown): e is StorageFailure =>
  typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "StorageError"

/** The failures of an effect `E` once `settle`d: storage failures and defects become OAuth errors. */
export type Settled<E> =
  | Exclude<E, StorageFailure>
  | OAuthError.TemporarilyUnavailable
  | OAuthError.ServerError

/** Log a defect's cause with `message` (never answered to the client). */
export const logDefect = (cause: Cause.Cause<unknown>, message = "unexpected failure"): Effect.Effect<void> =>
  Effect.logError(message, Cause.pretty(cause))

/**
 * The boundary between an endpoint's failures and its answer, the same for every endpoint: a
 * store that cannot answer (`StorageError`) fails as `unavailable` (503 with Retry-After), a
 * defect or interruption as `serverError` (500; its cause is logged with `message`, never
 * answered). Every other failure passes through, for the caller to answer in its own form (JSON,
 * a page, a Bearer challenge) with these two.
 */
export const settle = <A, E, R>(
  program: Effect.Effect<A, E, R>,
  message = "unexpected failure"
): Effect.Effect<A, Settled<E>, R> =>
  Effect.catchAllCause(
    Effect.mapError(program, (e) => (isStorageFailure(e) ? unavailable : (e as Exclude<E, StorageFailure>))),
    (cause): Effect.Effect<never, Settled<E>> => {
      const failure = Cause.failureOption(cause)
      return Option.isSome(failure)
        ? Effect.fail(failure.value)
        : Effect.zipRight(logDefect(cause, message), Effect.fail(serverError))
    }
  )

/** The response for an OAuth error (RFC 6749 §5.2, RFC 6750 §3). */
export const errorResponse = (
  e: OAuthError.OAuthError | OAuthError.InvalidToken | OAuthError.InsufficientScope
): HttpResponse => {
  const extra =
    e._tag === "InvalidClient"
      ? { "www-authenticate": 'Basic realm="latchkey"' }
      : e._tag === "RateLimited" || e._tag === "TemporarilyUnavailable"
        ? retryAfter(e.retryAfter)
        : undefined
  return { ...json(e.status, { error: e.error, error_description: e.description }, extra), error: e.error }
}

/** Every status a request is refused with before any OAuth rule runs. */
export const refusalStatuses = [400, 405, 413, 415] as const

/** Why a request is refused before any OAuth rule runs: always `invalid_request`. */
export interface Refusal {
  readonly status: (typeof refusalStatuses)[number]
  readonly description: string
  readonly headers: Readonly<Record<string, string>>
}

/** The refusal of a method a path does not serve (`allow` lists the ones it does). */
export const methodNotAllowed = (allow: string): Refusal => ({
  status: 405,
  description: `method not allowed; use ${allow.split(", ").join(" or ")}`,
  headers: { allow }
})

/** The JSON answer to a refusal. */
export const refusalResponse = (r: Refusal): HttpResponse => ({
  ...json(r.status, { error: "invalid_request", error_description: r.description }, r.headers),
  error: "invalid_request"
})

/**
 * Map every failure of an endpoint to a response, in one step: OAuth errors as they are, storage to
 * 503, defects to 500 (as `settle` does).
 */
export const respond = <R>(
  program: Effect.Effect<HttpResponse, OAuthError.OAuthError | StorageFailure, R>
): Effect.Effect<HttpResponse, never, R> =>
  Effect.catchAllCause(program, (cause) => {
    const failure = Cause.failureOption(cause)
    if (Option.isNone(failure)) return Effect.as(logDefect(cause), errorResponse(serverError))
    const e = failure.value
    return Effect.succeed(errorResponse(e._tag === "StorageError" ? unavailable : e))
  })
