/**
 * The review of applications (docs/platform.md): the operator's actions, the moves between
 * statuses they make, which of them need a reason, and what a move ends.
 */
import { Either, Schema } from "effect"
import type { Status } from "./Application.js"

/** An operator's review action. */
export const Action = Schema.Literal("approve", "reject", "suspend", "reinstate")
/** A review action. */
export type Action = typeof Action.Type

/** From which status each action moves, and to which. */
export const moves: { readonly [A in Action]: { readonly from: Status; readonly to: Status } } = {
  approve: { from: "pending", to: "active" },
  reject: { from: "pending", to: "rejected" },
  suspend: { from: "active", to: "suspended" },
  reinstate: { from: "suspended", to: "active" }
}

/** A change of status: from the status the application must still have, to the new one, with the reason. */
export interface StatusChange {
  readonly from: Status
  readonly to: Status
  /** The operator's reason (a rejection, a suspension), else null. */
  readonly reason: string | null
}

/** Whether an action must carry the operator's reason (rejecting, suspending) or must not (the others). */
export const needsReason = (action: Action): boolean => action === "reject" || action === "suspend"

/** Longest reason kept, in characters. */
export const maxReasonLength = 500

/** The action cannot be taken from the application's status (409). */
export class IllegalTransition extends Schema.TaggedError<IllegalTransition>()("IllegalTransition", {
  appKey: Schema.String,
  action: Action,
  /** The application's status when the action was asked. */
  current: Schema.String,
  description: Schema.String
}) {
  readonly error = "conflict"
  readonly status = 409
}

/**
 * A developer's change refused: the application is rejected or suspended (or was changed so while
 * the change was made), and only the operator moves it on (409).
 */
export class NotEditable extends Schema.TaggedError<NotEditable>()("NotEditable", {
  appKey: Schema.String,
  current: Schema.String,
  description: Schema.String
}) {
  readonly error = "conflict"
  readonly status = 409
}

/** The refusal of a developer's change to an application whose status is `current`. */
export const notEditable = (appKey: string, current: string): NotEditable =>
  new NotEditable({
    appKey,
    current,
    description: `the application is ${current}: its owners cannot change it until the operator reinstates it`
  })

/** Whether a developer may change an application of this status: while it is active or pending. */
export const editable = (current: Status): boolean => current === "active" || current === "pending"

/** The refusal of `action` on an application whose status is `current`. */
export const refusal = (appKey: string, action: Action, current: string): IllegalTransition =>
  new IllegalTransition({
    appKey,
    action,
    current,
    description: `cannot ${action} an application that is ${current}: only a ${moves[action].from} one`
  })

/** The change `action` makes to an application of `current` status, or why it cannot. */
export const transition = (
  appKey: string,
  action: Action,
  current: Status,
  reason: string | null
): Either.Either<StatusChange, IllegalTransition> => {
  const move = moves[action]
  return current === move.from
    ? Either.right({ from: move.from, to: move.to, reason })
    : Either.left(refusal(appKey, action, current))
}

/**
 * Whether entering `to` ends everything issued to the application (every token revoked, every
 * unused code deleted, in the write that changes the status): a suspension or a rejection.
 */
export const endsIssued = (to: Status): boolean => to === "suspended" || to === "rejected"

/** The change that sends an active application back to review (a developer changed what the operator approved). */
export const resubmission: StatusChange = { from: "active", to: "pending", reason: null }
