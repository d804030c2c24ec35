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
  "token_revoked"
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
  detail: Schema.NullOr(Schema.String)
})
/** One audit event. */
export type AuditEvent = typeof AuditEvent.Type
