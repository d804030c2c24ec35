/**
 * Password hashing as a service: the core never hashes itself, so runtimes plug
 * in a memory-hard hash (the reference server uses scrypt from node:crypto).
 */
import { Context, type Effect } from "effect"

/** Hashes and verifies user passwords. */
export class PasswordHasher extends Context.Tag("@latchkey/core/PasswordHasher")<
  PasswordHasher,
  {
    /** A self-describing hash of `password` (algorithm, parameters, salt). */
    readonly hash: (password: string) => Effect.Effect<string>
    /** Whether `password` matches `hash`. Must take the same time for a wrong password as a right one. */
    readonly verify: (password: string, hash: string) => Effect.Effect<boolean>
  }
>() {}

/** Longest password accepted, checked before hashing (docs/security.md, catalogue P-6). */
export const maxPasswordLength = 1024
/** Longest username accepted. */
export const maxUsernameLength = 128
