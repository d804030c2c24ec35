import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import * as Admin from "../src/Admin.js"
import * as Application from "../src/Application.js"
import * as Digest from "../src/Digest.js"
import { ApplicationStore } from "../src/storage/ApplicationStore.js"
import { TokenStore } from "../src/storage/TokenStore.js"
import { newApp, newUser, TestLayer, token } from "./fixtures.js"

describe("application registration", () => {
  it("refuses redirect URIs that docs/security.md forbids (fragments, userinfo, http off loopback, dangerous schemes)", () => {
    for (const uri of [
      "http://app.example/cb",
      "https://app.example/cb#x",
      "javascript:alert(1)",
      "data:text/html,hi",
      "file:///etc/passwd",
      "vbscript:x",
      "/relative/cb",
      "https://user:pw@app.example/cb",
      "https://app.example/c b",
      "https:\\\\app.example\\cb",
      "com.example.app:/cb",
      ""
    ]) {
      assert.isTrue(Either.isLeft(Application.validateRedirectUri(uri)), uri)
    }
  })

  it("accepts https and loopback http redirect URIs", () => {
    for (const uri of [
      "https://app.example/cb",
      "https://app.example/cb?x=1",
      "http://127.0.0.1:8000/cb",
      "http://[::1]/cb",
      "http://localhost:3000/cb"
    ]) {
      assert.isTrue(Either.isRight(Application.validateRedirectUri(uri)), uri)
    }
  })

  it.effect("creates an application with the default grant types and a 256-bit base64url secret", () =>
    Effect.gen(function* () {
      const { app, appSecret } = yield* Admin.createApplication({
        name: "Shop",
        redirectUris: ["https://shop.example/cb"],
        scope: "b,a"
      })
      assert.deepStrictEqual(
        [...app.grantTypes],
        ["authorization_code", "refresh_token", "client_credentials"]
      )
      assert.deepStrictEqual([...app.scopes], ["a", "b"])
      assert.match(appSecret, /^[A-Za-z0-9_-]{43}$/)
      assert.notInclude(app.secretDigest, appSecret)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an imported secret must be at least 32 characters; key and secret come together", () =>
    Effect.gen(function* () {
      const short = yield* Effect.either(
        Admin.createApplication({
          name: "x",
          redirectUris: ["https://a.example/cb"],
          appKey: "k1",
          appSecret: "s".repeat(31)
        })
      )
      assert.isTrue(Either.isLeft(short))
      const alone = yield* Effect.either(
        Admin.createApplication({ name: "x", redirectUris: ["https://a.example/cb"], appKey: "k1" })
      )
      assert.isTrue(Either.isLeft(alone))
      const ok = yield* Admin.createApplication({
        name: "x",
        redirectUris: ["https://a.example/cb"],
        appKey: "k1",
        appSecret: "s".repeat(32)
      })
      assert.strictEqual(ok.app.appKey, "k1")
      const dup = yield* Effect.either(
        Admin.createApplication({
          name: "y",
          redirectUris: ["https://a.example/cb"],
          appKey: "k1",
          appSecret: "s".repeat(32)
        })
      )
      assert.isTrue(Either.isLeft(dup))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("generated App Keys never start with - or _ (command lines would read them as options)", () =>
    Effect.gen(function* () {
      for (let i = 0; i < 200; i++) {
        const { app } = yield* Admin.createApplication({
          name: `a${i}`,
          redirectUris: ["https://a.example/cb"]
        })
        assert.match(app.appKey, /^[A-Za-z0-9][A-Za-z0-9_-]{21}$/)
      }
    }).pipe(Effect.provide(TestLayer()))
  )

  it("refuses redirect URIs that are not printable ASCII (no Location header could carry them); accepts them percent-encoded", () => {
    const refused = [
      "http://127.0.0.1:9000/cb/\u20ac",
      "https://app.example/caf\u00e9",
      "https://\u0430pp.example/cb",
      "https://app.example/cb\u0085",
      "https://app.example/cb\u2028",
      "https://app.example/cb\u202e",
      "https://app.example/cb\u00a0",
      "https://app.example/cb/\ud83d\ude00",
      "https://app.example/c b",
      "https://app.example/cb\t",
      "https://app.example/cb\u001b[2J",
      "https://app.example/cb\u007f"
    ]
    for (const uri of refused) {
      const r = Application.validateRedirectUri(uri)
      assert.isTrue(Either.isLeft(r), JSON.stringify(uri))
      if (Either.isLeft(r))
        assert.match(r.left.description, /^redirect URI (must be printable ASCII|contains whitespace)/)
    }
    const nonAscii = Application.validateRedirectUri("http://127.0.0.1:9000/cb/\u20ac")
    assert.isTrue(Either.isLeft(nonAscii))
    if (Either.isLeft(nonAscii)) {
      assert.strictEqual(nonAscii.left._tag, "InvalidRequest")
      assert.include(nonAscii.left.description, "percent-encode")
    }
    for (const uri of ["http://127.0.0.1:9000/cb/%E2%82%AC", "https://app.example/caf%C3%A9?q=%20"]) {
      assert.isTrue(Either.isRight(Application.validateRedirectUri(uri)), uri)
    }
  })

  it.effect(
    "createApplication refuses a non-ASCII, space or control character redirect URI with invalid_request and stores nothing",
    () =>
      Effect.gen(function* () {
        for (const uri of [
          "http://127.0.0.1:9000/cb/\u20ac",
          "https://app.example/c b",
          "https://app.example/cb\u0000"
        ]) {
          const r = yield* Effect.either(
            Admin.createApplication({ name: "Euro", redirectUris: ["https://app.example/ok", uri] })
          )
          assert.isTrue(Either.isLeft(r), JSON.stringify(uri))
          assert.strictEqual(Either.isLeft(r) ? r.left._tag : "accepted", "InvalidRequest")
          if (Either.isLeft(r) && r.left._tag === "InvalidRequest")
            assert.match(r.left.description, /^redirect URI (must be printable ASCII|contains whitespace)/)
        }
        assert.strictEqual((yield* Effect.flatMap(ApplicationStore, (s) => s.list())).length, 0)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("refuses unknown grant types", () =>
    Effect.gen(function* () {
      const r = yield* Effect.either(
        Admin.createApplication({
          name: "x",
          redirectUris: ["https://a.example/cb"],
          grantTypes: ["device_code"]
        })
      )
      assert.isTrue(Either.isLeft(r))
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("deleting applications and users", () => {
  it.effect("deleting an application revokes its tokens; an unknown App Key is invalid_request", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp()
      const t = (yield* token({ grant_type: "client_credentials" }, basic)).json?.access_token as string
      yield* Admin.deleteApplication(app.appKey)
      const hash = yield* Digest.sha256(t)
      const stored = yield* Effect.flatMap(TokenStore, (s) => s.find("access", hash))
      assert.isTrue(Option.isSome(stored) && stored.value.revokedAt !== null)
      const again = yield* Effect.either(Admin.deleteApplication(app.appKey))
      assert.isTrue(Either.isLeft(again) && again.left._tag === "InvalidRequest")
      const find = yield* Effect.either(Admin.findApplication(app.appKey))
      assert.isTrue(Either.isLeft(find))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a user is deleted by username or by id, with their tokens revoked; an unknown one is invalid_request",
    () =>
      Effect.gen(function* () {
        const { basic } = yield* newApp()
        const alice = yield* newUser("alice-del")
        const bob = yield* newUser("bob-del")
        const t = (yield* token(
          { grant_type: "password", username: "alice-del", password: alice.password },
          basic
        )).json?.access_token as string
        assert.strictEqual((yield* Admin.deleteUser("alice-del")).userId, alice.user.userId)
        assert.strictEqual((yield* Admin.deleteUser(bob.user.userId)).username, "bob-del")
        const hash = yield* Digest.sha256(t)
        const stored = yield* Effect.flatMap(TokenStore, (s) => s.find("access", hash))
        assert.isTrue(Option.isSome(stored) && stored.value.revokedAt !== null)
        const gone = yield* Effect.either(Admin.deleteUser("alice-del"))
        assert.isTrue(Either.isLeft(gone) && gone.left._tag === "InvalidRequest")
      }).pipe(Effect.provide(TestLayer()))
  )
})
