/**
 * The operator accounts as administrators manage them (`Admin`, for the CLI; later the console's
 * operators view): creation, roles, passwords and deletion, each change audited in the write that
 * makes it. The operator's name goes into the event's detail; a password never does.
 */
import { Effect, Either, Option, Schema } from "effect"
import { nameProblem, type Operator, Role } from "../../model/Operator.js"
import * as Accounts from "../../security/Accounts.js"
import * as Audit from "../../security/Audit.js"
import { nowSeconds } from "../../services/internal/time.js"
import { PasswordHasher } from "../../services/PasswordHasher.js"
import { OperatorStore } from "../../storage/OperatorStore.js"
import type { StorageError } from "../../storage/StorageError.js"
import { type InvalidField, invalid } from "./fields.js"
import { found, NotFound } from "./users.js"

const noOperator = (name: string) =>
  new NotFound({ what: "operator", description: `no operator named ${JSON.stringify(name)}` })

const decodeRole = Schema.decodeUnknownEither(Role)

/** `role` as a role; else `InvalidField` for `role`. */
export const checkRole = (role: string) =>
  Either.match(decodeRole(role), {
    onLeft: () => invalid("role", "role must be admin, operator or viewer"),
    onRight: (r) => Effect.succeed(r)
  })

const checkOperatorName = (name: string): Effect.Effect<string, InvalidField> => {
  const problem = nameProblem(name)
  return problem === null ? Effect.succeed(name) : invalid("name", problem)
}

const checkPassword = (password: string): Effect.Effect<string, InvalidField> => {
  const problem = Accounts.passwordProblem(password)
  return problem === null ? Effect.succeed(password) : invalid("password", problem)
}

/** The operator with this name; `NotFound` when there is none. */
export const findOperator = Effect.fnUntraced(function* (name: string) {
  if (nameProblem(name) !== null) return yield* Effect.fail(noOperator(name))
  const operator = yield* Effect.flatMap(OperatorStore, (operators) => operators.find(name))
  if (Option.isNone(operator)) return yield* Effect.fail(noOperator(name))
  return operator.value
})

/** Every operator, by name. */
export const listOperators: Effect.Effect<
  ReadonlyArray<Operator>,
  StorageError,
  OperatorStore
> = Effect.flatMap(OperatorStore, (operators) => operators.list())

/**
 * Create an operator with a role and a password hashed with the PasswordHasher (the length rules
 * of users' passwords); recorded as `operator_created` in the same write. A name taken is 400.
 */
export const createOperator = Effect.fn("Admin.createOperator")(function* (
  name: string,
  role: string,
  password: string
) {
  yield* checkOperatorName(name)
  const checkedRole = yield* checkRole(role)
  yield* checkPassword(password)
  const passwordHash = yield* Effect.flatMap(PasswordHasher, (h) => h.hash(password))
  const operator: Operator = {
    name,
    passwordHash,
    role: checkedRole,
    createdAt: yield* nowSeconds,
    lastSignInAt: null
  }
  const operators = yield* OperatorStore
  // A name taken fails the write, so its event is not recorded either
  yield* Audit.recordWith(operators.insert(operator), [
    ["operator_created", { detail: `operator ${name}; role ${checkedRole}` }]
  ]).pipe(
    Effect.catchTag("OperatorNameTaken", () =>
      invalid("name", `an operator named ${JSON.stringify(name)} exists`)
    )
  )
  return operator
})

/** Change an operator's role; recorded as `operator_updated`. Their sessions carry the new role at once. */
export const setOperatorRole = Effect.fn("Admin.setOperatorRole")(function* (name: string, role: string) {
  const checkedRole = yield* checkRole(role)
  const target = yield* findOperator(name)
  const operators = yield* OperatorStore
  yield* Audit.recordWith(found(() => noOperator(name))(operators.setRole(name, checkedRole)), [
    ["operator_updated", { detail: `operator ${name}; role ${target.role} -> ${checkedRole}` }]
  ])
  return { ...target, role: checkedRole } satisfies Operator
})

/** Set an operator's password; every console session of theirs ends in the same write (`operator_updated`). */
export const setOperatorPassword = Effect.fn("Admin.setOperatorPassword")(function* (
  name: string,
  password: string
) {
  yield* checkPassword(password)
  const target = yield* findOperator(name)
  const passwordHash = yield* Effect.flatMap(PasswordHasher, (h) => h.hash(password))
  const operators = yield* OperatorStore
  yield* Audit.recordWith(found(() => noOperator(name))(operators.setPasswordHash(name, passwordHash)), [
    ["operator_updated", { detail: `operator ${name}; password set; sessions ended` }]
  ])
  return { ...target, passwordHash } satisfies Operator
})

/** Delete an operator and their console sessions; recorded as `operator_deleted`. */
export const deleteOperator = Effect.fn("Admin.deleteOperator")(function* (name: string) {
  const target = yield* findOperator(name)
  const operators = yield* OperatorStore
  yield* Audit.recordWith(found(() => noOperator(name))(operators.remove(name)), [
    ["operator_deleted", { detail: `operator ${name}` }]
  ])
  return target
})
