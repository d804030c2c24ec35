/**
 * Resource-server middleware: require a Bearer access token (RFC 6750) with the
 * given scopes, and expose who it speaks for.
 */
import { type ApplicationStore, Bearer, Http, Scope, type TokenStore } from "@latchkey/core"
import { Cause, type Effect, Exit, type ManagedRuntime, Option } from "effect"
import type { Request, RequestHandler, Response } from "express"

/** Options of `requireBearer`. */
export interface Options {
  /** Scopes the token must carry, comma- or space-separated or as a list (default: none). */
  readonly scope?: string | ReadonlyArray<string>
  /** The realm in `WWW-Authenticate` (default "latchkey"). */
  readonly realm?: string
}

/** What the runtime must provide to check tokens. */
export type Requirements = TokenStore.TokenStore | ApplicationStore.ApplicationStore

const principals = new WeakMap<Request, Bearer.Principal>()

/** The principal `requireBearer` accepted for this request. */
export const principal = (req: Request): Bearer.Principal => {
  const p = principals.get(req)
  if (p === undefined) throw new Error("principal(req) is only available after requireBearer")
  return p
}

// RFC 6750 §3: auth-param values are quoted strings; keep them to safe characters
const quoted = (s: string) => `"${s.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, "")}"`

const challenge = (realm: string, params: Record<string, string>): string =>
  [`Bearer realm=${quoted(realm)}`, ...Object.entries(params).map(([k, v]) => `${k}=${quoted(v)}`)].join(", ")

const send = (res: Response, status: number, wwwAuthenticate: string, error: string, description: string) => {
  const r = Http.json(
    status,
    { error, error_description: description },
    { "www-authenticate": wwwAuthenticate }
  )
  res.status(r.status)
  for (const [k, v] of Object.entries(r.headers)) res.setHeader(k, v)
  res.end(r.body)
}

/**
 * Middleware that lets a request through only with a valid Bearer token carrying
 * every scope in `options.scope`; `principal(req)` then tells who it speaks for.
 */
export const requireBearer = (
  runtime: ManagedRuntime.ManagedRuntime<Requirements, unknown>,
  options: Options = {}
): RequestHandler => {
  const realm = options.realm ?? "latchkey"
  const raw = typeof options.scope === "string" ? options.scope : (options.scope ?? []).join(",")
  const parsed = Scope.parse(raw)
  if (parsed._tag === "Left") throw new TypeError(`requireBearer: ${parsed.left.description}`)
  const required = parsed.right
  return (req, res, next) => {
    const all = req.headersDistinct.authorization ?? []
    // Node keeps only the first of repeated headers in req.headers; two Authorization headers are malformed
    if (all.length > 1) {
      send(
        res,
        400,
        challenge(realm, { error: "invalid_request" }),
        "invalid_request",
        "repeated Authorization header"
      )
      return
    }
    const header = all[0]
    // RFC 6750 §3.1: a request without Bearer credentials gets a challenge without an error code
    if (header === undefined || !/^bearer(\s|$)/i.test(header)) {
      send(res, 401, challenge(realm, {}), "invalid_request", "a Bearer access token is required")
      return
    }
    runtime.runPromiseExit(Bearer.verify(header, required)).then(
      (exit) => {
        if (Exit.isSuccess(exit)) {
          principals.set(req, exit.value)
          next()
          return
        }
        const failure = Cause.failureOption(exit.cause)
        if (Option.isNone(failure)) {
          send(res, 500, challenge(realm, {}), "server_error", "internal server error")
          return
        }
        const e = failure.value as Effect.Effect.Error<ReturnType<typeof Bearer.verify>>
        switch (e._tag) {
          case "InvalidRequest":
          case "InvalidToken":
            return send(
              res,
              e.status,
              challenge(realm, { error: e.error, error_description: e.description }),
              e.error,
              e.description
            )
          case "InsufficientScope":
            return send(
              res,
              e.status,
              challenge(realm, { error: e.error, error_description: e.description, scope: e.scope }),
              e.error,
              e.description
            )
          case "StorageError":
            res.setHeader("retry-after", "1")
            return send(
              res,
              503,
              challenge(realm, {}),
              "temporarily_unavailable",
              "the service is unavailable; retry shortly"
            )
        }
      },
      (e: unknown) => next(e)
    )
  }
}
