/**
 * The initial access tokens of dynamic client registration as the CLI and the admin API show
 * them (`AdminJson` re-exports them): never the token, but when it is just issued.
 */
import { Schema } from "effect"
import type { InitialAccessToken } from "../../storage/RegistrationStore.js"
import { Time, time } from "./json.js"
import { idOf } from "./registration.js"

/** `POST /admin/v1/registration-tokens`. */
export const CreateRegistrationToken = Schema.Struct({
  uses: Schema.Int.annotations({ description: "how many registrations it authorises, 1 to 10000" }),
  expires_in: Schema.Int.annotations({ description: "seconds it lives, 60 to one year" })
}).annotations({ identifier: "CreateRegistrationToken" })

/** An initial access token of dynamic client registration as listed: never the token. */
export const RegistrationTokenJson = Schema.Struct({
  id: Schema.String.annotations({
    description: "rt_ and the SHA-256 of the token, base64url: revoke it by this id"
  }),
  uses_left: Schema.Int,
  expires_at: Time,
  created_at: Time
}).annotations({ identifier: "RegistrationToken" })

/** A new initial access token: the token, shown this once, and how it is listed. */
export const CreatedRegistrationToken = Schema.Struct({
  ...RegistrationTokenJson.fields,
  token: Schema.String.annotations({
    description:
      "the initial access token (RFC 7591 §3): a client sends it as Authorization: Bearer <token>; shown this once"
  })
}).annotations({ identifier: "CreatedRegistrationToken" })

/** An initial access token as listed. */
export const registrationToken = (t: InitialAccessToken): typeof RegistrationTokenJson.Type => ({
  id: idOf(t.tokenHash),
  uses_left: t.usesLeft,
  expires_at: time(t.expiresAt),
  created_at: time(t.createdAt)
})
