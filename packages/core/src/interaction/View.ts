/**
 * What the browser flow reads and answers: the page request a binding hands over, and the
 * views (with their stable problem codes) the binding renders.
 */
import { Data, type Option } from "effect"
import type { HttpRequest } from "../http/Http.js"
import type { Code } from "../model/OAuthError.js"
import type * as Scope from "../model/Scope.js"
import type * as Authorize from "../oauth/Authorize.js"
import type * as Session from "../security/Session.js"

/** A request to one of the pages, as a binding hands it over. */
export interface PageRequest extends HttpRequest {
  /**
   * The path the issuer's endpoints are mounted under, as the browser sees it
   * (e.g. `/auth`, or `""`): form actions, redirects back to the authorize
   * endpoint and the cookie path are built on it.
   */
  readonly basePath: string
  /** The origin this request was sent to (`https://host`), accepted in `Origin` besides the issuer's. */
  readonly ownOrigin: string
}

/** The passkey endpoints a sign-in page's script posts to: the challenge, then the answer. */
export interface PasskeyActions {
  readonly challenge: string
  readonly login: string
}

/** Why the sign-in form is shown again. */
export type SignInProblem = "missing_fields" | "bad_credentials"

/** A failed sign-in: what went wrong, and the username to fill in again. */
export interface SignInError {
  readonly problem: SignInProblem
  readonly username: string
}

/**
 * Why an error page is shown, as a stable code with what its explanation needs; the
 * binding explains it in the reader's language.
 */
export type Problem =
  | { readonly reason: Authorize.ErrorPageReason }
  | { readonly reason: "request_too_long"; readonly limit: number }
  | { readonly reason: "rate_limited"; readonly seconds: number }
  | {
      readonly reason:
        | "form_expired"
        | "bad_form"
        | "no_decision"
        | "unavailable"
        | "server_error"
        | "not_found"
        | "method_not_allowed"
        | "passkey_refused"
        | "login_required"
    }

/**
 * A safe way back from an error page: a same-origin path that starts again, either the
 * authorize request (validated again when followed) or the consents page.
 */
export interface WayBack {
  readonly to: "request" | "consents"
  readonly href: string
}

/** One application a user has authorised, as the consents page lists it. */
export interface Authorised {
  readonly appKey: string
  readonly appName: string
  readonly scope: Scope.ScopeSet
  /** Epoch seconds of the last grant that added to the consent. */
  readonly grantedAt: number
}

/** What the page for an answer shows; the binding renders it. */
export type View = Data.TaggedEnum<{
  /**
   * Send the browser on: 302 from GET, 303 from a form POST. `error` is the code an error
   * redirect to the client carries in `location`, as a value (for metrics; never written).
   */
  Redirect: { readonly status: 302 | 303; readonly location: string; readonly error?: Code }
  /** HEAD of a valid page request: the page's status and headers, no body, nothing stored. */
  Head: { readonly formTargets: ReadonlyArray<string> }
  /** The sign-in page (400 when it shows an error). */
  SignIn: {
    readonly status: 200 | 400
    readonly layout: Authorize.ClientType
    /** The request's `ui_locales`, first choice first. */
    readonly uiLocales: ReadonlyArray<string>
    readonly appName: string
    readonly redirectHost: string
    readonly action: string
    readonly ticket: Session.FormTicket
    readonly error: Option.Option<SignInError>
    readonly formTargets: ReadonlyArray<string>
    /** Where "Sign in with a passkey" posts, when the server has passkeys (absent otherwise). */
    readonly passkey?: PasskeyActions
  }
  /** The consent page, with a "Not you?" form that signs in as someone else. */
  Consent: {
    readonly layout: Authorize.ClientType
    readonly uiLocales: ReadonlyArray<string>
    readonly appName: string
    readonly redirectHost: string
    readonly username: string
    readonly scope: Scope.ScopeSet
    readonly action: string
    readonly switchAction: string
    /** The consents page, where a consent can be withdrawn later. */
    readonly consentsHref: string
    readonly ticket: Session.FormTicket
    readonly formTargets: ReadonlyArray<string>
  }
  /** The consents page for nobody signed in: a sign-in form that comes back to it. */
  ConsentsSignIn: {
    readonly status: 200 | 400
    readonly layout: Authorize.ClientType
    readonly uiLocales: ReadonlyArray<string>
    readonly action: string
    readonly ticket: Session.FormTicket
    readonly error: Option.Option<SignInError>
    readonly formTargets: ReadonlyArray<string>
  }
  /**
   * The consents page of a signed-in user: each authorised application with a Withdraw
   * button (`action=withdraw`, `app_key`), and Sign out (`action=signout`); every form
   * carries the same good-once ticket.
   */
  Consents: {
    readonly layout: Authorize.ClientType
    readonly uiLocales: ReadonlyArray<string>
    readonly username: string
    readonly consents: ReadonlyArray<Authorised>
    /** The application whose consent this browser has just withdrawn, by name. */
    readonly withdrawn: Option.Option<string>
    readonly action: string
    readonly ticket: Session.FormTicket
    readonly formTargets: ReadonlyArray<string>
  }
  /** A JSON answer of a passkey endpoint (no caching); errors are `ErrorPage`s, which a client asking for JSON gets as JSON. */
  Json: { readonly status: number; readonly body: unknown }
  /** An error shown to the user (or as JSON to a client that asks for it), never sent to the client's redirect URI. */
  ErrorPage: {
    readonly status: number
    readonly layout: Authorize.ClientType
    readonly uiLocales: ReadonlyArray<string>
    /** The OAuth error code, shown small on the page and sent as `error` in JSON. */
    readonly error: string
    /** A technical description in English, sent as `error_description` in JSON. */
    readonly description: string
    /** What the page explains to the user. */
    readonly problem: Problem
    /** A link to start again, when there is a safe one. */
    readonly back: Option.Option<WayBack>
    /**
     * The value the page names as received, shown as text (`Authorize.shownValue`): the
     * `redirect_uri` of a `bad_redirect_uri` page that sent one.
     */
    readonly received: Option.Option<string>
    /** Extra response headers: `retry-after`, `allow`. */
    readonly headers: Readonly<Record<string, string>>
  }
}>

/** Constructors and matchers of View. */
export const View = Data.taggedEnum<View>()

/** The answer to a page request: what to show, and the session cookie to set with it, if any. */
export interface PageResponse {
  readonly view: View
  /** A `Set-Cookie` value: the session cookie. */
  readonly setCookie: string | null
  /** A second `Set-Cookie` value: the trusted-device cookie, after a sign-in from a browser not yet trusted. */
  readonly deviceCookie?: string | null
}

/** The pages, by what they serve. */
export type Page = "authorize" | "login" | "consents"

/** The passkey endpoints (`Paths.passkeys`), answered only when the server has passkeys. */
export type PasskeyPage = "passkeyChallenge" | "passkeyLogin" | "passkeys"
