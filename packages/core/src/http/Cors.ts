/**
 * CORS (Fetch Standard §3.2) of the JSON endpoints, as plain functions of request and response values: the
 * discovery documents and the JWK Set answer pages of any origin; the token, revocation and
 * userinfo endpoints answer the pages of the origins an application registered
 * (`Application.webOrigins`), and only for that application. Never credentials mode, never a
 * wildcard for an application's endpoints; a request to them without `Origin` is answered as before.
 */
import { Effect } from "effect"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import * as Paths from "./Paths.js"
import type { HttpResponse } from "./Response.js"

/** Who may call an endpoint from a page of another origin, and with what. */
export interface Policy {
  /** `any`: every origin (`*`); `application`: the origins the application registered. */
  readonly origins: "any" | "application"
  /** The methods a page may use (`Access-Control-Allow-Methods`). */
  readonly methods: string
  /** The response headers a page may read beyond the CORS-safelisted ones, if any. */
  readonly expose?: string
}

/** The discovery documents and the JWK Set: public, read with GET by any origin. */
export const anyOrigin: Policy = { origins: "any", methods: "GET" }

/** The token and revocation endpoints: POST from an origin the application registered. */
export const applicationPost: Policy = { origins: "application", methods: "POST" }

/** The userinfo endpoint: GET or POST from an origin the application registered; its Bearer challenge readable. */
export const userinfo: Policy = { origins: "application", methods: "GET, POST", expose: "WWW-Authenticate" }

/** The request headers a page may send to an application's endpoints. */
export const allowedHeaders = "Authorization, Content-Type"

/** How long a browser may keep the answer to a preflight, in seconds: a removed origin stops within it. */
export const maxAge = 600

/** The policy of each path that answers other origins; the introspection endpoint has none (confidential clients only). */
export const byPath: ReadonlyMap<string, Policy> = new Map([
  [Paths.oauth.metadata, anyOrigin],
  [Paths.oauth.openidConfiguration, anyOrigin],
  [Paths.oauth.jwks, anyOrigin],
  [Paths.oauth.token, applicationPost],
  [Paths.oauth.revoke, applicationPost],
  [Paths.oauth.userinfo, userinfo]
])

// The headers that grant a page of `origin` the answer under `policy`
const originHeaders = (origin: string, policy: Policy): Record<string, string> =>
  policy.origins === "any"
    ? { "access-control-allow-origin": "*" }
    : // The answer depends on the origin: a cache keeps one per origin
      { "access-control-allow-origin": origin, vary: "Origin" }

/** `response` readable by a page of `origin` (the caller checked the origin against `policy`). */
export const grant = (response: HttpResponse, origin: string, policy: Policy): HttpResponse => ({
  ...response,
  headers: {
    ...response.headers,
    ...originHeaders(origin, policy),
    ...(policy.expose === undefined ? {} : { "access-control-expose-headers": policy.expose })
  }
})

/** The 204 answer to a preflight from `origin` that `policy` grants (the caller checked the origin). */
export const preflight = (origin: string, policy: Policy): HttpResponse => ({
  status: 204,
  headers: {
    ...originHeaders(origin, policy),
    "access-control-allow-methods": policy.methods,
    ...(policy.origins === "any" ? {} : { "access-control-allow-headers": allowedHeaders }),
    "access-control-max-age": String(maxAge)
  },
  body: ""
})

/** What `answer` reads of a request. */
export interface CorsRequest {
  readonly path: string
  /** The request's `Origin`: undefined when absent, null when repeated (neither is granted anything). */
  readonly origin: string | null | undefined
  /** `OPTIONS` with `Access-Control-Request-Method`. */
  readonly preflight: boolean
}

/**
 * The answer to a preflight from `origin` under `policy`: granted to any origin for a public
 * document, else only to an origin some application registered (a preflight carries no
 * credentials, so it names no application). Any other origin, or a store that cannot answer,
 * gets `otherwise`, the endpoint's own answer to `OPTIONS`, as without CORS.
 */
const preflightAnswer = <R>(
  origin: string,
  policy: Policy,
  otherwise: Effect.Effect<HttpResponse, never, R>
): Effect.Effect<HttpResponse, never, R | ApplicationStore> =>
  policy.origins === "any"
    ? Effect.succeed(preflight(origin, policy))
    : Effect.flatMap(ApplicationStore, (apps) =>
        Effect.matchEffect(apps.webOriginRegistered(origin), {
          onFailure: () => otherwise,
          onSuccess: (registered) => (registered ? Effect.succeed(preflight(origin, policy)) : otherwise)
        })
      )

/**
 * An endpoint's `answer` with what CORS adds: a page's preflight answered, and a public document's
 * `*` on every answer (with or without `Origin`). An application's endpoint grants its own answer
 * once it knows the application (`grant`); without `Origin` it gets `answer` itself.
 */
export const answer = <R>(
  req: CorsRequest,
  answer: Effect.Effect<HttpResponse, never, R>
): Effect.Effect<HttpResponse, never, R | ApplicationStore> => {
  const { origin } = req
  const policy = byPath.get(req.path)
  if (policy === undefined) return answer
  if (origin != null && req.preflight) return preflightAnswer(origin, policy, answer)
  // A public document carries `*` whether or not the request named an origin: a cache (the
  // browser's or a shared one) may give the copy it keeps to a page of any origin
  return policy.origins === "any" ? Effect.map(answer, (r) => grant(r, "*", policy)) : answer
}
