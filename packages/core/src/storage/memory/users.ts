/** The memory store of platform users. */
import { Effect, Option } from "effect"
import { UsernameTaken, type UserStore } from "../UserStore.js"
import { forgetDevicesOf, pairKey, retireCodes, revokeWhere, type State } from "./state.js"

/** Users in `state.users`; disabling or removing one revokes, retires and ends what it holds. */
export const userStore = (state: State): UserStore["Type"] => {
  const { users, sessions } = state
  return {
    insert: (user) =>
      Effect.suspend(() => {
        for (const u of users.values()) {
          if (u.username === user.username) return Effect.fail(new UsernameTaken({ username: user.username }))
        }
        users.set(user.userId, { ...user, disabledAt: user.disabledAt ?? null })
        return Effect.void
      }),
    setPasswordHash: (userId, passwordHash, options) =>
      Effect.sync(() => {
        const user = users.get(userId)
        if (user === undefined) return false
        if (options?.keepSessions !== true) sessions.endSessionsOf(userId, options?.keepSession)
        // Every trusted-device cookie was bound to the old hash
        forgetDevicesOf(state, userId, null)
        users.set(userId, { ...user, passwordHash })
        return true
      }),
    setDisabled: (userId, disabled, now) =>
      Effect.sync(() => {
        const user = users.get(userId)
        if (user === undefined) return false
        if (disabled) {
          revokeWhere(state, (t) => t.userId === userId, now)
          retireCodes(state, userId, null)
          sessions.endSessionsOf(userId)
        }
        users.set(userId, { ...user, disabledAt: disabled ? (user.disabledAt ?? now) : null })
        return true
      }),
    findByUsername: (username) =>
      Effect.sync(() => Option.fromNullable([...users.values()].find((u) => u.username === username))),
    findById: (userId) => Effect.sync(() => Option.fromNullable(users.get(userId))),
    list: () => Effect.sync(() => [...users.values()].sort((a, b) => a.createdAt - b.createdAt)),
    deviceGeneration: (userId) => Effect.sync(() => state.deviceGenerations.get(userId) ?? 0),
    forgetDevices: (userId) =>
      Effect.sync(() => {
        if (!users.has(userId)) return Option.none()
        const next = (state.deviceGenerations.get(userId) ?? 0) + 1
        state.deviceGenerations.set(userId, next)
        return Option.some(next)
      }),
    remove: (userId, now) =>
      Effect.sync(() => {
        revokeWhere(state, (t) => t.userId === userId, now)
        retireCodes(state, userId, null)
        for (const k of state.consents.keys()) if (k.startsWith(pairKey(userId, ""))) state.consents.delete(k)
        state.factors.delete(userId)
        state.recoveryCodes.delete(userId)
        if (!users.delete(userId)) return false
        state.deviceGenerations.delete(userId)
        forgetDevicesOf(state, userId, null)
        for (const [id, p] of state.passkeys) if (p.userId === userId) state.passkeys.delete(id)
        for (const owners of state.owners.values()) owners.delete(userId)
        sessions.endSessionsOf(userId)
        return true
      })
  }
}
