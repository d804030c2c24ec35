import { randomBytes } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { WebAuthnServer } from "../src/index.js"
import { flags, SoftAuthenticator } from "./softAuthenticator.js"

const rpId = "auth.example"
const origin = "https://auth.example"
const service = await Effect.runPromise(WebAuthnServer.make)
const challenge = () => randomBytes(32).toString("base64url")
const expected = (c: string) => ({ rpId, challenge: c, origins: [origin] })

/** A passkey registered from `auth`, as the core stores it. */
const registered = (auth: SoftAuthenticator) =>
  Effect.map(service.verifyRegistration(auth.register(challenge0), expected(challenge0)), (r) => ({
    credentialId: r.credentialId,
    publicKey: r.publicKey,
    counter: r.counter,
    transports: r.transports
  }))
const challenge0 = challenge()

// biome-ignore lint/suspicious/noExplicitAny: the options' JSON, read as the browser reads it
type Options = any

const reasonOf = <A>(e: Effect.Effect<A, { readonly reason: string }>) =>
  Effect.map(Effect.flip(e), (f) => f.reason)

describe("WebAuthnServer options", () => {
  it.effect(
    "registration options: the core's challenge as it is, discoverable, user verification, attestation none",
    () =>
      Effect.gen(function* () {
        const c = challenge()
        const o = (yield* service.registrationOptions({
          rpId,
          rpName: "auth.example",
          challenge: c,
          userId: "user-1",
          userName: "alice",
          exclude: [{ credentialId: "AAAA", transports: ["internal"] }]
        })) as Options
        assert.strictEqual(o.challenge, c)
        assert.deepStrictEqual(o.rp, { name: "auth.example", id: rpId })
        assert.strictEqual(o.user.id, Buffer.from("user-1").toString("base64url"))
        assert.strictEqual(o.attestation, "none")
        assert.strictEqual(o.authenticatorSelection.residentKey, "required")
        assert.strictEqual(o.authenticatorSelection.userVerification, "required")
        assert.deepStrictEqual(o.excludeCredentials, [
          { id: "AAAA", type: "public-key", transports: ["internal"] }
        ])
      })
  )

  it.effect("authentication options: the core's challenge, any discoverable passkey, user verification", () =>
    Effect.gen(function* () {
      const c = challenge()
      const o = (yield* service.authenticationOptions({ rpId, challenge: c })) as Options
      assert.strictEqual(o.challenge, c)
      assert.strictEqual(o.rpId, rpId)
      assert.strictEqual(o.userVerification, "required")
      assert.deepStrictEqual(o.allowCredentials, [])
    })
  )
})

describe("WebAuthnServer registration", () => {
  it.effect(
    "a real attestation `none` verifies: the credential id, its COSE key, counter and backup flags",
    () =>
      Effect.gen(function* () {
        const auth = new SoftAuthenticator(rpId, origin)
        const c = challenge()
        const r = yield* service.verifyRegistration(auth.register(c), expected(c))
        assert.strictEqual(r.credentialId, auth.credentialId.toString("base64url"))
        assert.strictEqual(r.counter, 0)
        assert.deepStrictEqual(r.transports, ["internal"])
        assert.deepStrictEqual([r.deviceType, r.backedUp], ["singleDevice", false])
        const synced = new SoftAuthenticator(rpId, origin)
        const s = yield* service.verifyRegistration(
          synced.register(c, { f: flags.up | flags.uv | flags.at | flags.be | flags.bs }),
          expected(c)
        )
        assert.deepStrictEqual([s.deviceType, s.backedUp], ["multiDevice", true])
      })
  )

  it.effect("another challenge, origin or RP ID, no user verification, or garbage: CeremonyFailed", () =>
    Effect.gen(function* () {
      const auth = new SoftAuthenticator(rpId, origin)
      const c = challenge()
      yield* reasonOf(service.verifyRegistration(auth.register(challenge()), expected(c)))
      yield* reasonOf(
        service.verifyRegistration(auth.register(c, { origin: "https://evil.example" }), expected(c))
      )
      yield* reasonOf(service.verifyRegistration(auth.register(c), { ...expected(c), rpId: "other.example" }))
      yield* reasonOf(service.verifyRegistration(auth.register(c, { f: flags.up | flags.at }), expected(c)))
      for (const garbage of [
        null,
        42,
        {},
        { id: "x", response: {} },
        { ...auth.register(c), response: { clientDataJSON: "!!" } }
      ])
        yield* reasonOf(service.verifyRegistration(garbage, expected(c)))
    })
  )
})

describe("WebAuthnServer authentication", () => {
  it.effect("a real assertion verifies against the stored key and answers the new counter", () =>
    Effect.gen(function* () {
      const auth = new SoftAuthenticator(rpId, origin)
      const credential = yield* registered(auth)
      const c = challenge()
      const a = yield* service.verifyAuthentication(auth.assert(c, 1), expected(c), credential)
      assert.deepStrictEqual(a, { counter: 1, deviceType: "singleDevice", backedUp: false })
      // An authenticator without a counter (always 0) still verifies
      const z = yield* service.verifyAuthentication(auth.assert(c, 0), expected(c), credential)
      assert.strictEqual(z.counter, 0)
    })
  )

  it.effect(
    "another key, challenge, a counter not past the stored one, or no user verification: CeremonyFailed",
    () =>
      Effect.gen(function* () {
        const auth = new SoftAuthenticator(rpId, origin)
        const credential = yield* registered(auth)
        const c = challenge()
        const other = new SoftAuthenticator(rpId, origin)
        const forged = { ...other.assert(c, 1), id: credential.credentialId, rawId: credential.credentialId }
        yield* reasonOf(service.verifyAuthentication(forged, expected(c), credential))
        yield* reasonOf(service.verifyAuthentication(auth.assert(challenge(), 1), expected(c), credential))
        yield* reasonOf(
          service.verifyAuthentication(auth.assert(c, 4), expected(c), { ...credential, counter: 4 })
        )
        yield* reasonOf(
          service.verifyAuthentication(auth.assert(c, 1, { f: flags.up }), expected(c), credential)
        )
        yield* reasonOf(service.verifyAuthentication({ id: "x" }, expected(c), credential))
      })
  )
})
