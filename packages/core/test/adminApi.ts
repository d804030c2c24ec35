/**
 * The admin API as the core's tests call it: its route with a fixed bearer token, a request as a
 * binding would hand it over, and the answer's JSON parsed.
 */
import { Effect, Layer } from "effect"
import * as AdminApi from "../src/admin/AdminApi.js"
import type * as Http from "../src/http/Http.js"
import type * as Config from "../src/model/Config.js"
import * as Audit from "../src/security/Audit.js"
import * as Memory from "../src/storage/Memory.js"
import { TestLayer } from "./fixtures.js"

/** The admin token every request carries unless told otherwise. */
export const adminToken = "admin-token-0123456789abcdef-0123456789"

/** The test layer (with these settings) with the audit trail kept in memory. */
export const Audited = (overrides: Partial<Config.Settings> = {}) =>
  Layer.mergeAll(TestLayer(overrides), Layer.provideMerge(Audit.layer, Memory.auditLayer))

/** A JSON object of an answer. */
export type Json = Record<string, unknown>

/** What else a request carries. */
export interface AdminCall {
  readonly query?: string
  readonly headers?: Record<string, string>
  /** The raw body; otherwise `body` as JSON. */
  readonly raw?: string
  /** The bearer token sent; null sends no Authorization header. */
  readonly token?: string | null
}

/** One admin request, as a binding would hand it over. */
export const adminRequest = (
  method: string,
  path: string,
  body?: unknown,
  call: AdminCall = {}
): Http.HttpRequest => {
  const sent = call.token === undefined ? adminToken : call.token
  return {
    method,
    path: `${AdminApi.basePath}${path}`,
    query: call.query ?? "",
    headers: {
      ...(sent !== null ? { authorization: `Bearer ${sent}` } : {}),
      ...(body !== undefined || call.raw !== undefined ? { "content-type": "application/json" } : {}),
      ...call.headers
    },
    body: call.raw ?? (body === undefined ? "" : JSON.stringify(body)),
    remoteAddress: "192.0.2.44",
    requestId: "req-admin-1"
  }
}

/** The answer to `req`: as the route gave it, with its JSON object (`{}` if none) or list (`[]` if none). */
export const adminSend = (req: Http.HttpRequest) =>
  Effect.map(AdminApi.route(req, { token: adminToken }), (res) => {
    const parsed: unknown = res.body === "" ? undefined : JSON.parse(res.body)
    return {
      ...res,
      json: Array.isArray(parsed) || parsed === undefined ? {} : (parsed as Json),
      list: Array.isArray(parsed) ? (parsed as Array<Json>) : []
    }
  })

/** One admin request through the route, answered. */
export const adminApi = (method: string, path: string, body?: unknown, call: AdminCall = {}) =>
  adminSend(adminRequest(method, path, body, call))
