/**
 * The initial access tokens an operator issues for dynamic client registration (RFC 7591 §3):
 * each authorises a number of registrations until it expires. The token is shown once; the store
 * keeps its SHA-256, which behind the prefix `rt_` is its id (`idOf`). Every change is audited.
 */
import { Effect } from "effect"
import * as Audit from "../../security/Audit.js"
import { sha256 } from "../../services/Digest.js"
import * as Entropy from "../../services/Entropy.js"
import { nowSeconds } from "../../services/internal/time.js"
import { type InitialAccessToken, RegistrationStore } from "../../storage/RegistrationStore.js"
import { invalid } from "./fields.js"
import { NotFound } from "./users.js"

/**
 * The id an initial access token is listed and revoked by: its SHA-256 (base64url) behind a prefix,
 * so it never starts with "-" on a command line.
 */
export const idOf = (tokenHash: string): string => `rt_${tokenHash}`

/** Most registrations one initial access token may authorise. */
export const maxUses = 10_000
/** Longest an initial access token may live: one year, in seconds. */
export const maxLifetime = 365 * 24 * 3600

/** What `registration-token create` takes. */
export interface NewInitialAccessToken {
  /** Registrations it authorises: 1 to `maxUses`. */
  readonly uses: number
  /** Seconds it lives: 60 to `maxLifetime`. */
  readonly expiresIn: number
}

/** A new initial access token: shown this once, and its record. */
export interface IssuedInitialAccessToken {
  readonly token: string
  readonly record: InitialAccessToken
}

/** Issue an initial access token, recorded as `registration_token_created` (never the token) in the same write. */
export const createInitialAccessToken = Effect.fn("Admin.createInitialAccessToken")(function* (
  input: NewInitialAccessToken
) {
  if (!Number.isInteger(input.uses) || input.uses < 1 || input.uses > maxUses) {
    return yield* invalid("uses", `uses must be a whole number from 1 to ${maxUses}`)
  }
  if (!Number.isInteger(input.expiresIn) || input.expiresIn < 60 || input.expiresIn > maxLifetime) {
    return yield* invalid("expires_in", "expires_in must be a whole number of seconds from 60 to one year")
  }
  // A prefix says what it is, and keeps it from starting with "-" on a command line
  const token = `lk_reg_${yield* Entropy.token}`
  const now = yield* nowSeconds
  const record: InitialAccessToken = {
    tokenHash: yield* sha256(token),
    usesLeft: input.uses,
    expiresAt: now + input.expiresIn,
    createdAt: now
  }
  const store = yield* RegistrationStore
  yield* Audit.recordWith(store.insertToken(record), [
    ["registration_token_created", { detail: `id ${idOf(record.tokenHash)}; ${input.uses} uses` }]
  ])
  return { token, record } satisfies IssuedInitialAccessToken
})

/** The initial access tokens that still authorise a registration, the latest expiry first. */
export const listInitialAccessTokens = Effect.flatMap(RegistrationStore, (store) =>
  Effect.flatMap(nowSeconds, (now) => store.listTokens(now))
)

/** Revoke an initial access token by its id, recorded as `registration_token_revoked`; `NotFound` when there is none. */
export const revokeInitialAccessToken = Effect.fn("Admin.revokeInitialAccessToken")(function* (id: string) {
  const store = yield* RegistrationStore
  const gone = store.revokeToken(id.startsWith("rt_") ? id.slice(3) : "").pipe(
    Effect.filterOrFail(
      (revoked) => revoked,
      () =>
        new NotFound({ what: "initial access token", description: "no initial access token with this id" })
    )
  )
  yield* Audit.recordWith(gone, [["registration_token_revoked", { detail: `id ${id}` }]])
})
