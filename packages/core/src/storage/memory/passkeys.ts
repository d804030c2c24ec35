/** The memory store of passkeys. */
import { Effect, Option } from "effect"
import { CredentialTaken, type Passkey, type PasskeyStore } from "../PasskeyStore.js"
import type { State } from "./state.js"

/** Oldest first: by `createdAt`, then credential id in code unit order. */
export const byAge = (a: Passkey, b: Passkey): number =>
  a.createdAt - b.createdAt ||
  (a.credentialId < b.credentialId ? -1 : a.credentialId > b.credentialId ? 1 : 0)

/** Passkeys in `state.passkeys`, by credential id. */
export const passkeyStore = ({ passkeys }: State): PasskeyStore["Type"] => ({
  insert: (passkey) =>
    Effect.suspend(() => {
      if (passkeys.has(passkey.credentialId))
        return Effect.fail(new CredentialTaken({ credentialId: passkey.credentialId }))
      passkeys.set(passkey.credentialId, { ...passkey, transports: [...passkey.transports] })
      return Effect.void
    }),
  find: (credentialId) => Effect.sync(() => Option.fromNullable(passkeys.get(credentialId))),
  listByUser: (userId) =>
    Effect.sync(() => [...passkeys.values()].filter((p) => p.userId === userId).sort(byAge)),
  recordUse: (credentialId, use) =>
    Effect.sync(() => {
      const found = passkeys.get(credentialId)
      if (found === undefined || found.counter !== use.expected) return false
      passkeys.set(credentialId, {
        ...found,
        counter: use.counter,
        backedUp: use.backedUp,
        lastUsedAt: use.at
      })
      return true
    }),
  rename: (userId, credentialId, name) =>
    Effect.sync(() => {
      const found = passkeys.get(credentialId)
      if (found?.userId !== userId) return false
      passkeys.set(credentialId, { ...found, name })
      return true
    }),
  remove: (userId, credentialId) =>
    Effect.sync(() => passkeys.get(credentialId)?.userId === userId && passkeys.delete(credentialId))
})
