/**
 * `LATCHKEY_MFA`: `optional` unless set, `required` read in any case, anything else refused naming
 * the variable; what the core's settings take.
 */
import { assert, describe, it } from "@effect/vitest"
import { Config } from "@latchkey/core"
import { Either } from "effect"
import * as Env from "../src/Env.js"

describe("LATCHKEY_MFA", () => {
  it("unset: optional, the core's default", () => {
    assert.strictEqual(Env.read({}).mfa, "optional")
    assert.strictEqual(Config.defaults.mfa, "optional")
  })

  it("reads required and optional in any case; the core accepts them", () => {
    assert.strictEqual(Env.read({ LATCHKEY_MFA: "Required" }).mfa, "required")
    assert.strictEqual(Env.read({ LATCHKEY_MFA: "optional" }).mfa, "optional")
    const made = Config.make({ issuer: "https://auth.example", serverKey: "k".repeat(32), mfa: "required" })
    assert.isTrue(Either.isRight(made) && made.right.mfa === "required")
  })

  it("refuses anything else, naming the variable", () => {
    for (const value of ["on", "yes", "always", "totp"]) {
      assert.throws(() => Env.read({ LATCHKEY_MFA: value }), /^LATCHKEY_MFA /, value)
    }
  })
})
