import { assert, describe, it } from "vitest"
import * as Strength from "../src/security/Strength.js"

describe("sign-in strength (acr, amr)", () => {
  it("a password alone, an authenticator app and a passkey give rising levels and RFC 8176 methods", () => {
    assert.strictEqual(Strength.acrOf(undefined), Strength.passwordAcr)
    assert.deepStrictEqual(Strength.amrOf(undefined), ["pwd"])
    assert.strictEqual(Strength.acrOf("totp"), Strength.mfaAcr)
    assert.deepStrictEqual(Strength.amrOf("totp"), ["pwd", "otp", "mfa"])
    assert.strictEqual(Strength.acrOf("passkey"), Strength.phishingResistantAcr)
    assert.deepStrictEqual(Strength.amrOf("passkey"), ["swk", "user", "mfa"])
    assert.deepStrictEqual(Strength.amrOf("passkey-device"), ["hwk", "user", "mfa"])
  })

  it("acr_values: the weakest known value is needed, unknown values are ignored", () => {
    assert.strictEqual(Strength.required(undefined, false), null)
    assert.strictEqual(Strength.required("urn:other:gold", false), null)
    assert.strictEqual(Strength.required(`phr ${Strength.mfaAcr}`, false), Strength.mfaAcr)
    assert.strictEqual(Strength.required(`urn:other:gold phr`, false), Strength.phishingResistantAcr)
    assert.strictEqual(Strength.required(Strength.passwordAcr, false), Strength.passwordAcr)
  })

  it("a required second factor raises the need to two factors, never lowers a stronger ask", () => {
    assert.strictEqual(Strength.required(undefined, true), Strength.mfaAcr)
    assert.strictEqual(Strength.required(Strength.passwordAcr, true), Strength.mfaAcr)
    assert.strictEqual(Strength.required("phr", true), Strength.phishingResistantAcr)
  })

  it("a sign-in meets what is needed only when at least as strong", () => {
    assert.isTrue(Strength.meets(undefined, null))
    assert.isTrue(Strength.meets(undefined, Strength.passwordAcr))
    assert.isFalse(Strength.meets(undefined, Strength.mfaAcr))
    assert.isTrue(Strength.meets("totp", Strength.mfaAcr))
    assert.isFalse(Strength.meets("totp", Strength.phishingResistantAcr))
    assert.isTrue(Strength.meets("passkey", Strength.phishingResistantAcr))
    assert.isTrue(Strength.meets("passkey-device", Strength.mfaAcr))
  })
})
