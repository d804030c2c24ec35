/**
 * Client metadata of dynamic client registration (RFC 7591 §2, OpenID Connect Dynamic Client
 * Registration 1.0 §2, RFC 7592 §2.2): the one Schema a registration or an update is decoded with,
 * what it means as an application (`Admin.NewApplication`) and the client information answered
 * for an application (RFC 7591 §3.2.1).
 */
import { Either, Schema } from "effect"
import type { NewApplication } from "../../admin/Admin.js"
import {
  type Application,
  backchannelLogoutSessionRequired,
  type GrantType,
  isPublic,
  postLogoutRedirectUris,
  tokenEndpointAuthMethod
} from "../../model/Application.js"
import * as Scope from "../../model/Scope.js"

// RFC 7592 §2.2: an omitted field is a request to delete it, and a null one too
const field = <S extends Schema.Schema.Any>(s: S) => Schema.optionalWith(Schema.NullOr(s), { exact: true })
const Strings = Schema.Array(Schema.String)

/**
 * The client metadata Latchkey understands; any other field is ignored (RFC 7591 §2), so it is
 * neither kept nor answered.
 */
export const ClientMetadata = Schema.Struct({
  redirect_uris: field(Strings),
  token_endpoint_auth_method: field(Schema.String),
  grant_types: field(Strings),
  response_types: field(Strings),
  client_name: field(Schema.String),
  scope: field(Schema.String),
  post_logout_redirect_uris: field(Strings),
  backchannel_logout_uri: field(Schema.String),
  backchannel_logout_session_required: field(Schema.Boolean),
  /** RFC 7592 §2.2: an update names the client it updates. */
  client_id: field(Schema.String),
  /** RFC 7592 §2.2: an update may repeat the client's secret, which must then be its secret. */
  client_secret: field(Schema.String)
}).annotations({ identifier: "ClientMetadata" })
/** Client metadata as a registration or an update sends it. */
export type ClientMetadata = typeof ClientMetadata.Type

/** What each field must be, for the 400 that names it. */
export const expected: Readonly<Record<string, string>> = {
  redirect_uris: "an array of URIs",
  token_endpoint_auth_method: "a string",
  grant_types: "an array of grant type names",
  response_types: "an array of response type names",
  client_name: "a string",
  scope: "a string of scope tokens separated by spaces",
  post_logout_redirect_uris: "an array of URIs",
  backchannel_logout_uri: "a URI",
  backchannel_logout_session_required: "true or false",
  client_id: "a string",
  client_secret: "a string"
}

/** Client metadata Latchkey cannot register (RFC 7591 §3.2.2 `invalid_client_metadata`), naming the field. */
export interface Unsupported {
  readonly field: string
  readonly description: string
}

/** The authentication methods a client may register: `none` is a public client. */
const authMethods = ["client_secret_basic", "client_secret_post", "none"] as const

/** The response type of each grant type of the authorization endpoint (RFC 7591 §2.1). */
const responseTypeOf: Readonly<Partial<Record<GrantType, string>>> = {
  authorization_code: "code",
  implicit: "token"
}

const grantOfResponse: Readonly<Record<string, string>> = { code: "authorization_code", token: "implicit" }

/**
 * The grant types and response types registered, each derived from the other when left out
 * (RFC 7591 §2: `authorization_code` and `code` when both are), and checked to agree (§2.1).
 */
const flows = (meta: ClientMetadata): Either.Either<ReadonlyArray<string>, Unsupported> => {
  const responses = meta.response_types ?? null
  const grants =
    meta.grant_types ??
    (responses === null ? ["authorization_code"] : responses.map((r) => grantOfResponse[r] ?? r))
  const unknown = (responses ?? []).find((r) => !Object.hasOwn(grantOfResponse, r))
  if (unknown !== undefined) {
    return Either.left({
      field: "response_types",
      description: "response_types may hold code and token only"
    })
  }
  const implied = (grants as ReadonlyArray<GrantType>).flatMap((g) => responseTypeOf[g] ?? [])
  const agree =
    responses === null ||
    (responses.every((r) => grants.includes(grantOfResponse[r] as string)) &&
      implied.every((r) => responses.includes(r)))
  return agree
    ? Either.right(grants)
    : Either.left({
        field: "response_types",
        description:
          "response_types must be code for authorization_code and token for implicit, and nothing else"
      })
}

/** A name for a client that gave none: the host of its first redirect URI. */
const nameOf = (meta: ClientMetadata): string => {
  if (meta.client_name != null) return meta.client_name
  const first = meta.redirect_uris?.[0]
  let host = ""
  try {
    host = first === undefined ? "" : new URL(first).host
  } catch {
    // not a URL: the redirect URI's own check refuses it
  }
  return host === "" ? "Registered client" : host
}

/**
 * The application client metadata describes: a public client for `none`, answers joining scopes
 * with spaces (RFC 6749 §3.3, what a registering client's library expects); the checks of every
 * value are `Admin.prepareApplication`'s, as for an application an operator creates.
 */
export const applicationOf = (meta: ClientMetadata): Either.Either<NewApplication, Unsupported> => {
  const method = meta.token_endpoint_auth_method ?? "client_secret_basic"
  if (!(authMethods as ReadonlyArray<string>).includes(method)) {
    return Either.left({
      field: "token_endpoint_auth_method",
      description: `token_endpoint_auth_method must be ${authMethods.join(", ")}`
    })
  }
  return Either.map(flows(meta), (grantTypes) => ({
    name: nameOf(meta),
    redirectUris: meta.redirect_uris ?? [],
    scope: meta.scope ?? "",
    grantTypes,
    public: method === "none",
    ...(method === "none" ? {} : { tokenEndpointAuthMethod: method }),
    scopeDelimiter: "space",
    postLogoutRedirectUris: meta.post_logout_redirect_uris ?? [],
    backchannelLogoutUri: meta.backchannel_logout_uri ?? null,
    backchannelLogoutSessionRequired: meta.backchannel_logout_session_required ?? false
  }))
}

/** What the client is told besides its metadata: its credentials and where to manage it. */
export interface Credentials {
  /** The App Secret, only when it was just made (registration, or an update making it confidential). */
  readonly clientSecret: string | null
  readonly registrationAccessToken: string
  readonly registrationClientUri: string
}

/** The client information response (RFC 7591 §3.2.1, RFC 7592 §3) for an application. */
export const information = (app: Application, credentials: Credentials): Record<string, unknown> => {
  const logoutUris = postLogoutRedirectUris(app)
  return {
    client_id: app.appKey,
    ...(credentials.clientSecret === null
      ? {}
      : { client_secret: credentials.clientSecret, client_secret_expires_at: 0 }),
    client_id_issued_at: app.createdAt,
    registration_access_token: credentials.registrationAccessToken,
    registration_client_uri: credentials.registrationClientUri,
    client_name: app.name,
    redirect_uris: app.redirectUris,
    grant_types: app.grantTypes,
    response_types: app.grantTypes.flatMap((g) => responseTypeOf[g] ?? []),
    token_endpoint_auth_method: isPublic(app) ? "none" : tokenEndpointAuthMethod(app),
    ...(app.scopes.length === 0 ? {} : { scope: Scope.format(app.scopes, "space") }),
    ...(logoutUris.length === 0 ? {} : { post_logout_redirect_uris: logoutUris }),
    ...(app.backchannelLogoutUri == null
      ? {}
      : {
          backchannel_logout_uri: app.backchannelLogoutUri,
          backchannel_logout_session_required: backchannelLogoutSessionRequired(app)
        })
  }
}
