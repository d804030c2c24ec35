/**
 * D16: a sign-in whose password check succeeded just before a disable, a delete or a new password
 * committed stores no session. The interleaving is pinned: the password hasher's verify waits at a
 * gate while the test changes the account, then the sign-in goes on.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, FiberId, Layer, Option } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as Accounts from "../src/security/Accounts.js"
import * as Throttle from "../src/security/Throttle.js"
import * as Entropy from "../src/services/Entropy.js"
import { PasswordHasher } from "../src/services/PasswordHasher.js"
import * as Memory from "../src/storage/Memory.js"
import { SessionStore } from "../src/storage/SessionStore.js"
import { Browser, setup, signIn, ticketOf, view } from "./browser.js"
import { settings } from "./fixtures.js"

/** Memory stores whose written signed-in sessions are noted, and a hasher whose verify waits at a gate once armed. */
const pinned = () => {
  const gate = {
    armed: false,
    reached: Deferred.unsafeMake<void>(FiberId.none),
    release: Deferred.unsafeMake<void>(FiberId.none)
  }
  const hasher = Layer.succeed(PasswordHasher, {
    hash: (p) => Effect.succeed(`test$${p}`),
    verify: (p, h) =>
      Effect.suspend(() => {
        const checked = Effect.succeed(h === `test$${p}`)
        if (!gate.armed) return checked
        gate.armed = false
        return Deferred.succeed(gate.reached, undefined).pipe(
          Effect.zipRight(Deferred.await(gate.release)),
          Effect.zipRight(checked)
        )
      })
  })
  const stores = Memory.make()
  const inner = Context.get(stores, SessionStore)
  const written: Array<string> = []
  const note = (s: { readonly idHash: string; readonly userId: string | null }) =>
    Effect.sync(() => {
      if (s.userId !== null) written.push(s.idHash)
    })
  const noted = Context.add(stores, SessionStore, {
    ...inner,
    save: (s) => Effect.zipRight(note(s), inner.save(s)),
    signIn: (s, checked) => Effect.zipRight(note(s), inner.signIn(s, checked))
  })
  const layer = Layer.mergeAll(
    Layer.succeedContext(noted),
    settings(),
    Entropy.layer,
    hasher,
    Throttle.layer()
  )
  // Every signed-in session written, as the store has it now
  const signedInStored = Effect.forEach(written, (idHash) => inner.find(idHash, 0)).pipe(
    Effect.map((found) => found.filter(Option.isSome))
  )
  return { gate, layer, signedInStored }
}

const changes = ["disable", "new password", "delete and re-create"] as const

describe("sign-in: the account as its password was checked (D16)", () => {
  for (const change of changes) {
    it.effect(
      `D16: a sign-in whose password was checked just before a ${change} committed is refused, and no session of the user is stored`,
      () => {
        const { gate, layer, signedInStored } = pinned()
        return Effect.gen(function* () {
          const { user, password, query } = yield* setup()
          const b = new Browser()
          gate.armed = true
          const post = yield* Effect.fork(signIn(b, query, user.username, password))
          // The password is verified against the account as it was read; the change commits now
          yield* Deferred.await(gate.reached)
          if (change === "disable") yield* Admin.disableUser(user)
          else if (change === "new password") yield* Admin.setPassword(user, "a new password")
          else {
            yield* Admin.deleteUser(user)
            yield* Accounts.createUser(user.username, password)
          }
          yield* Deferred.succeed(gate.release, undefined)
          const answer = yield* Fiber.join(post)
          const refused = view(answer, "SignIn")
          assert.deepStrictEqual(
            Option.map(refused.error, (e) => e.problem),
            Option.some("bad_credentials")
          )
          assert.deepStrictEqual(yield* signedInStored, [], "no signed-in session stored")
          if (change === "disable") yield* Admin.enableUser(user)
          view(yield* b.get(query), "SignIn")
          if (change === "new password") {
            // The page shown again is a working sign-in form of the same browser
            const again = { ...ticketOf(answer), username: user.username, password: "a new password" }
            view(yield* b.post("login", again), "Redirect")
          }
        }).pipe(Effect.provide(layer))
      }
    )
  }

  it.effect("D16: the same sign-in with nothing changed in between signs in", () => {
    const { gate, layer, signedInStored } = pinned()
    return Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      gate.armed = true
      const post = yield* Effect.fork(signIn(b, query, user.username, password))
      yield* Deferred.await(gate.reached)
      yield* Deferred.succeed(gate.release, undefined)
      view(yield* Fiber.join(post), "Redirect")
      assert.strictEqual((yield* signedInStored).length, 1)
      view(yield* b.get(query), "Consent")
    }).pipe(Effect.provide(layer))
  })
})
