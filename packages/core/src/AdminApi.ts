/**
 * The admin API: JSON under `/admin/v1` for what the management CLI does, as one route from a
 * plain request value to a response, for a binding to serve on a listener of its own (never on
 * the public port). Every request carries `Authorization: Bearer <token>`, compared in constant
 * time; every change is recorded in the audit trail with the actor `admin-api`.
 */
import { Effect } from "effect"
import type * as Audit from "./Audit.js"
import { timingSafeEqual } from "./Digest.js"
import * as Http from "./Http.js"
import type { AuditStore } from "./storage/AuditStore.js"

/** The path every admin endpoint is under. */
export const basePath = "/admin/v1"

/** Every service the admin API needs. */
export type Requirements = Http.Requirements | Audit.AuditLog | AuditStore

/** What the route needs to know. */
export interface Options {
  /** The bearer token every request must carry. */
  readonly token: string
}

const bearerPrefix = /^Bearer +/i

/** Whether `req` carries `Authorization: Bearer <token>`, compared in constant time. */
export const authorized = (req: Http.HttpRequest, token: string): boolean => {
  const value = Http.header(req, "authorization")
  if (typeof value !== "string" || !bearerPrefix.test(value) || token.length === 0) return false
  return timingSafeEqual(value.replace(bearerPrefix, ""), token)
}

/** 401 with the challenge of RFC 6750 §3. */
export const unauthorized: Http.HttpResponse = Http.json(
  401,
  { error: "unauthorized", error_description: "this endpoint needs Authorization: Bearer <admin token>" },
  { "www-authenticate": 'Bearer realm="latchkey-admin"' }
)

const notFound: Http.HttpResponse = Http.json(404, {
  error: "not_found",
  error_description: "no such admin endpoint"
})

/** Answer an admin request; never fails. */
export const route = (req: Http.HttpRequest, options: Options): Effect.Effect<Http.HttpResponse, never, Requirements> =>
  Effect.succeed(authorized(req, options.token) ? notFound : unauthorized)
