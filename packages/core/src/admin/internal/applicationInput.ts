/**
 * What an application is registered and changed with (`Admin.createApplication`,
 * `Admin.updateApplication`), as the CLI, the admin API and client registration give it.
 */

/** What `app create` takes. */
export interface NewApplication {
  readonly name: string
  readonly redirectUris: ReadonlyArray<string>
  /** Scope list: comma- or space-separated, or one scope token per item. */
  readonly scope?: string | ReadonlyArray<string>
  readonly grantTypes?: ReadonlyArray<string>
  readonly requirePkce?: boolean
  /** Import an App Key that exists elsewhere (migration). */
  readonly appKey?: string
  /** Import an App Secret that exists elsewhere: at least 32 characters. */
  readonly appSecret?: string
  /** Access token lifetime in seconds; absent or null for the server default. */
  readonly accessTokenTtl?: number | null
  /** Refresh token lifetime in seconds; absent or null for the server default. */
  readonly refreshTokenTtl?: number | null
  /**
   * A public client (RFC 6749 §2.1): no App Secret, only the authorization_code and
   * refresh_token grants (the default for it), PKCE required. Absent means confidential.
   */
  readonly public?: boolean
  /** `opaque` (the default) or `jwt` (RFC 9068). */
  readonly accessTokenFormat?: string
  /** The `aud` of its JWT access tokens: an absolute URI, or absent or null for the issuer. */
  readonly accessTokenAudience?: string | null
  /** Browser origins (`https://app.example`) whose pages may call it (CORS); `Application.validateWebOrigin`. */
  readonly webOrigins?: ReadonlyArray<string>
  /** `client_secret_basic` (the default) or `client_secret_post`; a public application sends no secret at all. */
  readonly tokenEndpointAuthMethod?: string
  /** How its answers join scopes: `comma` (the default) or `space` (RFC 6749 §3.3). */
  readonly scopeDelimiter?: string
  /** Where RP-initiated logout may send the browser back to, checked like redirect URIs; none by default. */
  readonly postLogoutRedirectUris?: ReadonlyArray<string>
  /** Where logout tokens are POSTed (back-channel logout; https, or http on loopback); none by default. */
  readonly backchannelLogoutUri?: string | null
  /** Whether its logout tokens must carry `sid` (they always do). */
  readonly backchannelLogoutSessionRequired?: boolean
  /** Whether every authorization for it needs a second factor; false by default. */
  readonly requireMfa?: boolean
}

/** What `app update` may change; a field left out keeps its value, a null lifetime returns to the server default. */
export interface ApplicationPatch {
  readonly name?: string
  readonly redirectUris?: ReadonlyArray<string>
  /** Scope list: comma- or space-separated, or one scope token per item. */
  readonly scope?: string | ReadonlyArray<string>
  readonly grantTypes?: ReadonlyArray<string>
  readonly requirePkce?: boolean
  readonly accessTokenTtl?: number | null
  readonly refreshTokenTtl?: number | null
  /**
   * Make it public (its App Secret, and any previous one, stop working, and every refresh token
   * family it holds ends) or confidential (a new App Secret is generated and returned once, in
   * `Updated.appSecret`).
   */
  readonly public?: boolean
  readonly accessTokenFormat?: string
  readonly accessTokenAudience?: string | null
  /** The whole new list of web origins; empty removes them all. */
  readonly webOrigins?: ReadonlyArray<string>
  /** `client_secret_basic` or `client_secret_post`; refused for an application that is (or becomes) public. */
  readonly tokenEndpointAuthMethod?: string
  /** `comma` or `space`. */
  readonly scopeDelimiter?: string
  /** The whole new list of post-logout redirect URIs; empty removes them all. */
  readonly postLogoutRedirectUris?: ReadonlyArray<string>
  /** The back-channel logout URI; null removes it. */
  readonly backchannelLogoutUri?: string | null
  readonly backchannelLogoutSessionRequired?: boolean
  /** Whether every authorization for it needs a second factor. */
  readonly requireMfa?: boolean
}
