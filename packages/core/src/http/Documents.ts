/**
 * The documents of the JSON endpoints: the authorization server metadata (RFC 8414, OpenID Connect
 * Discovery 1.0) and the JWK Set (RFC 7517), each answered from text made once, not per request.
 * Re-exported by `Http`.
 */
import { Effect } from "effect"
import type { Settings } from "../model/Config.js"
import * as Call from "../oauth/Call.js"
import * as Metadata from "../oauth/Metadata.js"
import * as Keys from "../signing/Keys.js"
import { KeyStore } from "../storage/KeyStore.js"
import { ScopeStore } from "../storage/ScopeStore.js"
import type { HttpRequest, Requirements } from "./Http.js"
import { type HttpResponse, methodNotAllowed, refusalResponse, respond } from "./Response.js"

// The metadata document's text, made once per Config (the settings never change in a program)
// and scope catalogue names (none, as before the catalogue, unless an operator adds scopes)
const metadataBodies = new WeakMap<Settings, { readonly names: string; readonly body: string }>()
const metadataResponse = (settings: Settings, names: ReadonlyArray<string>): HttpResponse => {
  const key = names.join(" ")
  let made = metadataBodies.get(settings)
  if (made?.names !== key) {
    made = { names: key, body: JSON.stringify(Metadata.document(settings, names)) }
    metadataBodies.set(settings, made)
  }
  return {
    status: 200,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "public, max-age=3600" },
    body: made.body
  }
}

/**
 * How long this process answers the metadata with the scope catalogue's names it read last, in
 * seconds: a scope added or removed shows within this long (clients may keep the document an hour).
 */
export const catalogueMaxAge = 60

// The catalogue's names each scope store answered last, and until when they are used
const heldNames = new WeakMap<
  ScopeStore["Type"],
  { readonly until: number; readonly names: ReadonlyArray<string> }
>()

/**
 * `GET /.well-known/oauth-authorization-server` (RFC 8414) and `GET
 * /.well-known/openid-configuration` (OpenID Connect Discovery 1.0 §4): the same document, whose
 * `scopes_supported` adds the scope catalogue's names once it has any (held `catalogueMaxAge`).
 */
export const metadata = (req: HttpRequest): Effect.Effect<HttpResponse, never, Requirements> =>
  req.method === "GET" || req.method === "HEAD"
    ? Call.run(req, (call: Call.Call<Requirements>) => {
        const scopes = Call.use(call, ScopeStore)
        const now = Call.seconds(call)
        const held = heldNames.get(scopes)
        if (held !== undefined && now < held.until)
          return Effect.succeed(metadataResponse(call.config, held.names))
        return respond(
          Effect.map(scopes.list(), (catalogue) => {
            const names = catalogue.map((e) => e.name)
            heldNames.set(scopes, { until: now + catalogueMaxAge, names })
            return metadataResponse(call.config, names)
          })
        )
      })
    : Effect.succeed(refusalResponse(methodNotAllowed("GET, HEAD")))

/**
 * How long a client may keep the JWK Set, in seconds: a rotation signs with the new key at once,
 * so a client holding the set longer fails to find its `kid` for at most this long (and should
 * fetch the set again when a token names a `kid` it lacks, OpenID Connect Core §10.1.1).
 */
export const jwksMaxAge = 60

// The JWK Set's text, made once per document (`Keys` makes one per key set loaded)
const jwksBodies = new WeakMap<Keys.JwkSet, string>()
const jwksResponse = (set: Keys.JwkSet): HttpResponse => {
  let body = jwksBodies.get(set)
  if (body === undefined) {
    body = JSON.stringify(set)
    jwksBodies.set(set, body)
  }
  return {
    status: 200,
    headers: {
      "content-type": "application/json; charset=utf-8",
      "cache-control": `public, max-age=${jwksMaxAge}`
    },
    body
  }
}

/**
 * `GET /oauth2/oauth2/jwks` (`Paths.oauth.jwks`): the published signing keys (RFC 7517 JWK Set),
 * as plain code from the key set this process holds (`Keys.heldJwks`), else read (`Keys.jwks`).
 */
export const jwks = (req: HttpRequest): Effect.Effect<HttpResponse, never, Requirements> =>
  req.method === "GET" || req.method === "HEAD"
    ? Call.run(req, (call: Call.Call<Requirements>) => {
        const held = Keys.heldJwks(Call.use(call, KeyStore), Call.seconds(call))
        return held !== null
          ? Effect.succeed(jwksResponse(held))
          : respond(Effect.map(Keys.jwks, jwksResponse))
      })
    : Effect.succeed(refusalResponse(methodNotAllowed("GET, HEAD")))
