/**
 * The bodies of the admin API's review and ownership endpoints (docs/platform.md), beside
 * `AdminJson`: the operator's reason, the owner to add, and what those endpoints answer.
 */
import { Schema } from "effect"
import { maxReasonLength } from "../model/Review.js"
import type { User } from "../model/User.js"

/** `POST .../reject` and `.../suspend`: the operator's reason, kept with the application and shown to its owners. */
export const Reason = Schema.Struct({
  reason: Schema.String.annotations({
    description: `1-${maxReasonLength} characters, without control, bidirectional or invisible formatting characters`
  })
}).annotations({ identifier: "ReviewReason" })

/** `POST .../owners`: the user to make a co-owner. */
export const NewOwner = Schema.Struct({
  user: Schema.String.annotations({ description: "the user id, or else the username" })
}).annotations({ identifier: "NewOwner" })

/** An application's owners, by user id, in the order they were added. */
export const OwnersJson = Schema.Struct({
  app_key: Schema.String,
  owners: Schema.Array(Schema.String)
}).annotations({ identifier: "Owners" })

/** An owner added (false when the user owned the application already) or removed. */
export const OwnerChange = Schema.Struct({
  app_key: Schema.String,
  user_id: Schema.String,
  username: Schema.String,
  owner: Schema.Boolean.annotations({ description: "whether the user owns the application now" }),
  changed: Schema.Boolean.annotations({
    description: "false when the user already was (or was not) an owner"
  })
}).annotations({ identifier: "OwnerChange" })

/** An owner change as shown. */
export const ownerChange = (
  appKey: string,
  user: User,
  owner: boolean,
  changed: boolean
): typeof OwnerChange.Type => ({
  app_key: appKey,
  user_id: user.userId,
  username: user.username,
  owner,
  changed
})
