/**
 * Lookups and records the contract's cases share: finding a stored record or failing the test,
 * whether tokens are stored and when they were revoked, the audit event the audit cases append,
 * and the era the purge cases record in.
 */
import { assert } from "@effect/vitest"
import { type Token, TokenStore } from "@latchkey/core"
import { Effect, Option } from "effect"
import * as F from "../Fixtures.js"

/** The value of `o`, failing the test (naming `what`) when it is none. */
export const some = <A>(o: Option.Option<A>, what: string): A => {
  assert.isTrue(Option.isSome(o), `${what} should be found`)
  return Option.getOrThrow(o)
}

/** A stored token, looked up by kind and digest; fails the test when it is not stored. */
export const findToken = (t: Token.Token) =>
  Effect.flatMap(TokenStore.TokenStore, (s) => s.find(t.kind, t.tokenHash)).pipe(
    Effect.map((o) => some(o, `${t.kind} token`))
  )

/** Whether a token of this kind and digest is stored. */
export const isStored = (t: { readonly kind: Token.Token["kind"]; readonly tokenHash: string }) =>
  Effect.flatMap(TokenStore.TokenStore, (s) => s.find(t.kind, t.tokenHash)).pipe(Effect.map(Option.isSome))

/** Whether each token is stored, in order. */
export const areStored = (ts: ReadonlyArray<Token.Token>) =>
  Effect.flatMap(TokenStore.TokenStore, (s) =>
    Effect.forEach(ts, (t) => Effect.map(s.find(t.kind, t.tokenHash), Option.isSome))
  )

/** When each token was revoked (null while active), looked up by kind and digest. */
export const revokedAt = (ts: ReadonlyArray<Token.Token>) =>
  Effect.flatMap(TokenStore.TokenStore, (s) =>
    Effect.forEach(ts, (t) =>
      Effect.map(s.find(t.kind, t.tokenHash), (o) => some(o, `${t.kind} token`).revokedAt)
    )
  )

/**
 * The era the purge cases record in (epoch seconds), long before every other case's records, so
 * a purge never touches records another case still reads.
 */
export const purgeEra = 1_000_000_000

/** An audit event of the application (or of none): `Fixtures.auditEvent`. */
export const event = F.auditEvent

/**
 * Event details and their offsets in seconds, in the order the audit cases append them: out of
 * time order, "1a" and "1b" at the same instant, "1a" appended first.
 */
export const outOfOrder: ReadonlyArray<readonly [string, number]> = [
  ["5", 5],
  ["1a", 1],
  ["9", 9],
  ["1b", 1],
  ["3", 3],
  ["7", 7]
]
