/** The memory store of operators and their console sessions. */
import { Effect, Option } from "effect"
import { OperatorNameTaken, type OperatorStore } from "../OperatorStore.js"
import { StorageError } from "../StorageError.js"
import { purge, type State } from "./state.js"

const endSessionsOf = (state: State, name: string): void => {
  for (const [k, s] of state.consoleSessions) if (s.operator === name) state.consoleSessions.delete(k)
}

/** Operators in `state.operators` by name, sessions in `state.consoleSessions` by id digest. */
export const operatorStore = (state: State): OperatorStore["Type"] => {
  const { operators, consoleSessions } = state
  return {
    insert: (operator) =>
      Effect.suspend(() => {
        if (operators.has(operator.name)) return Effect.fail(new OperatorNameTaken({ name: operator.name }))
        operators.set(operator.name, { ...operator })
        return Effect.void
      }),
    find: (name) => Effect.sync(() => Option.fromNullable(operators.get(name))),
    list: () =>
      Effect.sync(() =>
        [...operators.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      ),
    setRole: (name, role) =>
      Effect.sync(() => {
        const found = operators.get(name)
        if (found === undefined) return false
        operators.set(name, { ...found, role })
        return true
      }),
    setPasswordHash: (name, passwordHash) =>
      Effect.sync(() => {
        const found = operators.get(name)
        if (found === undefined) return false
        operators.set(name, { ...found, passwordHash })
        endSessionsOf(state, name)
        return true
      }),
    remove: (name) =>
      Effect.sync(() => {
        if (!operators.delete(name)) return false
        endSessionsOf(state, name)
        return true
      }),
    startSession: (session) =>
      Effect.suspend(() => {
        const found = operators.get(session.operator)
        if (found === undefined) return Effect.succeed(false)
        if (consoleSessions.has(session.idHash))
          return Effect.fail(new StorageError({ message: "duplicate console session" }))
        consoleSessions.set(session.idHash, { ...session })
        operators.set(found.name, { ...found, lastSignInAt: session.createdAt })
        return Effect.succeed(true)
      }),
    findSession: (idHash, now) =>
      Effect.sync(() =>
        Option.filter(Option.fromNullable(consoleSessions.get(idHash)), (s) => s.expiresAt > now)
      ),
    endSession: (idHash) => Effect.sync(() => consoleSessions.delete(idHash)),
    purgeExpired: (now, limit) => Effect.sync(() => purge(consoleSessions, (s) => s.expiresAt <= now, limit))
  }
}
