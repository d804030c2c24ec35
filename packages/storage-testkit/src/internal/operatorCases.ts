/**
 * Operator accounts and their console sessions (`OperatorStore`): one operator a name, roles and
 * passwords changed in place, and a new password or a deletion ending the operator's sessions
 * in the same write.
 */
import { assert, type Vitest } from "@effect/vitest"
import { type Operator, OperatorStore, type Stores } from "@latchkey/core"
import { Effect, Option } from "effect"
import * as F from "../Fixtures.js"

const operator = (role: Operator.Role = "viewer"): Operator.Operator => ({
  // Fresh random names keep the cases apart on a shared database
  name: F.id("op")
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "x"),
  passwordHash: F.hash(),
  role,
  createdAt: F.baseTime,
  lastSignInAt: null
})

const session = (name: string, expiresAt = F.baseTime + 3600): OperatorStore.ConsoleSession => ({
  idHash: F.hash(),
  operator: name,
  createdAt: F.baseTime + 10,
  expiresAt
})

/** Register the operator account cases with the contract's `it`. */
const accountCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("operators: an operator is stored once per name and read back as written", () =>
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      const op = operator("operator")
      yield* store.insert(op)
      const taken = yield* Effect.flip(store.insert({ ...op, role: "admin" }))
      assert.strictEqual(taken._tag, "OperatorNameTaken")
      assert.deepStrictEqual(yield* store.find(op.name), Option.some(op))
      assert.isTrue(Option.isNone(yield* store.find(`${op.name}x`)))
      const listed = (yield* store.list()).filter((o) => o.name === op.name)
      assert.deepStrictEqual(listed, [op])
    })
  )

  it.effect("operators: the list is by name in code unit order", () =>
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      const base = operator()
      const names = [`${base.name}-b`, `${base.name}.a`, `${base.name}_c`, `${base.name}0`]
      for (const name of names) yield* store.insert({ ...base, name })
      const listed = (yield* store.list()).map((o) => o.name).filter((n) => names.includes(n))
      assert.deepStrictEqual(listed, [...names].sort())
    })
  )

  it.effect("operators: a role changes in place; no such operator changes nothing", () =>
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      const op = operator("viewer")
      yield* store.insert(op)
      const s = session(op.name)
      assert.isTrue(yield* store.startSession(s))
      assert.isTrue(yield* store.setRole(op.name, "admin"))
      assert.strictEqual(Option.getOrThrow(yield* store.find(op.name)).role, "admin")
      // the role is read from the account at each request: the session stays
      assert.isTrue(Option.isSome(yield* store.findSession(s.idHash, F.baseTime)))
      assert.isFalse(yield* store.setRole(`${op.name}x`, "admin"))
    })
  )
}

/** Register the console session cases with the contract's `it`. */
const sessionCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("operators: a session is found until it expires and records the sign-in", () =>
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      const op = operator()
      yield* store.insert(op)
      const s = session(op.name, F.baseTime + 100)
      assert.isTrue(yield* store.startSession(s))
      assert.strictEqual(Option.getOrThrow(yield* store.find(op.name)).lastSignInAt, s.createdAt)
      assert.deepStrictEqual(yield* store.findSession(s.idHash, F.baseTime + 99), Option.some(s))
      assert.isTrue(Option.isNone(yield* store.findSession(s.idHash, F.baseTime + 100)))
    })
  )

  it.effect("operators: a session of an operator who does not exist is not stored", () =>
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      const s = session(operator().name)
      assert.isFalse(yield* store.startSession(s))
      assert.isTrue(Option.isNone(yield* store.findSession(s.idHash, F.baseTime)))
    })
  )

  it.effect("operators: signing out ends that session only", () =>
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      const op = operator()
      yield* store.insert(op)
      const a = session(op.name)
      const b = session(op.name)
      yield* store.startSession(a)
      yield* store.startSession(b)
      assert.isTrue(yield* store.endSession(a.idHash))
      assert.isFalse(yield* store.endSession(a.idHash))
      assert.isTrue(Option.isNone(yield* store.findSession(a.idHash, F.baseTime)))
      assert.isTrue(Option.isSome(yield* store.findSession(b.idHash, F.baseTime)))
    })
  )
}

/** Register the cases of what ends an operator's sessions with the contract's `it`. */
const endingCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("operators: a new password ends every session of that operator and no one else's", () =>
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      const op = operator()
      const other = operator()
      yield* store.insert(op)
      yield* store.insert(other)
      const mine = session(op.name)
      const theirs = session(other.name)
      yield* store.startSession(mine)
      yield* store.startSession(theirs)
      const hash = F.hash()
      assert.isTrue(yield* store.setPasswordHash(op.name, hash))
      assert.strictEqual(Option.getOrThrow(yield* store.find(op.name)).passwordHash, hash)
      assert.isTrue(Option.isNone(yield* store.findSession(mine.idHash, F.baseTime)))
      assert.isTrue(Option.isSome(yield* store.findSession(theirs.idHash, F.baseTime)))
      assert.isFalse(yield* store.setPasswordHash(`${op.name}x`, hash))
    })
  )

  it.effect("operators: deleting an operator ends their sessions; a second delete finds nothing", () =>
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      const op = operator()
      yield* store.insert(op)
      const s = session(op.name)
      yield* store.startSession(s)
      assert.isTrue(yield* store.remove(op.name))
      assert.isFalse(yield* store.remove(op.name))
      assert.isTrue(Option.isNone(yield* store.find(op.name)))
      assert.isTrue(Option.isNone(yield* store.findSession(s.idHash, F.baseTime)))
    })
  )

  it.effect("operators: purgeExpired deletes expired sessions only", () =>
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      const op = operator()
      yield* store.insert(op)
      const old = session(op.name, F.baseTime - 5)
      const live = session(op.name, F.baseTime + 5000)
      yield* store.startSession(old)
      yield* store.startSession(live)
      const purged = yield* store.purgeExpired(F.baseTime, 1000)
      assert.isAtLeast(purged, 1)
      // gone from the store, not only past its expiry
      assert.isTrue(Option.isNone(yield* store.findSession(old.idHash, F.baseTime - 10)))
      assert.isTrue(Option.isSome(yield* store.findSession(live.idHash, F.baseTime)))
    })
  )
}

/** Register the operator cases (accounts, then sessions) with the contract's `it`. */
export const operatorCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  accountCases(it)
  sessionCases(it)
  endingCases(it)
}
