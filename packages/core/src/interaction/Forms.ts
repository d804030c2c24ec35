/**
 * The forms the pages post, one Schema each: the pages decode them with it, and the OpenAPI
 * document shows it as the request body. Every form carries the ticket of the pending request
 * it continues (`Ticket`); a form without one is refused before its other fields are read.
 */
import { Schema } from "effect"
import type { Params } from "../oauth/requests/Form.js"

/** An optional field: absent, or present with a value (an empty value counts as absent). */
const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** The good-once ticket of a pending request (`Session.addPending`): its id and CSRF token. */
export const Ticket = Schema.Struct({ txn: Schema.String, csrf_token: Schema.String })

/**
 * The second sign-in step's fields (`View.Factor`): who passed the first step and the mark that
 * binds them to the session and the ticket (both written by the server), and the code typed, a
 * code of the authenticator app or a recovery code.
 */
const FactorFields = {
  factor_user: optional(Schema.String),
  factor_mark: optional(Schema.String),
  code: optional(Schema.String)
}

/** The sign-in form, and "Not you?" of the consent page (`switch_account`, which signs out first). */
export const SignInForm = Schema.Struct({
  ...Ticket.fields,
  username: optional(Schema.String),
  password: optional(Schema.String),
  switch_account: optional(Schema.String),
  ...FactorFields,
  /** The flow's enrolment page (`View.Enrol`) posts its mark here, with `factor_user` and `code`. */
  enrol_mark: optional(Schema.String)
}).annotations({ identifier: "SignInForm" })

/** A decoded sign-in form. */
export type SignInForm = typeof SignInForm.Type

/** The consent form: Allow or Deny. */
export const ConsentForm = Schema.Struct({
  ...Ticket.fields,
  decision: Schema.Literal("allow", "deny")
}).annotations({ identifier: "ConsentForm" })

/** The consents page's sign-in form. */
const ConsentsSignIn = Schema.Struct({
  ...Ticket.fields,
  action: Schema.Literal("signin"),
  username: optional(Schema.String),
  password: optional(Schema.String)
}).annotations({ identifier: "ConsentsSignIn" })

/** The second step of the own pages' sign-in (`View.Factor`). */
const OwnPageFactor = Schema.Struct({
  ...Ticket.fields,
  action: Schema.Literal("factor"),
  ...FactorFields
}).annotations({ identifier: "OwnPageFactor" })

/** Withdraw the consent to the application `app_key`. */
const ConsentsWithdraw = Schema.Struct({
  ...Ticket.fields,
  action: Schema.Literal("withdraw"),
  app_key: optional(Schema.String)
}).annotations({ identifier: "ConsentsWithdraw" })

/** Sign out. */
const ConsentsSignOut = Schema.Struct({
  ...Ticket.fields,
  action: Schema.Literal("signout")
}).annotations({ identifier: "ConsentsSignOut" })

/** The forms of the consents page, one per `action`. */
export const ConsentsForm = Schema.Union(
  ConsentsSignIn,
  OwnPageFactor,
  ConsentsWithdraw,
  ConsentsSignOut
).annotations({
  identifier: "ConsentsForm"
})

/** A decoded consents page form. */
export type ConsentsForm = typeof ConsentsForm.Type

/**
 * A request to the end session endpoint (OpenID Connect RP-Initiated Logout 1.0 §2), in the query
 * (GET) or the body (POST); every parameter is optional and others are ignored. `csrf_token` comes
 * only from the confirmation page's own form (`View.LogoutConfirm`).
 */
export const LogoutRequest = Schema.Struct({
  id_token_hint: optional(Schema.String),
  client_id: optional(Schema.String),
  post_logout_redirect_uri: optional(Schema.String),
  state: optional(Schema.String),
  ui_locales: optional(Schema.String),
  /** The pages' layout, as at the authorize endpoint: `Mobile`, else PC. */
  client_type: optional(Schema.String),
  logout_hint: optional(Schema.String),
  csrf_token: optional(Schema.String)
}).annotations({ identifier: "LogoutRequest" })

/** A decoded logout request. */
export type LogoutRequest = typeof LogoutRequest.Type

/** Decode a logout request's parameters: with every field optional text, every set of parameters decodes. */
export const logoutRequestOf = (params: Params): LogoutRequest =>
  Schema.decodeUnknownSync(LogoutRequest)(params)

/**
 * A passkey ceremony's second post: the ticket the first one answered (its challenge's), and the
 * browser's answer (`credential`, the `PublicKeyCredential` as JSON text).
 */
export const PasskeyForm = Schema.Struct({
  ...Ticket.fields,
  credential: optional(Schema.String)
}).annotations({ identifier: "PasskeyForm" })

/** The signed-in user's passkeys (`Paths.passkeys.account`): start a registration, finish it, or remove one. */
export const PasskeysForm = Schema.Union(
  Schema.Struct({ ...Ticket.fields, action: Schema.Literal("options") }),
  Schema.Struct({
    ...Ticket.fields,
    action: Schema.Literal("register"),
    credential: optional(Schema.String),
    name: optional(Schema.String)
  }),
  Schema.Struct({
    ...Ticket.fields,
    action: Schema.Literal("remove"),
    credential_id: optional(Schema.String)
  })
).annotations({ identifier: "PasskeysForm" })

/** A decoded form of the passkeys endpoint. */
export type PasskeysForm = typeof PasskeysForm.Type

/** Decode a passkey sign-in's second post; with its ticket present, every form decodes. */
export const passkeyFormOf = (params: Params) => Schema.decodeUnknownSync(PasskeyForm)(params)

/** Decode a form of the passkeys endpoint; an unknown action is refused. */
export const passkeysFormOf = Schema.decodeUnknownEither(PasskeysForm)

/** Decode a form's ticket. */
export const ticketOf = Schema.decodeUnknownOption(Ticket)

/** Decode a sign-in form; with its ticket present, every form decodes (the other fields are optional text). */
export const signInFormOf = (params: Params) => Schema.decodeUnknownSync(SignInForm)(params)

/** Decode a consent form; a decision other than allow or deny is refused. */
export const consentFormOf = Schema.decodeUnknownEither(ConsentForm)

/** Decode a consents page form; an unknown action is refused. */
export const consentsFormOf = Schema.decodeUnknownEither(ConsentsForm)

/** The account page's sign-in form (for nobody signed in): the consents page's. */
const AccountSignIn = ConsentsSignIn.annotations({ identifier: "AccountSignIn" })

/** Change the password: the current one (checked and throttled as a sign-in), the new one twice. */
const AccountPassword = Schema.Struct({
  ...Ticket.fields,
  action: Schema.Literal("password"),
  current_password: optional(Schema.String),
  new_password: optional(Schema.String),
  confirm_password: optional(Schema.String)
}).annotations({ identifier: "AccountPassword" })

/** End one of the user's other sessions, named by the handle the page lists it with. */
const AccountEndSession = Schema.Struct({
  ...Ticket.fields,
  action: Schema.Literal("end_session"),
  session: optional(Schema.String)
}).annotations({ identifier: "AccountEndSession" })

/** End every session of the user but this one. */
const AccountEndOthers = Schema.Struct({
  ...Ticket.fields,
  action: Schema.Literal("end_others")
}).annotations({ identifier: "AccountEndOthers" })

/** Give one of the user's passkeys (`credential_id`) a new name (passkeys on). */
const AccountRenamePasskey = Schema.Struct({
  ...Ticket.fields,
  action: Schema.Literal("rename_passkey"),
  credential_id: optional(Schema.String),
  name: optional(Schema.String)
}).annotations({ identifier: "AccountRenamePasskey" })

/** Remove one of the user's passkeys (`credential_id`) (passkeys on). */
const AccountRemovePasskey = Schema.Struct({
  ...Ticket.fields,
  action: Schema.Literal("remove_passkey"),
  credential_id: optional(Schema.String)
}).annotations({ identifier: "AccountRemovePasskey" })

/** Trust no other browser of the user as a trusted device; this one stays trusted if it was. */
const AccountForgetDevices = Schema.Struct({
  ...Ticket.fields,
  action: Schema.Literal("forget_devices")
}).annotations({ identifier: "AccountForgetDevices" })

/** Trust one of the user's devices no more, by the handle the page listed it with. */
const AccountForgetDevice = Schema.Struct({
  ...Ticket.fields,
  action: Schema.Literal("forget_device"),
  device: optional(Schema.String)
}).annotations({ identifier: "AccountForgetDevice" })

/** Add an authenticator app: a new secret, pending until a code confirms it. */
const AccountTotpEnrol = Schema.Struct({
  ...Ticket.fields,
  action: Schema.Literal("totp_enrol")
}).annotations({ identifier: "AccountTotpEnrol" })

/** Confirm the pending authenticator app with a code it shows. */
const AccountTotpConfirm = Schema.Struct({
  ...Ticket.fields,
  action: Schema.Literal("totp_confirm"),
  code: optional(Schema.String)
}).annotations({ identifier: "AccountTotpConfirm" })

/** Remove the authenticator app, or make new recovery codes: `proof` is a code of the app or the password. */
const AccountTotpChange = Schema.Struct({
  ...Ticket.fields,
  action: Schema.Literal("totp_remove", "totp_recovery"),
  proof: optional(Schema.String)
}).annotations({ identifier: "AccountTotpChange" })

/**
 * The forms of the account page, one per `action`; a section added to the page adds its own
 * actions here.
 */
export const AccountForm = Schema.Union(
  AccountSignIn,
  OwnPageFactor,
  AccountPassword,
  AccountEndSession,
  AccountEndOthers,
  AccountRenamePasskey,
  AccountRemovePasskey,
  AccountForgetDevices,
  AccountForgetDevice,
  AccountTotpEnrol,
  AccountTotpConfirm,
  AccountTotpChange,
  ConsentsSignOut
).annotations({ identifier: "AccountForm" })

/** A decoded account page form. */
export type AccountForm = typeof AccountForm.Type

/** Decode an account page form; an unknown action is refused. */
export const accountFormOf = Schema.decodeUnknownEither(AccountForm)
