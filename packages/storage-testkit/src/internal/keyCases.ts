/**
 * The signing-key part of the storage contract: at most one signing key, kept by the first of
 * several starters; rotations that each retire the key the one before stored, also when they
 * run at once; and the removal of retired keys once they are no longer published. Signing keys
 * are shared by the whole store, so each case runs against a new, empty store.
 */
import { assert, type Vitest } from "@effect/vitest"
import { KeyStore, SessionStore, type SigningKey, type Stores } from "@latchkey/core"
import { Effect } from "effect"
import * as F from "../Fixtures.js"
import type { MakeLayer } from "./sessionBoundsCases.js"

const T = F.baseTime

/** Runs an effect against a new, empty store. */
type Fresh = <A, E>(effect: Effect.Effect<A, E, Stores.Stores>) => Effect.Effect<A, unknown>

const list = Effect.flatMap(KeyStore.KeyStore, (s) => s.list())

/** The signing keys (`retiredAt` null) of `keys`. */
const signing = (keys: ReadonlyArray<SigningKey.SigningKey>) => keys.filter((k) => k.retiredAt === null)

/** `key` as a rotation at `now` retires it, published until `until`. */
const retired = (key: SigningKey.SigningKey, now: number, until: number): SigningKey.SigningKey => ({
  ...key,
  retiredAt: now,
  publishUntil: until
})

/** Storing the first signing key: once, by one of the starters. */
const initialization = (it: Vitest.MethodsNonLive<Stores.Stores>, fresh: Fresh): void => {
  it.effect(
    "keys: an empty store lists none; initialize stores the candidate, and ignores a second one",
    () =>
      fresh(
        Effect.gen(function* () {
          const keys = yield* KeyStore.KeyStore
          assert.deepStrictEqual(yield* keys.list(), [])
          const first = F.signingKey()
          yield* keys.initialize(first)
          assert.deepStrictEqual(yield* keys.list(), [first])
          yield* keys.initialize(F.signingKey({ createdAt: T + 1 }))
          assert.deepStrictEqual(yield* keys.list(), [first], "the signing key stays; the second is dropped")
        })
      )
  )

  it.effect(
    "keys: initializes started together on an empty store (each begun before any answered) keep exactly one of their candidates",
    () =>
      fresh(
        Effect.gen(function* () {
          const keys = yield* KeyStore.KeyStore
          const candidates = Array.from({ length: 4 }, () => F.signingKey())
          yield* Effect.all(candidates.map(keys.initialize), { concurrency: "unbounded", discard: true })
          const stored = yield* keys.list()
          assert.strictEqual(stored.length, 1, "one key is kept, the others dropped")
          assert.isTrue(candidates.some((c) => c.kid === stored[0]?.kid))
          assert.deepStrictEqual(
            stored,
            candidates.filter((c) => c.kid === stored[0]?.kid)
          )
        })
      )
  )
}

/** Rotations: one after another, and several at once. */
const rotation = (it: Vitest.MethodsNonLive<Stores.Stores>, fresh: Fresh): void => {
  it.effect(
    "keys: rotate retires exactly the signing key at now, published until the given time, and stores the next as the signing key; list is newest first",
    () =>
      fresh(
        Effect.gen(function* () {
          const keys = yield* KeyStore.KeyStore
          const a = F.signingKey()
          yield* keys.initialize(a)
          const b = F.signingKey({ createdAt: T + 10 })
          yield* keys.rotate(b, T + 10, T + 100)
          assert.deepStrictEqual(yield* keys.list(), [b, retired(a, T + 10, T + 100)])
          // A second rotation, in the same second b was created: two retired keys, each as retired.
          const c = F.signingKey({ createdAt: T + 10 })
          yield* keys.rotate(c, T + 10, T + 200)
          assert.deepStrictEqual(yield* keys.list(), [
            c,
            retired(b, T + 10, T + 200),
            retired(a, T + 10, T + 100)
          ])
        })
      )
  )

  it.effect("keys: rotate on an empty store stores the next key as the signing key and retires nothing", () =>
    fresh(
      Effect.gen(function* () {
        const keys = yield* KeyStore.KeyStore
        const next = F.signingKey()
        yield* keys.rotate(next, T, T + 100)
        assert.deepStrictEqual(yield* keys.list(), [next])
      })
    )
  )

  it.effect(
    "keys: rotations started together are serialized: each retires the key the one before stored, one signing key is left",
    () =>
      fresh(
        Effect.gen(function* () {
          const keys = yield* KeyStore.KeyStore
          const first = F.signingKey()
          yield* keys.initialize(first)
          const nexts = Array.from({ length: 4 }, (_, i) => F.signingKey({ createdAt: T + 10 + i }))
          yield* Effect.all(
            nexts.map((k, i) => keys.rotate(k, T + 10 + i, T + 100 + i)),
            { concurrency: "unbounded", discard: true }
          )
          const stored = yield* keys.list()
          assert.strictEqual(stored.length, 5, "every key is stored once")
          assert.strictEqual(signing(stored).length, 1, "exactly one signing key")
          const last = signing(stored)[0] as SigningKey.SigningKey
          assert.isTrue(
            nexts.some((k) => k.kid === last.kid),
            "the signing key is one of the rotations'"
          )
          assert.isNotNull(
            stored.find((k) => k.kid === first.kid)?.retiredAt ?? null,
            "the first key is retired"
          )
          // The rotations ran one after another: every other key is retired, each by a different one.
          const retirements = stored.filter((k) => k.retiredAt !== null).map((k) => k.publishUntil)
          assert.strictEqual(new Set(retirements).size, 4, "each rotation retired a different key")
        })
      )
  )
}

/** Removing the retired keys no longer published. */
const removal = (it: Vitest.MethodsNonLive<Stores.Stores>, fresh: Fresh): void => {
  it.effect(
    "keys: removeExpired deletes the retired keys with publishUntil <= now, never the signing key, and says how many",
    () =>
      fresh(
        Effect.gen(function* () {
          const keys = yield* KeyStore.KeyStore
          const a = F.signingKey()
          const b = F.signingKey({ createdAt: T + 1 })
          const c = F.signingKey({ createdAt: T + 2 })
          const d = F.signingKey({ createdAt: T + 3 })
          yield* keys.initialize(a)
          yield* keys.rotate(b, T + 1, T + 100)
          yield* keys.rotate(c, T + 2, T + 200)
          yield* keys.rotate(d, T + 3, T + 300)
          assert.strictEqual(yield* keys.removeExpired(T + 99), 0, "before any publishUntil")
          assert.strictEqual((yield* list).length, 4)
          assert.strictEqual(yield* keys.removeExpired(T + 200), 2, "at publishUntil, and before it")
          assert.deepStrictEqual(yield* keys.list(), [d, retired(c, T + 3, T + 300)])
          // Long after: the retired key goes, the signing key stays.
          assert.strictEqual(yield* keys.removeExpired(T + 1_000_000), 1)
          assert.deepStrictEqual(yield* keys.list(), [d])
          assert.strictEqual(yield* keys.removeExpired(T + 1_000_000), 0)
        })
      )
  )
}

/** Register the signing-key cases on `it`; each builds its own store with `makeLayer`. */
export const keyCases = (it: Vitest.MethodsNonLive<Stores.Stores>, makeLayer: MakeLayer): void => {
  const fresh: Fresh = (effect) => Effect.provide(effect, makeLayer(SessionStore.defaultLimits))
  initialization(it, fresh)
  rotation(it, fresh)
  removal(it, fresh)
}
