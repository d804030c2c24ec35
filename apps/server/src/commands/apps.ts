/** The commands on applications: `app create`, `update`, `list`, `show`, `rotate-secret`, `delete`. */
import { Admin, AdminJson, Application } from "@latchkey/core"
import {
  type Command,
  duration,
  exec,
  iso,
  list,
  none,
  nowSeconds,
  one,
  parse,
  required,
  table,
  UsageError
} from "./common.js"

const appJson = (a: Application.Application) => AdminJson.application(a, nowSeconds())

/** `--grace`: `<n>s`, `<n>m`, `<n>h` or `<n>d` (or `0`), at most 30 days; in seconds. */
export const parseGrace = (value: string | undefined): number => {
  if (value === undefined || value === "0") return 0
  const seconds = duration(value) ?? Number.NaN
  if (!Number.isSafeInteger(seconds) || seconds > Application.maxSecretGrace) {
    throw new UsageError("--grace must be <n>s, <n>m, <n>h or <n>d, at most 30d (e.g. --grace 1h)")
  }
  return seconds
}

const lifetime = (seconds: number | null): string => (seconds === null ? "server default" : `${seconds}s`)

const describeApp = (a: Application.Application): string =>
  [
    `  App Key:       ${a.appKey}`,
    `  Name:          ${a.name}`,
    `  Redirect URIs: ${a.redirectUris.join(", ")}`,
    `  Scopes:        ${a.scopes.length === 0 ? "(none)" : a.scopes.join(", ")}`,
    `  Grant types:   ${a.grantTypes.join(", ")}`,
    `  Require PKCE:  ${a.requirePkce ? "yes" : "no"}`,
    `  Lifetimes:     access ${lifetime(a.accessTokenTtl)}, refresh ${lifetime(a.refreshTokenTtl)}`,
    `  Created:       ${iso(a.createdAt)}`,
    ...clientLines(a),
    ...oldSecretLine(a),
    // Shown only for an application that is not active: every other one reads as before
    ...(Application.inService(a)
      ? []
      : [
          `  Status:        ${Application.status(a)}${a.statusReason == null ? "" : ` (${JSON.stringify(a.statusReason)})`}`
        ])
  ].join("\n")

/** What an application opted into: a line for each option that is not the default. */
const clientLines = (a: Application.Application): Array<string> => {
  const shown = createdJson(a, null)
  return [
    ...(Application.isPublic(a) ? ["  Client type:   public (no App Secret; PKCE S256)"] : []),
    ...(Application.accessTokenFormat(a) === "jwt" || (a.accessTokenAudience ?? null) !== null
      ? [
          `  Access tokens: ${Application.accessTokenFormat(a)}${a.accessTokenAudience == null ? "" : `, audience ${a.accessTokenAudience}`}`
        ]
      : []),
    ...(shown.web_origins !== undefined ? [`  Web origins:   ${shown.web_origins.join(", ")}`] : []),
    ...(shown.post_logout_redirect_uris !== undefined
      ? [`  After logout:  ${shown.post_logout_redirect_uris.join(", ")}`]
      : []),
    ...(shown.backchannel_logout_uri !== undefined
      ? [
          `  Back-channel:  ${shown.backchannel_logout_uri}${shown.backchannel_logout_session_required === true ? " (sid required)" : ""}`
        ]
      : []),
    ...(shown.token_endpoint_auth_method !== undefined
      ? ["  Client auth:   client_secret_post (client_id and client_secret in the body)"]
      : []),
    ...(shown.scope_delimiter !== undefined ? ["  Scopes joined: with a space (RFC 6749 §3.3)"] : []),
    ...(shown.require_mfa === true ? ["  Second factor: required for every authorization"] : [])
  ]
}

const oldSecretLine = (a: Application.Application): Array<string> => {
  const shown = appJson(a)
  if (shown.previous_secret_expires_at === null) return []
  const use =
    shown.previous_secret_first_used_at === null
      ? "not used since the rotation"
      : `first used after the rotation at ${shown.previous_secret_first_used_at}`
  return [`  Old secret:    works until ${shown.previous_secret_expires_at}; ${use}`]
}

/** The App Secret of a created (or newly confidential) application, shown this once; none for a public one. */
const secretText = (appSecret: string | null): string =>
  appSecret === null
    ? "\nA public application has no App Secret: it sends client_id and uses PKCE (S256).\n"
    : `  App Secret:    ${appSecret}\n\nThe App Secret is shown only this once: store it now.\n`

/** `--access-token-ttl` and `--refresh-token-ttl`: whole seconds, or `default` (null). */
const ttlOption = (value: string | undefined, flag: string): number | null | undefined => {
  if (value === undefined) return undefined
  if (value === "default") return null
  if (!/^\d{1,9}$/.test(value)) throw new UsageError(`${flag} must be a whole number of seconds or "default"`)
  return Number(value)
}

/** The options of a registration, which `app create` and `app update` both take. */
const registration = {
  name: { type: "string" },
  "redirect-uri": { type: "string", multiple: true },
  scope: { type: "string" },
  "grant-types": { type: "string" },
  "require-pkce": { type: "boolean" },
  "require-mfa": { type: "boolean" },
  public: { type: "boolean" },
  "access-token-format": { type: "string" },
  "access-token-audience": { type: "string" },
  "web-origin": { type: "string", multiple: true },
  "post-logout-redirect-uri": { type: "string", multiple: true },
  "backchannel-logout-uri": { type: "string" },
  "backchannel-logout-session-required": { type: "boolean" },
  "token-endpoint-auth-method": { type: "string" },
  "scope-delimiter": { type: "string" }
} as const

/**
 * `--access-token-format`, `--access-token-audience` (`default`: the issuer, null),
 * `--web-origin` (repeated), `--post-logout-redirect-uri` (repeated), `--backchannel-logout-uri`,
 * `--backchannel-logout-session-required`, `--token-endpoint-auth-method` and `--scope-delimiter`,
 * as `Admin` takes them.
 */
const tokenOptions = (values: {
  readonly "access-token-format"?: string | undefined
  readonly "access-token-audience"?: string | undefined
  readonly "web-origin"?: ReadonlyArray<string> | undefined
  readonly "post-logout-redirect-uri"?: ReadonlyArray<string> | undefined
  readonly "backchannel-logout-uri"?: string | undefined
  readonly "backchannel-logout-session-required"?: boolean | undefined
  readonly "token-endpoint-auth-method"?: string | undefined
  readonly "scope-delimiter"?: string | undefined
}) => {
  const format = values["access-token-format"]
  const audience = values["access-token-audience"]
  const origins = values["web-origin"]
  const afterLogout = values["post-logout-redirect-uri"]
  const backchannel = values["backchannel-logout-uri"]
  const method = values["token-endpoint-auth-method"]
  const delimiter = values["scope-delimiter"]
  return {
    ...(format !== undefined ? { accessTokenFormat: format } : {}),
    ...(audience !== undefined ? { accessTokenAudience: audience === "default" ? null : audience } : {}),
    ...(origins !== undefined ? { webOrigins: origins } : {}),
    ...(afterLogout !== undefined ? { postLogoutRedirectUris: afterLogout } : {}),
    ...(backchannel !== undefined ? { backchannelLogoutUri: backchannel } : {}),
    ...(values["backchannel-logout-session-required"] === true
      ? { backchannelLogoutSessionRequired: true }
      : {}),
    ...(method !== undefined ? { tokenEndpointAuthMethod: method } : {}),
    ...(delimiter !== undefined ? { scopeDelimiter: delimiter } : {})
  }
}

/** `app create --json`: the registration's JSON without `require_pkce`, and the client fields only when not the defaults. */
const createdJson = (app: Application.Application, appSecret: string | null) => {
  const {
    require_pkce: _,
    public: isPublic,
    access_token_format,
    access_token_audience,
    web_origins,
    post_logout_redirect_uris,
    token_endpoint_auth_method,
    scope_delimiter,
    ...created
  } = AdminJson.createdApplication(app, appSecret)
  return {
    ...created,
    ...(isPublic ? { public: true } : {}),
    ...(access_token_format !== "opaque" ? { access_token_format } : {}),
    ...(access_token_audience !== null ? { access_token_audience } : {}),
    ...(web_origins.length > 0 ? { web_origins } : {}),
    ...(post_logout_redirect_uris.length > 0 ? { post_logout_redirect_uris } : {}),
    ...(token_endpoint_auth_method === "client_secret_post" ? { token_endpoint_auth_method } : {}),
    ...(scope_delimiter !== "comma" ? { scope_delimiter } : {})
  }
}

/** The commands on applications. */
export const commands: Record<string, Command> = {
  "app create": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {
        ...registration,
        "app-key": { type: "string" },
        "app-secret": { type: "string" }
      })
      none(positionals, "app create")
      const grantTypes = list(values["grant-types"])
      const input: Admin.NewApplication = {
        name: required(values.name, "--name"),
        redirectUris: values["redirect-uri"] ?? [],
        ...(values.scope !== undefined ? { scope: values.scope } : {}),
        ...(grantTypes !== undefined ? { grantTypes } : {}),
        ...(values["require-pkce"] === true ? { requirePkce: true } : {}),
        ...(values["app-key"] !== undefined ? { appKey: values["app-key"] } : {}),
        ...(values["app-secret"] !== undefined ? { appSecret: values["app-secret"] } : {}),
        ...(values.public === true ? { public: true } : {}),
        ...(values["require-mfa"] === true ? { requireMfa: true } : {}),
        ...tokenOptions(values)
      }
      if (input.redirectUris.length === 0)
        throw new UsageError("--redirect-uri is required (repeat it for several)")
      const { app, appSecret } = await exec(runtime(), Admin.createApplication(input))
      if (values.json === true) io.stdout(`${JSON.stringify(createdJson(app, appSecret))}\n`)
      else
        io.stdout(
          `Created application ${JSON.stringify(app.name)}\n${describeApp(app)}\n${secretText(appSecret)}`
        )
    }
  },
  "app update": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {
        ...registration,
        "no-require-pkce": { type: "boolean" },
        "no-require-mfa": { type: "boolean" },
        confidential: { type: "boolean" },
        "no-web-origins": { type: "boolean" },
        "no-post-logout-redirect-uris": { type: "boolean" },
        "no-backchannel-logout-uri": { type: "boolean" },
        "access-token-ttl": { type: "string" },
        "refresh-token-ttl": { type: "string" }
      })
      const appKey = one(positionals, "App Key")
      if (values["require-pkce"] === true && values["no-require-pkce"] === true) {
        throw new UsageError("give either --require-pkce or --no-require-pkce")
      }
      if (values["require-mfa"] === true && values["no-require-mfa"] === true) {
        throw new UsageError("give either --require-mfa or --no-require-mfa")
      }
      if (values.public === true && values.confidential === true) {
        throw new UsageError("give either --public or --confidential")
      }
      if (values["web-origin"] !== undefined && values["no-web-origins"] === true) {
        throw new UsageError("give either --web-origin or --no-web-origins")
      }
      const clearLogout = values["no-post-logout-redirect-uris"] === true
      if (values["post-logout-redirect-uri"] !== undefined && clearLogout) {
        throw new UsageError("give either --post-logout-redirect-uri or --no-post-logout-redirect-uris")
      }
      const clearBackchannel = values["no-backchannel-logout-uri"] === true
      if (values["backchannel-logout-uri"] !== undefined && clearBackchannel) {
        throw new UsageError("give either --backchannel-logout-uri or --no-backchannel-logout-uri")
      }
      const grantTypes = list(values["grant-types"])
      const accessTokenTtl = ttlOption(values["access-token-ttl"], "--access-token-ttl")
      const refreshTokenTtl = ttlOption(values["refresh-token-ttl"], "--refresh-token-ttl")
      const requirePkce =
        values["require-pkce"] === true ? true : values["no-require-pkce"] === true ? false : undefined
      const patch: Admin.ApplicationPatch = {
        ...(values.name !== undefined ? { name: values.name } : {}),
        ...(values["redirect-uri"] !== undefined ? { redirectUris: values["redirect-uri"] } : {}),
        ...(values.scope !== undefined ? { scope: values.scope } : {}),
        ...(grantTypes !== undefined ? { grantTypes } : {}),
        ...(requirePkce !== undefined ? { requirePkce } : {}),
        ...(values["require-mfa"] === true
          ? { requireMfa: true }
          : values["no-require-mfa"] === true
            ? { requireMfa: false }
            : {}),
        ...(accessTokenTtl !== undefined ? { accessTokenTtl } : {}),
        ...(refreshTokenTtl !== undefined ? { refreshTokenTtl } : {}),
        ...(values.public === true
          ? { public: true }
          : values.confidential === true
            ? { public: false }
            : {}),
        ...tokenOptions(values),
        ...(values["no-web-origins"] === true ? { webOrigins: [] } : {}),
        ...(clearLogout ? { postLogoutRedirectUris: [] } : {}),
        ...(clearBackchannel ? { backchannelLogoutUri: null, backchannelLogoutSessionRequired: false } : {})
      }
      if (Object.keys(patch).length === 0) {
        throw new UsageError(
          "app update needs something to change: --name, --redirect-uri, --scope, --grant-types, --require-pkce, --no-require-pkce, --require-mfa, --no-require-mfa, --public, --confidential, --access-token-format, --access-token-audience, --web-origin, --no-web-origins, --post-logout-redirect-uri, --no-post-logout-redirect-uris, --backchannel-logout-uri, --no-backchannel-logout-uri, --backchannel-logout-session-required, --token-endpoint-auth-method, --scope-delimiter, --access-token-ttl or --refresh-token-ttl"
        )
      }
      const { app, appSecret } = await exec(runtime(), Admin.updateApplication(appKey, patch))
      io.stdout(
        values.json === true
          ? `${JSON.stringify(AdminJson.updatedApplication(app, appSecret, nowSeconds()))}\n`
          : `Updated application ${JSON.stringify(app.name)}\n${describeApp(app)}\n${appSecret === null ? "" : secretText(appSecret)}`
      )
    }
  },
  "app list": {
    readOnly: true,
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {})
      none(positionals, "app list")
      const apps = await exec(runtime(), Admin.listApplications)
      if (values.json === true) io.stdout(`${JSON.stringify(apps.map(appJson))}\n`)
      else if (apps.length === 0) io.stdout("No applications.\n")
      else
        io.stdout(
          table([
            ["APP KEY", "NAME", "GRANT TYPES", "REDIRECT URIS"],
            ...apps.map((a) => [a.appKey, a.name, a.grantTypes.join(","), a.redirectUris.join(" ")])
          ])
        )
    }
  },
  "app show": {
    readOnly: true,
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {})
      const app = await exec(runtime(), Admin.findApplication(one(positionals, "App Key")))
      io.stdout(values.json === true ? `${JSON.stringify(appJson(app))}\n` : `${describeApp(app)}\n`)
    }
  },
  "app rotate-secret": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, { grace: { type: "string" } })
      const appKey = one(positionals, "App Key")
      const grace = parseGrace(values.grace)
      const { appSecret, previousSecretExpiresAt } = await exec(runtime(), Admin.rotateSecret(appKey, grace))
      const old =
        previousSecretExpiresAt === null
          ? "The old secret no longer works."
          : `The old secret keeps working until ${iso(previousSecretExpiresAt)} (grace ${values.grace}), then stops.`
      io.stdout(
        values.json === true
          ? `${JSON.stringify(AdminJson.rotatedSecret(appKey, appSecret, previousSecretExpiresAt))}\n`
          : `New App Secret for ${appKey}: ${appSecret}\n${old} The new one is shown only this once.\n`
      )
    }
  },
  "app delete": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {})
      const appKey = one(positionals, "App Key")
      await exec(runtime(), Admin.deleteApplication(appKey))
      io.stdout(
        values.json === true
          ? `${JSON.stringify({ app_key: appKey, deleted: true })}\n`
          : `Deleted application ${appKey}; its tokens are revoked.\n`
      )
    }
  }
}
