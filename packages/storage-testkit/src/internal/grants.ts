/**
 * What the cases that run the core's grants need besides the stores: a configuration, entropy,
 * a password hasher that needs no CPU time, and the throttle policy; and how a grant ended.
 */
import { Config, Entropy, type PasswordChecks, PasswordHasher, Throttle } from "@latchkey/core"
import { Cause, Effect, Exit, Layer, Option } from "effect"

/** A password hasher whose hash of `p` is `test$p`. */
export const hasher = PasswordHasher.PasswordHasher.of({
  hash: (p) => Effect.succeed(`test$${p}`),
  verify: (p, h) => Effect.succeed(h === `test$${p}`)
})

/** What the grants need besides the stores. */
export const grantServices: Layer.Layer<
  | Config.Config
  | Entropy.Entropy
  | PasswordHasher.PasswordHasher
  | Throttle.ThrottlePolicy
  | PasswordChecks.PasswordChecks
> = Layer.mergeAll(
  Layer.orDie(
    Config.layer({ issuer: "https://auth.example", serverKey: "test-server-key-0123456789abcdef" })
  ),
  Entropy.layer,
  Layer.succeed(PasswordHasher.PasswordHasher, hasher),
  Throttle.policyLayer()
)

/** The OAuth error code a grant failed with, or a description of how else it ended. */
export const failureOf = <A, E>(exit: Exit.Exit<A, E>): string => {
  if (Exit.isSuccess(exit)) return "succeeded"
  const failure = Option.getOrUndefined(Cause.failureOption(exit.cause)) as
    | { readonly error?: string }
    | undefined
  return failure?.error ?? "died"
}
