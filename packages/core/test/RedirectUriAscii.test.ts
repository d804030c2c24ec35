/**
 * A redirect URI no `Location` header can carry (non-ASCII, a space, a control character) is
 * refused at registration by `Application.validateRedirectUri`; one an application row holds
 * already (written before the rule, or around `Admin.createApplication`) never matches, so
 * authorize answers its 400 error page instead of a redirect that would fail (docs/security.md,
 * catalogue A24).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Application from "../src/model/Application.js"
import * as Scope from "../src/model/Scope.js"
import * as Authorize from "../src/oauth/Authorize.js"
import { ApplicationStore } from "../src/storage/ApplicationStore.js"
import { form, newUser, TestLayer } from "./fixtures.js"

const good = "http://127.0.0.1:9000/cb"
const stored = [
  "http://127.0.0.1:9000/cb/\u20ac",
  "https://app.example/caf\u00e9",
  "https://app.example/c b",
  "https://app.example/cb\u0007",
  "https://app.example/cb\u2028"
]

/** An application row written straight into the store, around registration. */
const legacyApp: Application.Application = {
  appKey: "legacy-app",
  name: "Legacy",
  secretDigest: "not-a-digest",
  redirectUris: [good, ...stored],
  scopes: Either.getOrThrow(Scope.parse("read")),
  grantTypes: ["authorization_code", "implicit"],
  requirePkce: false,
  accessTokenTtl: null,
  refreshTokenTtl: null,
  createdAt: 0
}

describe("stored redirect URIs that are not printable ASCII", () => {
  it("never match, even when registered byte for byte", () => {
    for (const uri of stored) {
      assert.isTrue(legacyApp.redirectUris.includes(uri))
      assert.isFalse(Application.matchesRedirectUri(legacyApp, uri), JSON.stringify(uri))
    }
    assert.isTrue(Application.matchesRedirectUri(legacyApp, good))
  })

  it.effect(
    "A24: authorize answers the 400 error page for them, never a redirect; the clean URI still works",
    () =>
      Effect.gen(function* () {
        yield* Effect.flatMap(ApplicationStore, (s) => s.insert(legacyApp))
        for (const response_type of ["code", "token"]) {
          for (const uri of stored) {
            const r = yield* Effect.either(
              Authorize.validate(
                form({ response_type, client_id: legacyApp.appKey, redirect_uri: uri, state: "s" })
              )
            )
            assert.isTrue(Either.isLeft(r), JSON.stringify(uri))
            if (Either.isLeft(r)) {
              assert.strictEqual(r.left._tag, "ErrorPage", JSON.stringify(uri))
              if (r.left._tag === "ErrorPage") {
                assert.strictEqual(r.left.status, 400)
                assert.strictEqual(r.left.error, "invalid_request")
              }
            }
          }
        }
        const { user } = yield* newUser()
        const req = yield* Authorize.validate(
          form({ response_type: "code", client_id: legacyApp.appKey, redirect_uri: good, state: "s" })
        )
        const location = yield* Authorize.approve(req, user.userId)
        assert.isTrue(location.startsWith(`${good}?code=`), location)
      }).pipe(Effect.provide(TestLayer()))
  )
})
