/**
 * What registering an application takes and answers (`Admin.createApplication`,
 * `Admin.updateApplication`), as the CLI and the admin API give it.
 */
import type { Application } from "../../model/Application.js"

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
   * Make it public (its App Secret, and any previous one, stop working) or confidential (a new
   * App Secret is generated and returned once, in `Updated.appSecret`).
   */
  readonly public?: boolean
  readonly accessTokenFormat?: string
  readonly accessTokenAudience?: string | null
}

/** A created confidential application and its secret, shown this once. */
export interface Created {
  readonly app: Application
  readonly appSecret: string
}

/** A created public application: it has no App Secret. */
export interface PublicCreated {
  readonly app: Application
  readonly appSecret: null
}

/**
 * What `createApplication` answers for an input of type `I`: `PublicCreated` when `I` says
 * `public: true`, `Created` when it cannot be public, either when it may be.
 */
export type CreatedFor<I extends NewApplication> = I extends { readonly public: true }
  ? PublicCreated
  : I extends { readonly public: false }
    ? Created
    : "public" extends keyof I
      ? Created | PublicCreated
      : Created

/** An updated application, and the App Secret generated when it became confidential (else null), shown this once. */
export interface Updated {
  readonly app: Application
  readonly appSecret: string | null
}
