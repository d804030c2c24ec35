/**
 * The JSON of the admin API and of the management CLI's `--json` output: request bodies as the
 * Schemas `AdminApi` decodes them with (unknown fields refused), responses as Schemas with the
 * functions that build them, so the CLI, the API and the OpenAPI document (`AdminOpenApi.adminDocument`)
 * agree on one shape. Times are ISO 8601 in UTC.
 */
import { Schema } from "effect"
import * as Paths from "../http/Paths.js"
import {
  AccessTokenFormat,
  type Application,
  Status as ApplicationStatus,
  accessTokenFormat,
  backchannelLogoutSessionRequired,
  GrantType,
  isPublic,
  livePreviousSecret,
  postLogoutRedirectUris,
  requiresMfa,
  ScopeDelimiter,
  scopeDelimiter,
  status,
  TokenEndpointAuthMethod,
  tokenEndpointAuthMethod,
  webOrigins
} from "../model/Application.js"
import { SigningAlgorithm } from "../model/Config.js"
import type { User } from "../model/User.js"
import { type AuditEvent, EventType } from "../security/AuditEvent.js"
import type { KeyInfo } from "../signing/Keys.js"
import type { Consent } from "../storage/ConsentStore.js"
import { Time, time } from "./internal/json.js"

/** Dynamic client registration's initial access tokens as shown: the bodies and `registrationToken`. */
export * from "./internal/registrationJson.js"
/** Epoch seconds as an ISO 8601 time in UTC, as every admin answer writes times. */
export { time }

/** The path every admin endpoint is under (`AdminApi.basePath`): `Paths.admin`. */
export const basePath = Paths.admin

/** The scope catalogue's bodies: `CreateScope`, `UpdateScope`, `ScopeJson`, `DeletedScope` and `scope`. */
export { CreateScope, DeletedScope, ScopeJson, scope, UpdateScope } from "./internal/scopeJson.js"

/** Scopes as a request gives them: an array of scope tokens, or one string separated by commas or spaces. */
export const ScopesInput = Schema.Union(Schema.Array(Schema.String), Schema.String).annotations({
  description: "scope tokens: an array, or one string separated by commas or spaces"
})

const Lifetime = Schema.NullOr(Schema.Int).annotations({
  description: "seconds, 1 to one year; null for the server default"
})

const optional = <S extends Schema.Schema.Any>(s: S) => Schema.optionalWith(s, { exact: true })

const Public = Schema.Boolean.annotations({
  description:
    "a public client (RFC 6749 §2.1): no App Secret, only authorization_code and refresh_token, PKCE S256 required"
})
const Format = AccessTokenFormat.annotations({ description: "opaque (the default) or jwt (RFC 9068)" })
const Audience = Schema.NullOr(Schema.String).annotations({
  description: "the aud of its JWT access tokens: an absolute URI without a fragment; null for the issuer"
})
const WebOrigins = Schema.Array(Schema.String).annotations({
  description:
    "browser origins whose pages may call the token, revocation and userinfo endpoints (CORS): https://host[:port], or http on 127.0.0.1, [::1] or localhost; duplicates dropped"
})
const AuthMethod = TokenEndpointAuthMethod.annotations({
  description:
    "how a confidential application sends its App Secret: client_secret_basic (HTTP Basic, the default) or client_secret_post (client_id and client_secret in the body); a public application sends none"
})
const Delimiter = ScopeDelimiter.annotations({
  description:
    "how its token, authorization and introspection answers join scopes: comma (the default) or space (RFC 6749 §3.3)"
})
const PostLogoutRedirectUris = Schema.Array(Schema.String).annotations({
  description:
    "where RP-initiated logout (the end session endpoint's post_logout_redirect_uri) may send the browser back to, matched exactly; each checked like a redirect URI; duplicates dropped"
})
const BackchannelLogoutUri = Schema.NullOr(Schema.String).annotations({
  description:
    "where logout tokens are POSTed when a sign-in session the application received an ID token in ends (OpenID Connect Back-Channel Logout); https, or http on 127.0.0.1, [::1] or localhost, no fragment; null for none (the default)"
})
const SessionRequired = Schema.Boolean.annotations({
  description: "whether its logout tokens must carry sid; they always do (default false)"
})
const RequireMfa = Schema.Boolean.annotations({
  description:
    "true: every authorization for it needs a second factor (a passkey, or a password and an authenticator app's code); a user without one is led to set one up. Shown only when true"
})
/** The optional fields a registration and a patch share beyond the kind of client. */
const optionFields = {
  require_mfa: optional(RequireMfa),
  access_token_format: optional(Format),
  access_token_audience: optional(Audience),
  token_endpoint_auth_method: optional(AuthMethod),
  scope_delimiter: optional(Delimiter),
  backchannel_logout_uri: optional(BackchannelLogoutUri),
  backchannel_logout_session_required: optional(SessionRequired)
}

/** `POST /admin/v1/applications`. */
export const CreateApplication = Schema.Struct({
  name: Schema.String.annotations({
    description: "1-200 characters, without control, bidirectional or invisible formatting characters"
  }),
  redirect_uris: Schema.Array(Schema.String).annotations({
    description:
      "https URIs, or http on 127.0.0.1, [::1] or localhost (on 127.0.0.1 or [::1] without a port: any port, RFC 8252 §7.3); for a public application also private-use schemes like com.example.app:/cb; at least one"
  }),
  scopes: optional(ScopesInput),
  grant_types: optional(Schema.Array(GrantType)),
  require_pkce: optional(Schema.Boolean),
  access_token_ttl: optional(Lifetime),
  refresh_token_ttl: optional(Lifetime),
  public: optional(Public),
  web_origins: optional(WebOrigins),
  post_logout_redirect_uris: optional(PostLogoutRedirectUris),
  ...optionFields
}).annotations({ identifier: "CreateApplication" })

/** `PATCH /admin/v1/applications/{app_key}`: a field left out keeps its value. */
export const UpdateApplication = Schema.Struct({
  name: optional(Schema.String),
  redirect_uris: optional(Schema.Array(Schema.String)),
  scopes: optional(ScopesInput),
  grant_types: optional(Schema.Array(GrantType)),
  require_pkce: optional(Schema.Boolean),
  access_token_ttl: optional(Lifetime),
  refresh_token_ttl: optional(Lifetime),
  public: optional(
    Public.annotations({
      description:
        "true: the App Secret stops working; false: a new App Secret is generated and answered once in app_secret"
    })
  ),
  web_origins: optional(
    WebOrigins.annotations({
      description: "the whole new list of web origins; an empty array removes them all"
    })
  ),
  post_logout_redirect_uris: optional(
    PostLogoutRedirectUris.annotations({
      description: "the whole new list of post-logout redirect URIs; an empty array removes them all"
    })
  ),
  ...optionFields
}).annotations({ identifier: "UpdateApplication" })

/** `POST /admin/v1/applications/{app_key}/secret`; an empty body rotates without grace. */
export const RotateSecret = Schema.Struct({
  grace_seconds: optional(
    Schema.Int.annotations({ description: "how long the replaced secret keeps working: 0 to 30 days" })
  )
}).annotations({ identifier: "RotateSecret" })

/** `POST /admin/v1/users`. */
export const CreateUser = Schema.Struct({
  username: Schema.String.annotations({
    description:
      "1-128 characters without surrounding spaces, control, bidirectional or invisible formatting characters"
  }),
  password: Schema.String.annotations({ description: "8-1024 characters; never recorded" })
}).annotations({ identifier: "CreateUser" })

/**
 * `PATCH /admin/v1/users/{user}`: disable (revoking every token, ending every session) or
 * enable, and/or set the password (ending the user's sessions unless `keep_sessions`).
 */
export const UpdateUser = Schema.Struct({
  disabled: optional(
    Schema.Boolean.annotations({
      description: "true revokes every token of the user and ends their sign-in sessions"
    })
  ),
  password: optional(Schema.String.annotations({ description: "8-1024 characters; never recorded" })),
  keep_sessions: optional(
    Schema.Boolean.annotations({
      description:
        "with password: true keeps the user's sign-in sessions, which a new password otherwise ends (ASVS V3.3.3)"
    })
  )
}).annotations({ identifier: "UpdateUser" })

const ShownAuthMethod = Schema.Literal(...TokenEndpointAuthMethod.literals, "none").annotations({
  description:
    "client_secret_basic (HTTP Basic) or client_secret_post (in the body); none for a public application, which sends only client_id"
})

/** The client fields every shown application has, `clientJson` builds them. */
const shownClientFields = {
  public: Public,
  access_token_format: Format,
  access_token_audience: Audience,
  web_origins: WebOrigins,
  post_logout_redirect_uris: PostLogoutRedirectUris,
  token_endpoint_auth_method: ShownAuthMethod,
  scope_delimiter: Delimiter,
  /** Shown only for an application that registered one (back-channel logout is opt-in). */
  backchannel_logout_uri: optional(Schema.String),
  backchannel_logout_session_required: optional(SessionRequired),
  require_mfa: optional(RequireMfa)
}

const applicationFields = {
  app_key: Schema.String,
  name: Schema.String,
  redirect_uris: Schema.Array(Schema.String),
  scopes: Schema.Array(Schema.String),
  grant_types: Schema.Array(GrantType),
  require_pkce: Schema.Boolean,
  access_token_ttl: Schema.NullOr(Schema.Int),
  refresh_token_ttl: Schema.NullOr(Schema.Int),
  created_at: Time,
  previous_secret_expires_at: Schema.NullOr(Time),
  previous_secret_first_used_at: Schema.NullOr(Time),
  ...shownClientFields,
  status: ApplicationStatus.annotations({ description: "the review status (docs/platform.md)" }),
  status_reason: Schema.NullOr(Schema.String).annotations({ description: "why it was rejected or suspended" })
}

/** An application as `app list --json`, `app show --json` and the admin API show it; never a secret. */
export const ApplicationJson = Schema.Struct(applicationFields).annotations({ identifier: "Application" })
/** An application as shown. */
export type ApplicationJson = typeof ApplicationJson.Type

const AppSecret = Schema.String.annotations({ description: "the App Secret, shown this once" })

/**
 * A created application with its App Secret, shown this once (`app create --json`); a public
 * application has none, so `app_secret` is absent.
 */
export const CreatedApplication = Schema.Struct({
  app_key: Schema.String,
  app_secret: optional(AppSecret),
  name: Schema.String,
  redirect_uris: Schema.Array(Schema.String),
  scopes: Schema.Array(Schema.String),
  grant_types: Schema.Array(GrantType),
  require_pkce: Schema.Boolean,
  ...shownClientFields
}).annotations({ identifier: "CreatedApplication" })

/** An updated application; `app_secret` only when it became confidential, shown this once. */
export const UpdatedApplication = Schema.Struct({
  ...applicationFields,
  app_secret: optional(AppSecret)
}).annotations({ identifier: "UpdatedApplication" })

/** `POST /admin/v1/keys/rotate`; an empty body uses the configured signing algorithm. */
export const RotateKey = Schema.Struct({
  algorithm: optional(SigningAlgorithm)
}).annotations({ identifier: "RotateKey" })

/** A signing key as `keys list --json` and the admin API show it: never its private part. */
export const SigningKeyJson = Schema.Struct({
  kid: Schema.String,
  alg: SigningAlgorithm,
  status: Schema.Literal("signing", "published", "expired").annotations({
    description:
      "signing: signs every new token; published: retired, still in the JWKS for the tokens it signed; expired: retired and no longer published"
  }),
  created_at: Time,
  retired_at: Schema.NullOr(Time),
  publish_until: Schema.NullOr(
    Time.annotations({ description: "until when a retired key stays in the JWKS, for tokens it signed" })
  )
}).annotations({ identifier: "SigningKey" })

/** A rotated App Secret, shown this once, and until when the replaced one works. */
export const RotatedSecret = Schema.Struct({
  app_key: Schema.String,
  app_secret: Schema.String,
  previous_secret_expires_at: Schema.NullOr(Time)
}).annotations({ identifier: "RotatedSecret" })

/** A deleted application. */
export const DeletedApplication = Schema.Struct({
  app_key: Schema.String,
  deleted: Schema.Literal(true)
}).annotations({ identifier: "DeletedApplication" })

/** A user as `user list --json` and the admin API show them; never the password hash. */
export const UserJson = Schema.Struct({
  user_id: Schema.String,
  username: Schema.String,
  created_at: Time,
  disabled_at: Schema.NullOr(Time)
}).annotations({ identifier: "User" })
/** A user as shown. */
export type UserJson = typeof UserJson.Type

/** A created user. */
export const CreatedUser = Schema.Struct({
  user_id: Schema.String,
  username: Schema.String
}).annotations({ identifier: "CreatedUser" })

/** A deleted user. */
export const DeletedUser = Schema.Struct({
  user_id: Schema.String,
  username: Schema.String,
  deleted: Schema.Literal(true)
}).annotations({ identifier: "DeletedUser" })

/** A user's second factor, reset. */
export const ResetFactors = Schema.Struct({
  user_id: Schema.String,
  username: Schema.String,
  removed: Schema.Boolean.annotations({
    description: "whether there was an authenticator app (pending or confirmed) or a recovery code to remove"
  })
}).annotations({ identifier: "ResetFactors" })

const AppName = Schema.NullOr(Schema.String).annotations({
  description: "the name of the application with this App Key; null when there is none (deleted since)"
})
const Username = Schema.NullOr(Schema.String).annotations({
  description: "the username of the user with this id; null when there is none (deleted since)"
})

/** How many tokens of a subject were revoked. */
export const RevokedTokens = Schema.Struct({
  app_key: Schema.String,
  app_name: AppName,
  open_id: Schema.String,
  revoked: Schema.Int
}).annotations({ identifier: "RevokedTokens" })

/** A consent of a user. */
export const ConsentJson = Schema.Struct({
  app_key: Schema.String,
  app_name: AppName,
  scopes: Schema.Array(Schema.String),
  updated_at: Time
}).annotations({ identifier: "Consent" })

/** A withdrawn consent. */
export const WithdrawnConsent = Schema.Struct({
  user_id: Schema.String,
  username: Schema.String,
  app_key: Schema.String,
  withdrawn: Schema.Literal(true)
}).annotations({ identifier: "WithdrawnConsent" })

/** An audit event. */
export const AuditEventJson = Schema.Struct({
  at: Time,
  type: EventType,
  app_key: Schema.NullOr(Schema.String),
  app_name: AppName,
  user_id: Schema.NullOr(Schema.String),
  username: Username,
  open_id: Schema.NullOr(Schema.String),
  address: Schema.NullOr(Schema.String),
  request_id: Schema.NullOr(Schema.String),
  detail: Schema.NullOr(Schema.String),
  actor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AuditEvent" })

const timeOrNull = (seconds: number | null | undefined): string | null =>
  seconds === null || seconds === undefined ? null : time(seconds)

/** An application as shown at `now` (epoch seconds): the previous secret only while it still works. */
export const application = (app: Application, now: number): ApplicationJson => {
  const live = livePreviousSecret(app, now) !== null
  return {
    app_key: app.appKey,
    name: app.name,
    redirect_uris: [...app.redirectUris],
    scopes: [...app.scopes],
    grant_types: [...app.grantTypes],
    require_pkce: app.requirePkce,
    access_token_ttl: app.accessTokenTtl,
    refresh_token_ttl: app.refreshTokenTtl,
    created_at: time(app.createdAt),
    previous_secret_expires_at: live ? timeOrNull(app.previousSecretExpiresAt) : null,
    previous_secret_first_used_at: live ? timeOrNull(app.previousSecretUsedAt) : null,
    ...clientJson(app),
    status: status(app),
    status_reason: app.statusReason ?? null
  }
}

const clientJson = (app: Application): Schema.Struct.Type<typeof shownClientFields> => ({
  public: isPublic(app),
  access_token_format: accessTokenFormat(app),
  access_token_audience: app.accessTokenAudience ?? null,
  web_origins: [...webOrigins(app)],
  post_logout_redirect_uris: [...postLogoutRedirectUris(app)],
  token_endpoint_auth_method: isPublic(app) ? "none" : tokenEndpointAuthMethod(app),
  scope_delimiter: scopeDelimiter(app),
  ...(app.backchannelLogoutUri === undefined || app.backchannelLogoutUri === null
    ? {}
    : {
        backchannel_logout_uri: app.backchannelLogoutUri,
        backchannel_logout_session_required: backchannelLogoutSessionRequired(app)
      }),
  // Shown only when set: an application that never asks for it answers as before
  ...(requiresMfa(app) ? { require_mfa: true } : {})
})

const secretJson = (appSecret: string | null) => (appSecret === null ? {} : { app_secret: appSecret })

/** A created application with its secret (none for a public application). */
export const createdApplication = (
  app: Application,
  appSecret: string | null
): typeof CreatedApplication.Type => ({
  app_key: app.appKey,
  ...secretJson(appSecret),
  name: app.name,
  redirect_uris: [...app.redirectUris],
  scopes: [...app.scopes],
  grant_types: [...app.grantTypes],
  require_pkce: app.requirePkce,
  ...clientJson(app)
})

/** An updated application as shown at `now`, with the App Secret generated when it became confidential. */
export const updatedApplication = (
  app: Application,
  appSecret: string | null,
  now: number
): typeof UpdatedApplication.Type => ({ ...application(app, now), ...secretJson(appSecret) })

/** A signing key as shown. */
export const signingKey = (k: KeyInfo): typeof SigningKeyJson.Type => ({
  kid: k.kid,
  alg: k.alg,
  status: k.status,
  created_at: time(k.createdAt),
  retired_at: timeOrNull(k.retiredAt),
  publish_until: timeOrNull(k.publishUntil)
})

/** A rotated secret. */
export const rotatedSecret = (
  appKey: string,
  appSecret: string,
  previousSecretExpiresAt: number | null
): typeof RotatedSecret.Type => ({
  app_key: appKey,
  app_secret: appSecret,
  previous_secret_expires_at: timeOrNull(previousSecretExpiresAt)
})

/** A user as shown. */
export const user = (u: User): UserJson => ({
  user_id: u.userId,
  username: u.username,
  created_at: time(u.createdAt),
  disabled_at: timeOrNull(u.disabledAt)
})

/** The names shown beside ids: application names by App Key, usernames by user id. */
export interface Names {
  readonly applications: ReadonlyMap<string, string>
  readonly users: ReadonlyMap<string, string>
}

/** No names known: every name shown is null. */
const noNames: Names = { applications: new Map(), users: new Map() }

const nameOf = (names: ReadonlyMap<string, string>, id: string | null): string | null =>
  id === null ? null : (names.get(id) ?? null)

/** A withdrawn consent as shown. */
export const withdrawnConsent = (u: User, appKey: string): typeof WithdrawnConsent.Type => ({
  user_id: u.userId,
  username: u.username,
  app_key: appKey,
  withdrawn: true
})

/** A consent as shown, with its application's name from `names`. */
export const consent = (c: Consent, names: Names = noNames): typeof ConsentJson.Type => ({
  app_key: c.appKey,
  app_name: nameOf(names.applications, c.appKey),
  scopes: [...c.scope],
  updated_at: time(c.updatedAt)
})

/** An audit event as shown, with the application's name and the username from `names`. */
export const auditEvent = (e: AuditEvent, names: Names = noNames): typeof AuditEventJson.Type => ({
  at: time(e.at),
  type: e.type,
  app_key: e.appKey,
  app_name: nameOf(names.applications, e.appKey),
  user_id: e.userId,
  username: nameOf(names.users, e.userId),
  open_id: e.openId,
  address: e.address,
  request_id: e.requestId,
  detail: e.detail,
  actor: e.actor ?? null
})
