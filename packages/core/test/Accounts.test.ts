import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, ManagedRuntime } from "effect"
import * as Accounts from "../src/security/Accounts.js"
import * as Audit from "../src/security/Audit.js"
import * as Throttle from "../src/security/Throttle.js"
import * as Entropy from "../src/services/Entropy.js"
import { PasswordHasher } from "../src/services/PasswordHasher.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import * as Memory from "../src/storage/Memory.js"
import { UserStore } from "../src/storage/UserStore.js"
import { settings } from "./fixtures.js"

/** A hasher whose hashes start with `name$`, counting what it is asked to do. */
const countingHasher = (name: string, delay = 0) => {
  const calls = { hashes: 0, verified: [] as Array<string> }
  const hasher = Layer.succeed(PasswordHasher, {
    hash: (p) =>
      Effect.sleep(delay).pipe(Effect.zipRight(Effect.sync(() => calls.hashes++)), Effect.as(`${name}$${p}`)),
    verify: (p, h) =>
      Effect.sync(() => {
        calls.verified.push(h)
        return h === `${name}$${p}`
      })
  })
  return { calls, layer: Layer.mergeAll(Memory.layer, Throttle.layer(), hasher, settings()) }
}

/** A sign-in of a user that does not exist, answered with the generic refusal. */
const unknownSignIn = (username = `nobody-${Math.random().toString(36).slice(2)}`) =>
  Accounts.authenticate(username, "some password", "127.0.0.1").pipe(
    Effect.flip,
    Effect.map((e) => assert.deepInclude(e, { _tag: "InvalidGrant", description: Accounts.badCredentials }))
  )

describe("Accounts.authenticate, unknown user", () => {
  it.effect("verifies against a dummy hash of the same hasher, hashed once", () => {
    const { calls, layer } = countingHasher("a")
    return Effect.gen(function* () {
      yield* unknownSignIn()
      assert.strictEqual(calls.verified.length, 1)
      assert.isTrue(calls.verified[0]?.startsWith("a$"))
      yield* Effect.all([unknownSignIn(), unknownSignIn(), unknownSignIn()], { concurrency: "unbounded" })
      assert.strictEqual(calls.verified.length, 4)
      assert.strictEqual(new Set(calls.verified).size, 1)
      assert.strictEqual(calls.hashes, 1)
    }).pipe(Effect.provide(layer))
  })

  it("two runtimes with different hashers each verify against their own hasher's dummy", async () => {
    const a = countingHasher("a")
    const b = countingHasher("b")
    const runtimeA = ManagedRuntime.make(a.layer)
    const runtimeB = ManagedRuntime.make(b.layer)
    try {
      await runtimeA.runPromise(unknownSignIn())
      await runtimeB.runPromise(unknownSignIn())
      await runtimeA.runPromise(unknownSignIn())
      assert.strictEqual(a.calls.verified.length, 2)
      assert.isTrue(a.calls.verified.every((h) => h.startsWith("a$")))
      assert.strictEqual(b.calls.verified.length, 1)
      assert.isTrue(b.calls.verified.every((h) => h.startsWith("b$")))
      assert.strictEqual(a.calls.hashes, 1)
      assert.strictEqual(b.calls.hashes, 1)
    } finally {
      await runtimeA.dispose()
      await runtimeB.dispose()
    }
  })

  it.live("a sign-in interrupted while the dummy is hashed does not spoil it for the next", () => {
    const { calls, layer } = countingHasher("a", 20)
    return Effect.gen(function* () {
      const first = yield* Effect.fork(unknownSignIn())
      yield* Effect.sleep(5)
      assert.isTrue(Exit.isInterrupted(yield* Fiber.interrupt(first)))
      yield* unknownSignIn()
      assert.strictEqual(calls.hashes, 1)
      assert.strictEqual(calls.verified.length, 1)
      assert.isTrue(calls.verified[0]?.startsWith("a$"))
    }).pipe(Effect.provide(layer))
  })
})

describe("Accounts.createUser", () => {
  it.effect("a user id never starts with '-', which a command line would read as an option", () => {
    // The first draw encodes to "-…" (0xf8 >> 2 is index 62 of base64url), the second to "A…"
    const draws = [0xf8, 0x00]
    const entropy = Layer.succeed(Entropy.Entropy, {
      bytes: (n) => Effect.sync(() => new Uint8Array(n).fill(draws.shift() ?? 0x10))
    })
    const { layer } = countingHasher("u")
    return Effect.gen(function* () {
      const user = yield* Accounts.createUser("dash-user", "a good password")
      assert.strictEqual(user.userId[0], "A")
      assert.deepStrictEqual(draws, [])
    }).pipe(Effect.provide(Layer.merge(layer, entropy)))
  })
})

describe("Accounts.authenticate, disabled user", () => {
  it.effect("is refused like a wrong password: the same answer, one verification, signin_failed", () => {
    const { calls, layer } = countingHasher("d")
    const audited = Layer.provideMerge(Audit.layer, Memory.auditLayer)
    return Effect.gen(function* () {
      const user = yield* Accounts.createUser("disabled-user", "the right password")
      yield* Effect.flatMap(UserStore, (s) => s.setDisabled(user.userId, true, 0))
      const right = yield* Effect.flip(
        Accounts.authenticate("disabled-user", "the right password", "127.0.0.1")
      )
      const wrong = yield* Effect.flip(
        Accounts.authenticate("disabled-user", "a wrong password", "127.0.0.1")
      )
      assert.deepStrictEqual(right, wrong)
      assert.deepInclude(right, { _tag: "InvalidGrant", description: Accounts.badCredentials })
      assert.strictEqual(calls.verified.length, 2, "the password is verified either way")
      const failed = yield* Effect.flatMap(AuditStore, (s) => s.query({ limit: 10, type: "signin_failed" }))
      assert.deepStrictEqual(
        failed.map((e) => [e.userId, e.detail]),
        [
          [user.userId, null],
          [user.userId, "account disabled"]
        ]
      )
      yield* Effect.flatMap(UserStore, (s) => s.setDisabled(user.userId, false, 0))
      const ok = yield* Accounts.authenticate("disabled-user", "the right password", "127.0.0.1")
      assert.strictEqual(ok.userId, user.userId)
    }).pipe(Effect.provide(Layer.mergeAll(layer, audited, Entropy.layer)))
  })
})
