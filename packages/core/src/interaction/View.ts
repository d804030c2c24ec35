/**
 * What the browser flow reads and answers: the page request a binding hands over, and the
 * views (with their stable problem codes) the binding renders.
 */
import { Data, type Option } from "effect"
import type { HttpRequest } from "../http/Http.js"
import type { Code } from "../model/OAuthError.js"
import type * as Scope from "../model/Scope.js"
import type * as ScopeCatalogue from "../model/ScopeCatalogue.js"
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
        /** A logout request that cannot be trusted: a bad `id_token_hint`, or an unregistered `post_logout_redirect_uri`. */
        | "bad_logout"
        | "passkey_refused"
        | "login_required"
        /** The request needs a second factor the user has not set up: the way on is the account page. */
        | "second_factor_needed"
    }

/**
 * A safe way back from an error page: a same-origin path that starts again, either the
 * authorize request (validated again when followed), the consents page or the account page.
 */
export interface WayBack {
  readonly to: "request" | "consents" | "account"
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

/** Why the account page's password form is shown again (400). */
export type PasswordProblem =
  /** A field was left empty. */
  | "missing_fields"
  /** The current password is not right (counted and throttled as a failed sign-in). */
  | "bad_current"
  /** The new password and its confirmation differ. */
  | "mismatch"
  /** The new password breaks the rules of every password (`Accounts.passwordProblem`: 8 to 1024 characters of plain text). */
  | "invalid_new"

/** One sign-in session of the user, as the account page lists it. */
export interface SignedInSession {
  /**
   * What the session's "Sign out" form sends back (`session`): a keyed digest of the stored
   * digest of its id, good only for this server to find it among the user's sessions.
   */
  readonly handle: string
  /** When the user signed in to it (epoch seconds). */
  readonly signedInAt: number | null
  /** When it ends unless used again (epoch seconds). */
  readonly expiresAt: number
  /** The session of the browser showing the page ("this device"). */
  readonly current: boolean
}

/**
 * One of the user's trusted devices, as the account page lists it: never its cookie's nonce nor
 * the digest the store keys it by.
 */
export interface ListedDevice {
  /** What its Forget form sends back (`device`): a keyed digest of its stored digest. */
  readonly handle: string
  /** Its browser's and system's names (`DeviceLabel.labelOf`), null where not recognised. */
  readonly browser: string | null
  readonly system: string | null
  /** When it became trusted (epoch seconds). */
  readonly trustedAt: number
  /** When a sign-in last used it (epoch seconds). */
  readonly lastSignInAt: number
  /** The browser showing the page ("This browser"). */
  readonly current: boolean
}

/** One of the user's passkeys, as the account page lists it (never its public key). */
export interface ListedPasskey {
  /** What its Rename and Remove forms send back (`credential_id`). */
  readonly credentialId: string
  readonly name: string
  /** When it was registered (epoch seconds). */
  readonly createdAt: number
  /** The last sign-in with it (epoch seconds), or null before the first. */
  readonly lastUsedAt: number | null
  /** May be synced to the user's other devices (`multiDevice`), else bound to one authenticator. */
  readonly synced: boolean
}

/**
 * One section of the account page, in the order the page shows them. A feature adds its own
 * section: a tag here, its builder in `AccountPage.sections`, its renderer in each binding.
 */
export type AccountSection =
  /** Change the password (`action=password`), with why the last attempt was refused. */
  | { readonly _tag: "Password"; readonly problem: Option.Option<PasswordProblem> }
  /**
   * The signed-in sessions, with "Sign out" of each other one (`action=end_session`) and of all
   * others (`action=end_others`); and the trusted devices: each recorded one with Forget
   * (`action=forget_device`), whether this browser is one of the user's (`trusted`: its own sign-in
   * throttle budget, also with a cookie from before records, which is not listed), and "Forget all
   * other browsers" (`action=forget_devices`).
   */
  | {
      readonly _tag: "Sessions"
      readonly sessions: ReadonlyArray<SignedInSession>
      readonly devices: ReadonlyArray<ListedDevice>
      readonly trusted: boolean
    }
  /** The applications the user authorised: a link to the consents page. */
  | { readonly _tag: "Applications"; readonly href: string }
  /**
   * The user's passkeys (passkeys on), each with Rename (`action=rename_passkey`) and Remove
   * (`action=remove_passkey`); Add runs the browser's ceremony with the passkeys endpoint (`endpoint`).
   */
  | { readonly _tag: "Passkeys"; readonly passkeys: ReadonlyArray<ListedPasskey>; readonly endpoint: string }
  /**
   * The authenticator app: add one (`action=totp_enrol`), then confirm it with a code
   * (`action=totp_confirm`, `code`) while `enrolment` shows its secret; once confirmed, remove it
   * or make new recovery codes (`action=totp_remove`, `action=totp_recovery`, with `proof`: a code
   * or the password). `recoveryCodes`: codes just made, shown this once.
   */
  | {
      readonly _tag: "Authenticator"
      readonly state: "none" | "pending" | "confirmed"
      readonly recoveryCodesLeft: number
      readonly enrolment: Option.Option<AuthenticatorEnrolment>
      readonly recoveryCodes: Option.Option<ReadonlyArray<string>>
      readonly problem: Option.Option<AuthenticatorProblem>
    }

/** What the account page confirms after one of its forms did it. */
export type AccountNotice =
  | "password_changed"
  | "session_ended"
  | "others_ended"
  | "passkey_renamed"
  | "passkey_removed"
  | "devices_forgotten"
  | "device_forgotten"
  | "authenticator_removed"

/** Why a form of the account page's Authenticator section was refused (400). */
export type AuthenticatorProblem =
  /** The code confirming the enrolment is not right. */
  | "bad_code"
  /** The code or password asked before removing the app or making new recovery codes is not right. */
  | "bad_proof"

/** An authenticator app being added: the secret as text and as an `otpauth://` URI (for a QR code). */
export interface AuthenticatorEnrolment {
  readonly secret: string
  readonly uri: string
}

/** Why the second sign-in step's page is shown again (400): the code or recovery code was not right. */
export type FactorProblem = "bad_code"

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
  /**
   * The second step of a sign-in (or a step-up of one): a code from the user's authenticator app,
   * or one of their recovery codes, in one field. The form posts `action` with the good-once
   * ticket, the hidden `fields` (who passed the first step, and the mark binding them to this
   * session and ticket) and `code`.
   */
  Factor: {
    readonly status: 200 | 400
    readonly layout: Authorize.ClientType
    readonly uiLocales: ReadonlyArray<string>
    /** The application asking, in the authorize flow. */
    readonly appName: Option.Option<string>
    readonly username: string
    readonly action: string
    readonly ticket: Session.FormTicket
    readonly fields: ReadonlyArray<readonly [name: string, value: string]>
    readonly problem: Option.Option<FactorProblem>
    readonly formTargets: ReadonlyArray<string>
  }
  /**
   * The authorize flow's page adding an authenticator app, for a signed-in user without a second
   * factor whose request needs two: the pending app's secret, its `otpauth://` URI (for a QR code)
   * and a field for its code. The form posts `action` with the good-once ticket, the hidden
   * `fields` (the user and the mark binding them to this session and ticket) and `code`.
   */
  Enrol: {
    readonly status: 200 | 400
    readonly layout: Authorize.ClientType
    readonly uiLocales: ReadonlyArray<string>
    readonly appName: string
    readonly username: string
    readonly enrolment: AuthenticatorEnrolment
    readonly action: string
    readonly ticket: Session.FormTicket
    readonly fields: ReadonlyArray<readonly [name: string, value: string]>
    readonly problem: Option.Option<FactorProblem>
    /** The account page, where a passkey can be added instead (passkeys on). */
    readonly passkeysHref: Option.Option<string>
    readonly formTargets: ReadonlyArray<string>
  }
  /**
   * The app just added in the authorize flow: its ten recovery codes, shown this once, and
   * Continue, a link to the authorization request again (`continueHref`).
   */
  Enrolled: {
    readonly layout: Authorize.ClientType
    readonly uiLocales: ReadonlyArray<string>
    readonly appName: string
    readonly recoveryCodes: ReadonlyArray<string>
    readonly continueHref: string
    readonly formTargets: ReadonlyArray<string>
  }
  /** The consent page, with a "Not you?" form that signs in as someone else. */
  Consent: {
    readonly layout: Authorize.ClientType
    readonly uiLocales: ReadonlyArray<string>
    readonly appName: string
    readonly redirectHost: string
    readonly username: string
    readonly scope: Scope.ScopeSet
    /** What the scope catalogue says each scope shown allows, by scope and language tag; a scope not in it is absent. */
    readonly scopeDescriptions: ScopeCatalogue.DescribedScopes
    readonly action: string
    readonly switchAction: string
    /** The consents page, where a consent can be withdrawn later. */
    readonly consentsHref: string
    readonly ticket: Session.FormTicket
    readonly formTargets: ReadonlyArray<string>
  }
  /**
   * The consents page for nobody signed in: a sign-in form that comes back to it; with `purpose`
   * `account`, the account page's (the same form, that page's heading).
   */
  ConsentsSignIn: {
    readonly status: 200 | 400
    readonly purpose?: "account"
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
    /** What the scope catalogue says each scope shown allows, by scope and language tag; a scope not in it is absent. */
    readonly scopeDescriptions: ScopeCatalogue.DescribedScopes
    /** The application whose consent this browser has just withdrawn, by name. */
    readonly withdrawn: Option.Option<string>
    readonly action: string
    readonly ticket: Session.FormTicket
    readonly formTargets: ReadonlyArray<string>
  }
  /**
   * The end session endpoint's question (RP-Initiated Logout 1.0 §2) when the request does not
   * prove which application sent it for this session: sign out? The form posts the request's
   * parameters back (`fields`) with a CSRF token tied to the session (`csrf`).
   */
  LogoutConfirm: {
    readonly layout: Authorize.ClientType
    readonly uiLocales: ReadonlyArray<string>
    /** The application the request names, when it names a registered one. */
    readonly appName: Option.Option<string>
    readonly username: string
    readonly action: string
    readonly csrf: string
    /** The request's parameters, as hidden fields of the form. */
    readonly fields: ReadonlyArray<readonly [name: string, value: string]>
    readonly formTargets: ReadonlyArray<string>
  }
  /** The page after a logout that names no `post_logout_redirect_uri`: signed out. */
  SignedOut: {
    readonly layout: Authorize.ClientType
    readonly uiLocales: ReadonlyArray<string>
    readonly appName: Option.Option<string>
  }
  /**
   * The account page of a signed-in user: its sections, each with its forms (every form carries
   * the same good-once ticket and posts to `action`), and Sign out (`action=signout`).
   */
  Account: {
    /** 400 when the password form is shown again with its problem. */
    readonly status: 200 | 400
    readonly layout: Authorize.ClientType
    readonly uiLocales: ReadonlyArray<string>
    readonly username: string
    readonly sections: ReadonlyArray<AccountSection>
    /** What this browser has just done with the page. */
    readonly notice: Option.Option<AccountNotice>
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
export type Page = "authorize" | "login" | "consents" | "logout" | "account"

/** The passkey endpoints (`Paths.passkeys`), answered only when the server has passkeys. */
export type PasskeyPage = "passkeyChallenge" | "passkeyLogin" | "passkeys"
