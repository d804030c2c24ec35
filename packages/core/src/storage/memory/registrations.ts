/** The memory store of initial access tokens and client registrations. */
import { Effect, Option } from "effect"
import type { InitialAccessToken, RegistrationStore } from "../RegistrationStore.js"
import { StorageError } from "../StorageError.js"
import { purge, type State } from "./state.js"

const live = (t: InitialAccessToken, now: number): boolean => t.usesLeft > 0 && t.expiresAt > now

/** The latest expiry first, then by digest in code unit order. */
const byExpiry = (a: InitialAccessToken, b: InitialAccessToken): number =>
  b.expiresAt - a.expiresAt || (a.tokenHash < b.tokenHash ? -1 : a.tokenHash > b.tokenHash ? 1 : 0)

/** Initial access tokens in `state.initialTokens`, registrations in `state.registrations`. */
export const registrationStore = (state: State): RegistrationStore["Type"] => {
  const { initialTokens: tokens, registrations } = state
  return {
    insertToken: (token) =>
      Effect.suspend(() => {
        if (tokens.has(token.tokenHash))
          return Effect.fail(new StorageError({ message: "duplicate initial access token" }))
        tokens.set(token.tokenHash, { ...token })
        return Effect.void
      }),
    listTokens: (now) => Effect.sync(() => [...tokens.values()].filter((t) => live(t, now)).sort(byExpiry)),
    findToken: (tokenHash, now) =>
      Effect.sync(() => Option.filter(Option.fromNullable(tokens.get(tokenHash)), (t) => live(t, now))),
    spendToken: (tokenHash, now) =>
      Effect.sync(() => {
        const found = tokens.get(tokenHash)
        if (found === undefined || !live(found, now)) return false
        tokens.set(tokenHash, { ...found, usesLeft: found.usesLeft - 1 })
        return true
      }),
    revokeToken: (tokenHash) => Effect.sync(() => tokens.delete(tokenHash)),
    purgeTokens: (now, limit) => Effect.sync(() => purge(tokens, (t) => !live(t, now), limit)),
    insertClient: (client) =>
      Effect.suspend(() => {
        if (!state.apps.has(client.appKey) || registrations.has(client.appKey))
          return Effect.fail(new StorageError({ message: "no such application, or already registered" }))
        registrations.set(client.appKey, { ...client })
        return Effect.void
      }),
    findClient: (appKey) => Effect.sync(() => Option.fromNullable(registrations.get(appKey)))
  }
}
