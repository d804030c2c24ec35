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

/** The sign-in form, and "Not you?" of the consent page (`switch_account`, which signs out first). */
export const SignInForm = Schema.Struct({
  ...Ticket.fields,
  username: optional(Schema.String),
  password: optional(Schema.String),
  switch_account: optional(Schema.String)
}).annotations({ identifier: "SignInForm" })

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
export const ConsentsForm = Schema.Union(ConsentsSignIn, ConsentsWithdraw, ConsentsSignOut).annotations({
  identifier: "ConsentsForm"
})

/** A decoded consents page form. */
export type ConsentsForm = typeof ConsentsForm.Type

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
