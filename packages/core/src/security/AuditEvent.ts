/**
 * Audit events: what the audit trail records. Their own module so the
 * AuditStore service and the Audit module can both use them without a cycle.
 */
import { Schema } from "effect"

/** Kinds of audit event. */
export const EventType = Schema.Literal(
  "token_issued",
  "refresh_rotated",
  "refresh_reuse_detected",
  "family_revoked",
  "code_replay",
  "client_auth_failed",
  "client_auth_throttled",
  "signin_succeeded",
  "signin_failed",
  "signin_throttled",
  "consent_granted",
  "token_revoked",
  "secret_rotated",
  "client_auth_previous_secret",
  "application_created",
  "application_updated",
  "application_deleted",
  "user_created",
  "user_updated",
  "user_deleted",
  "subject_tokens_revoked",
  "consent_withdrawn",
  "signing_key_rotated",
  "mfa_enrolled",
  "mfa_confirmed",
  "mfa_recovery_code_used",
  "mfa_recovery_codes_replaced",
  "mfa_reset",
  "logout",
  "password_changed",
  "session_ended",
  "passkey_registered",
  "passkey_signed_in",
  "passkey_removed",
  "backchannel_logout_delivered",
  "backchannel_logout_failed",
  "passkey_renamed",
  "devices_forgotten",
  "device_forgotten",
  "scope_created",
  "scope_updated",
  "scope_deleted",
  "application_approved",
  "application_rejected",
  "application_suspended",
  "application_reinstated",
  "application_owner_added",
  "application_owner_removed",
  "registration_token_created",
  "registration_token_revoked",
  "operator_created",
  "operator_updated",
  "operator_deleted",
  "console_signin_succeeded",
  "console_signin_failed",
  "console_signin_throttled",
  "console_signed_out"
)
/** A kind of audit event. */
export type EventType = typeof EventType.Type

/** One audit event. `detail` carries non-secret context such as the grant type. */
export const AuditEvent = Schema.Struct({
  at: Schema.Number,
  type: EventType,
  appKey: Schema.NullOr(Schema.String),
  userId: Schema.NullOr(Schema.String),
  openId: Schema.NullOr(Schema.String),
  address: Schema.NullOr(Schema.String),
  requestId: Schema.NullOr(Schema.String),
  detail: Schema.NullOr(Schema.String),
  /**
   * Who made an administrative change: `admin-api`, `cli`, `user` (a user on their own
   * consents page) or `operator:<name>` (an operator in the console); null for events of the
   * protocol. Optional so events built before it still type; the stores always return it.
   */
  actor: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true })
})
/** One audit event. */
export type AuditEvent = typeof AuditEvent.Type

/**
 * Longest value kept in a free-text field of an audit event (`appKey`, `userId`, `openId`,
 * `address`, `requestId`, `detail`), in UTF-16 code units. Longer values are cut to this
 * length (never inside a surrogate pair) before the event reaches any store, so a hostile
 * App Key or request id cannot fill the audit table or a terminal.
 */
export const maxFieldLength = 256

const cap = (value: string | null): string | null => {
  if (value === null || value.length <= maxFieldLength) return value
  const cut = value.slice(0, maxFieldLength)
  const last = cut.charCodeAt(cut.length - 1)
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut
}

/** The event with each free-text field cut to `maxFieldLength`; an event within bounds is returned as it is. */
export const bound = (event: AuditEvent): AuditEvent => {
  const { appKey, userId, openId, address, requestId, detail } = event
  const actor = event.actor ?? null
  const within = (v: string | null) => v === null || v.length <= maxFieldLength
  if (
    within(actor) &&
    within(appKey) &&
    within(userId) &&
    within(openId) &&
    within(address) &&
    within(requestId) &&
    within(detail)
  )
    return event
  return {
    ...event,
    appKey: cap(appKey),
    userId: cap(userId),
    openId: cap(openId),
    address: cap(address),
    requestId: cap(requestId),
    detail: cap(detail),
    ...(event.actor !== undefined ? { actor: cap(actor) } : {})
  }
}
