/**
 * Operator accounts: the people who sign in to the console on the admin listener, apart from the
 * platform's users. An operator has a role, and the role alone decides what they may do
 * (`may`, the one place the console's permissions are written).
 */
import { Schema } from "effect"

/** What an operator may do: `viewer` reads, `operator` also manages, `admin` also administers. */
export const Role = Schema.Literal("admin", "operator", "viewer")
/** An operator's role. */
export type Role = typeof Role.Type

/** An operator account as stored. Times are epoch seconds. */
export const Operator = Schema.Struct({
  /** The name the operator signs in with (`nameProblem`). */
  name: Schema.String,
  /** The PasswordHasher's hash of the password, as users' passwords. */
  passwordHash: Schema.String,
  role: Role,
  createdAt: Schema.Number,
  /** The last successful sign-in to the console; null before the first. */
  lastSignInAt: Schema.NullOr(Schema.Number)
})
/** An operator account as stored. */
export type Operator = typeof Operator.Type

/**
 * The actions of the console (and of what later views add): reading anything; managing
 * applications, users and consents; administering signing keys, operators and settings.
 */
export const Action = Schema.Literal(
  "read",
  "manage_applications",
  "manage_users",
  "manage_consents",
  "manage_keys",
  "manage_operators",
  "manage_settings"
)
/** An action of the console. */
export type Action = typeof Action.Type

const managing: ReadonlyArray<Action> = ["read", "manage_applications", "manage_users", "manage_consents"]

/** The actions each role allows: the one table of the console's permissions. */
export const allowed: Readonly<Record<Role, ReadonlySet<Action>>> = {
  viewer: new Set<Action>(["read"]),
  operator: new Set<Action>(managing),
  admin: new Set<Action>([...managing, "manage_keys", "manage_operators", "manage_settings"])
}

/** Whether an operator of `role` may take `action`. */
export const may = (role: Role, action: Action): boolean => allowed[role].has(action)

/** Longest operator name. */
export const maxNameLength = 64

const namePattern = /^[a-z0-9][a-z0-9._-]*$/

/**
 * Why `name` cannot name an operator, or null: 1 to 64 characters of lowercase ASCII letters,
 * digits, `.`, `_` and `-`, starting with a letter or digit (it goes into the audit trail's
 * actor as `operator:<name>` and onto the console's pages).
 */
export const nameProblem = (name: string): string | null =>
  name.length === 0 || name.length > maxNameLength || !namePattern.test(name)
    ? `an operator name is 1 to ${maxNameLength} characters: lowercase letters, digits, ".", "_" and "-", starting with a letter or digit`
    : null

/** The audit trail's actor of a change the operator made in the console. */
export const actorOf = (name: string): string => `operator:${name}`
