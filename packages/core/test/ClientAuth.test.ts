/**
 * What client authentication costs (docs/security.md, checklist A5), counted through a counting
 * Digest service rather than timed: an unknown App Key, a wrong secret, a public application's
 * key and the right secret each compute exactly one keyed digest, and nothing else.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as ClientAuth from "../src/oauth/ClientAuth.js"
import * as BasicAuth from "../src/oauth/requests/BasicAuth.js"
import * as Digest from "../src/services/Digest.js"
import { cb, newApp, TestLayer } from "./fixtures.js"

/** A Digest service over Web Crypto that counts its calls by kind. */
const counting = () => {
  const calls = { sha256: 0, hmac: 0 }
  const layer = Digest.layer({
    sha256: (value) =>
      Effect.zipRight(
        Effect.sync(() => calls.sha256++),
        Digest.webCrypto.sha256(value)
      ),
    hmac: (key, value) =>
      Effect.zipRight(
        Effect.sync(() => calls.hmac++),
        Digest.webCrypto.hmac(key, value)
      )
  })
  return { calls, layer }
}

describe("ClientAuth.authenticate: the same cost whether the App Key exists or not", () => {
  const { calls, layer } = counting()

  /** The digests one authentication with these credentials computed, and whether it succeeded. */
  const attempt = (appKey: string, appSecret: string) =>
    Effect.gen(function* () {
      const before = { ...calls }
      const result = yield* Effect.either(
        ClientAuth.authenticate(BasicAuth.encode({ appKey, appSecret }), {}, "127.0.0.1")
      )
      return {
        ok: Either.isRight(result),
        digests: { sha256: calls.sha256 - before.sha256, hmac: calls.hmac - before.hmac }
      }
    })

  it.effect(
    "one keyed digest for an unknown key, a wrong secret, a rotated-out secret, a public key and the right secret",
    () =>
      Effect.gen(function* () {
        const { app, appSecret } = yield* newApp()
        const publicApp = yield* Admin.createApplication({ name: "Public", redirectUris: [cb], public: true })
        const rotated = yield* newApp()
        yield* Admin.rotateSecret(rotated.app.appKey, 0)
        const wrong = `${appSecret.slice(0, -1)}${appSecret.endsWith("A") ? "B" : "A"}`
        const cases = [
          ["unknown App Key", yield* attempt("no-such-app-key-000000000", appSecret), false],
          ["wrong secret", yield* attempt(app.appKey, wrong), false],
          ["a wrong secret of another length", yield* attempt(app.appKey, "x"), false],
          ["a secret rotated out", yield* attempt(rotated.app.appKey, rotated.appSecret), false],
          ["a public application's key", yield* attempt(publicApp.app.appKey, appSecret), false],
          ["the right secret", yield* attempt(app.appKey, appSecret), true]
        ] as const
        for (const [name, { ok, digests }, expected] of cases) {
          assert.strictEqual(ok, expected, name)
          assert.deepStrictEqual(digests, { sha256: 0, hmac: 1 }, name)
        }
      }).pipe(Effect.provide(Layer.merge(TestLayer(), layer)))
  )
})
