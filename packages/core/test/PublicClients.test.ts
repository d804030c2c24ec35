import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as Pkce from "../src/model/Pkce.js"
import * as Authorize from "../src/oauth/Authorize.js"
import * as BasicAuth from "../src/oauth/requests/BasicAuth.js"
import * as Audit from "../src/security/Audit.js"
import * as Throttle from "../src/security/Throttle.js"
import * as Digest from "../src/services/Digest.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import * as Memory from "../src/storage/Memory.js"
import { TokenStore } from "../src/storage/TokenStore.js"
import { cb, form, issueCode, newApp, newUser, post, TestLayer, token } from "./fixtures.js"

const verifier = "v".repeat(50)
const basicRequired =
  "client authentication failed: send the App Key and App Secret with HTTP Basic (RFC 6749 §2.3.1)"
const secretInBody =
  "client authentication failed: this application authenticates with client_secret_basic: send the App Key and App Secret with HTTP Basic (RFC 6749 §2.3.1), not in the body"

const newPublicApp = (input: Partial<Admin.NewApplication> = {}) =>
  Admin.createApplication({ name: "Native App", redirectUris: [cb], scope: "read", public: true, ...input })

/** A code issued to `appKey` with a PKCE S256 challenge of `verifier`. */
const pkceCode = (appKey: string, userId: string) =>
  Effect.flatMap(Pkce.s256(verifier), (challenge) =>
    issueCode(appKey, userId, { code_challenge: challenge, code_challenge_method: "S256" })
  )

const exchange = (appKey: string, code: string, extra: Record<string, string> = {}) =>
  token({ grant_type: "authorization_code", code, redirect_uri: cb, client_id: appKey, ...extra })

const Audited = () => Layer.mergeAll(TestLayer(), Layer.provideMerge(Audit.layer, Memory.auditLayer))

describe("public clients: registration", () => {
  it.effect("a public application gets no App Secret, the public grants by default and PKCE", () =>
    Effect.gen(function* () {
      const { app, appSecret } = yield* newPublicApp()
      assert.isNull(appSecret)
      assert.strictEqual(app.secretDigest, "")
      assert.isTrue(app.public)
      assert.isTrue(app.requirePkce)
      assert.deepStrictEqual([...app.grantTypes], ["authorization_code", "refresh_token"])
      assert.deepInclude(yield* Admin.findApplication(app.appKey), app)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("refuses other grants, PKCE off, an imported secret and bad token fields, naming the field", () =>
    Effect.gen(function* () {
      const cases: Array<[Partial<Admin.NewApplication>, string]> = [
        [{ grantTypes: ["authorization_code", "client_credentials"] }, "grant_types"],
        [{ grantTypes: ["implicit"] }, "grant_types"],
        [{ grantTypes: ["password"] }, "grant_types"],
        [{ requirePkce: false }, "require_pkce"],
        [{ appKey: "imported-key", appSecret: "s".repeat(40) }, "app_secret"],
        [{ accessTokenFormat: "paseto" }, "access_token_format"],
        [{ accessTokenAudience: "" }, "access_token_audience"],
        [{ accessTokenAudience: "not a uri" }, "access_token_audience"],
        [{ accessTokenAudience: "https://api.example/#frag" }, "access_token_audience"]
      ]
      for (const [input, field] of cases) {
        const e = yield* Effect.flip(newPublicApp(input))
        assert.strictEqual(e._tag, "InvalidField", JSON.stringify(input))
        if (e._tag === "InvalidField") assert.strictEqual(e.field, field, JSON.stringify(input))
      }
      assert.lengthOf(yield* Admin.listApplications, 0, "a refused registration stores nothing")
      const e = yield* Effect.flip(newPublicApp({ grantTypes: ["client_credentials"] }))
      assert.strictEqual(
        e._tag === "InvalidField" ? e.description : "",
        "a public application may use only the authorization_code and refresh_token grants"
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an imported App Key alone is fine for a public application", () =>
    Effect.gen(function* () {
      const { app, appSecret } = yield* newPublicApp({ appKey: "native-app-1" })
      assert.strictEqual(app.appKey, "native-app-1")
      assert.isNull(appSecret)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "access token format and audience: opaque and absent by default, set and changed when given",
    () =>
      Effect.gen(function* () {
        const { app: plain } = yield* newApp()
        assert.isUndefined(plain.accessTokenFormat)
        assert.isUndefined(plain.accessTokenAudience)
        assert.isUndefined(plain.public)
        const { app } = yield* newApp({
          accessTokenFormat: "jwt",
          accessTokenAudience: "https://api.example/"
        })
        assert.strictEqual(app.accessTokenFormat, "jwt")
        assert.strictEqual(app.accessTokenAudience, "https://api.example/")
        const { app: changed } = yield* Admin.updateApplication(app.appKey, {
          accessTokenFormat: "opaque",
          accessTokenAudience: null
        })
        assert.strictEqual(changed.accessTokenFormat, "opaque")
        assert.isNull(changed.accessTokenAudience)
        const e = yield* Effect.flip(Admin.updateApplication(app.appKey, { accessTokenAudience: "urn" }))
        assert.strictEqual(e._tag === "InvalidField" ? e.field : e._tag, "access_token_audience")
        assert.strictEqual(
          (yield* Admin.updateApplication(app.appKey, { accessTokenAudience: "urn:api:x" })).app
            .accessTokenAudience,
          "urn:api:x"
        )
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "switching: to public empties the secret in one write; to confidential answers a new secret once",
    () =>
      Effect.gen(function* () {
        const { app, basic } = yield* newApp({ grantTypes: ["authorization_code", "refresh_token"] })
        const refused = yield* Effect.flip(
          Admin.updateApplication(app.appKey, { public: true, grantTypes: ["client_credentials"] })
        )
        assert.strictEqual(refused._tag === "InvalidField" ? refused.field : refused._tag, "grant_types")
        const toPublic = yield* Admin.updateApplication(app.appKey, { public: true }).pipe(
          Effect.provideService(Audit.RequestInfo, { requestId: null, address: null, actor: "cli" })
        )
        assert.isNull(toPublic.appSecret)
        assert.isTrue(toPublic.app.public)
        assert.strictEqual(toPublic.app.secretDigest, "")
        assert.isTrue(toPublic.app.requirePkce)
        const oldBasic = yield* token({ grant_type: "refresh_token", refresh_token: "x" }, basic)
        assert.strictEqual(oldBasic.status, 401, "the old secret stops working")
        const events = yield* Effect.flatMap(AuditStore, (s) =>
          s.query({ limit: 10, type: "application_updated" })
        )
        assert.strictEqual(events[0]?.detail, "changed public")
        const toConfidential = yield* Admin.updateApplication(app.appKey, { public: false })
        assert.isString(toConfidential.appSecret)
        assert.isFalse(toConfidential.app.public)
        assert.notStrictEqual(toConfidential.app.secretDigest, "")
        const again = yield* Admin.updateApplication(app.appKey, { public: false })
        assert.isNull(again.appSecret, "already confidential: nothing changes, no new secret")
        const fresh = BasicAuth.encode({ appKey: app.appKey, appSecret: toConfidential.appSecret as string })
        const r = yield* token({ grant_type: "refresh_token", refresh_token: "x" }, fresh)
        assert.strictEqual(r.json?.error, "invalid_grant", "the new secret authenticates")
      }).pipe(Effect.provide(Audited()))
  )
})

describe("public clients: the token endpoint", () => {
  it.effect("client_id alone authenticates a public application; the code needs its S256 verifier", () =>
    Effect.gen(function* () {
      const { app } = yield* newPublicApp()
      const { user } = yield* newUser()
      const code = yield* pkceCode(app.appKey, user.userId)
      const noVerifier = yield* exchange(app.appKey, code)
      assert.strictEqual(noVerifier.json?.error, "invalid_grant")
      const code2 = yield* pkceCode(app.appKey, user.userId)
      const ok = yield* exchange(app.appKey, code2, { code_verifier: verifier })
      assert.strictEqual(ok.status, 200, JSON.stringify(ok.json))
      assert.isString(ok.json?.access_token)
      assert.isString(ok.json?.refresh_token)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a public application never authenticates with Basic or a client_secret", () =>
    Effect.gen(function* () {
      const { app } = yield* newPublicApp()
      const body = { grant_type: "refresh_token", refresh_token: "x", client_id: app.appKey }
      const withSecret = yield* token({ ...body, client_secret: "anything" })
      assert.strictEqual(withSecret.status, 401)
      assert.strictEqual(withSecret.json?.error, "invalid_client")
      assert.strictEqual(
        withSecret.json?.error_description,
        "client authentication failed: a public application has no App Secret; send only client_id"
      )
      for (const secret of ["", "anything-at-all"]) {
        const basic = `Basic ${btoa(`${app.appKey}:${secret}`)}`
        const r = yield* token({ grant_type: "refresh_token", refresh_token: "x" }, basic)
        assert.strictEqual(r.status, 401)
        assert.strictEqual(r.json?.error_description, "client authentication failed")
      }
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "no header: a confidential App Key and an unknown one get the same answer, naming HTTP Basic",
    () =>
      Effect.gen(function* () {
        const { app } = yield* newApp()
        const answers = new Set<string>()
        for (const params of [
          { grant_type: "client_credentials" },
          { grant_type: "client_credentials", client_id: app.appKey },
          { grant_type: "client_credentials", client_id: "no-such-app" },
          { grant_type: "client_credentials", client_id: "" }
        ]) {
          const r = yield* token(params)
          assert.strictEqual(r.status, 401)
          assert.strictEqual(r.headers["www-authenticate"], 'Basic realm="latchkey"')
          answers.add(r.body)
        }
        assert.deepStrictEqual(
          [...answers],
          [JSON.stringify({ error: "invalid_client", error_description: basicRequired })]
        )
        for (const client_id of [app.appKey, "no-such-app"]) {
          const r = yield* token({
            grant_type: "client_credentials",
            client_id,
            client_secret: "s".repeat(43)
          })
          assert.strictEqual(r.status, 401)
          assert.strictEqual(r.json?.error_description, secretInBody)
        }
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("client_credentials and password are unauthorized_client for a public application", () =>
    Effect.gen(function* () {
      const { app } = yield* newPublicApp()
      for (const params of [
        { grant_type: "client_credentials" },
        { grant_type: "password", username: "u", password: "p" }
      ]) {
        const r = yield* token({ ...params, client_id: app.appKey })
        assert.strictEqual(r.status, 400)
        assert.strictEqual(r.json?.error, "unauthorized_client", params.grant_type)
      }
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("refresh rotates; reusing a rotated refresh token revokes the family", () =>
    Effect.gen(function* () {
      const { app } = yield* newPublicApp()
      const { user } = yield* newUser()
      const first = yield* exchange(app.appKey, yield* pkceCode(app.appKey, user.userId), {
        code_verifier: verifier
      })
      const rt1 = first.json?.refresh_token as string
      const refresh = (refresh_token: string) =>
        token({ grant_type: "refresh_token", refresh_token, client_id: app.appKey })
      const second = yield* refresh(rt1)
      assert.strictEqual(second.status, 200)
      const rt2 = second.json?.refresh_token as string
      assert.notStrictEqual(rt2, rt1)
      const reuse = yield* refresh(rt1)
      assert.strictEqual(reuse.json?.error, "invalid_grant")
      const afterReuse = yield* refresh(rt2)
      assert.strictEqual(afterReuse.json?.error, "invalid_grant", "the family is revoked")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a refresh token obtained with the App Secret stops working once the application is public: its family ends in the switch, audited",
    () =>
      Effect.gen(function* () {
        const { app, basic } = yield* newApp({ grantTypes: ["password", "refresh_token"] })
        const { user, password } = yield* newUser()
        const granted = yield* token({ grant_type: "password", username: user.username, password }, basic)
        assert.strictEqual(granted.status, 200)
        const refreshToken = granted.json?.refresh_token as string
        yield* Admin.updateApplication(app.appKey, {
          public: true,
          grantTypes: ["authorization_code", "refresh_token"]
        })
        const r = yield* token({
          grant_type: "refresh_token",
          refresh_token: refreshToken,
          client_id: app.appKey
        })
        assert.strictEqual(r.json?.error, "invalid_grant")
        const accessHash = yield* Digest.sha256(granted.json?.access_token as string)
        const access = yield* Effect.flatMap(TokenStore, (s) => s.find("access", accessHash))
        assert.isNotNull(Option.getOrThrow(access).revokedAt, "the access token of the family ends too")
        const events = yield* Effect.flatMap(AuditStore, (s) =>
          s.query({ limit: 10, type: "family_revoked" })
        )
        assert.strictEqual(events[0]?.detail, "every refresh token family: the application turned public")
        assert.strictEqual(events[0]?.appKey, app.appKey)
      }).pipe(Effect.provide(Audited()))
  )

  it.effect("a code issued before the application became public, without S256, is not redeemed", () =>
    Effect.gen(function* () {
      const { app } = yield* newApp({ grantTypes: ["authorization_code", "refresh_token"] })
      const { user } = yield* newUser()
      const code = yield* issueCode(app.appKey, user.userId)
      yield* Admin.updateApplication(app.appKey, { public: true })
      const r = yield* exchange(app.appKey, code)
      assert.strictEqual(r.json?.error, "invalid_grant")
      assert.strictEqual(
        r.json?.error_description,
        "a public application redeems only codes issued with a PKCE S256 challenge"
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("requests without a header are no secret checks: they never throttle the address", () =>
    Effect.gen(function* () {
      const { app } = yield* newPublicApp()
      const { app: confidential, basic } = yield* newApp()
      for (let i = 0; i < 3; i++) {
        yield* token({ grant_type: "refresh_token", refresh_token: `bad-${i}`, client_id: app.appKey })
        yield* token({ grant_type: "client_credentials", client_id: confidential.appKey })
      }
      const after = yield* token({ grant_type: "client_credentials" }, basic)
      assert.strictEqual(after.status, 200, "the address is not locked")
      // whereas wrong secrets from the address are failures, and lock it
      const wrong = BasicAuth.encode({ appKey: confidential.appKey, appSecret: "w".repeat(43) })
      for (let i = 0; i < 3; i++) yield* token({ grant_type: "client_credentials" }, wrong)
      const locked = yield* token({ grant_type: "client_credentials" }, basic)
      assert.strictEqual(locked.status, 429)
    }).pipe(
      Effect.provide(TestLayer({}, { ...Throttle.defaultPolicy, freeFailures: 1, addressFreeFailures: 1 }))
    )
  )
})

describe("public clients: authorize, revocation and introspection", () => {
  it.effect(
    "authorize refuses a public application's code request without S256, even where plain is allowed",
    () =>
      Effect.gen(function* () {
        const { app } = yield* newPublicApp()
        const base = { response_type: "code", client_id: app.appKey, redirect_uri: cb, state: "s" }
        const cases: Array<[Record<string, string>, string]> = [
          [{}, "a public application must use PKCE (code_challenge with S256)"],
          [{ code_challenge: "a".repeat(43) }, "code_challenge_method must be S256"],
          [
            { code_challenge: "a".repeat(43), code_challenge_method: "plain" },
            "code_challenge_method must be S256"
          ]
        ]
        for (const [extra, description] of cases) {
          const e = yield* Effect.flip(Authorize.validate(form({ ...base, ...extra })))
          assert.strictEqual(e._tag, "ErrorRedirect")
          if (e._tag === "ErrorRedirect") {
            assert.strictEqual(e.error, "invalid_request")
            assert.strictEqual(e.description, description)
          }
        }
        const token = yield* Effect.flip(Authorize.validate(form({ ...base, response_type: "token" })))
        assert.strictEqual(token._tag === "ErrorRedirect" ? token.error : token._tag, "unauthorized_client")
        const ok = yield* Effect.either(
          Authorize.validate(
            form({ ...base, code_challenge: yield* Pkce.s256(verifier), code_challenge_method: "S256" })
          )
        )
        assert.isTrue(Either.isRight(ok))
      }).pipe(Effect.provide(TestLayer({ allowPlainPkce: true })))
  )

  it.effect("a public application revokes its own tokens with client_id; introspection refuses it", () =>
    Effect.gen(function* () {
      const { app } = yield* newPublicApp()
      const { user } = yield* newUser()
      const issued = yield* exchange(app.appKey, yield* pkceCode(app.appKey, user.userId), {
        code_verifier: verifier
      })
      const rt = issued.json?.refresh_token as string
      const introspected = yield* post("/oauth2/oauth2/introspect", { token: rt, client_id: app.appKey })
      assert.strictEqual(introspected.status, 401)
      assert.strictEqual(introspected.json?.error, "invalid_client")
      assert.strictEqual(
        introspected.json?.error_description,
        "a public application may not introspect tokens: only confidential applications, with HTTP Basic"
      )
      const revoked = yield* post("/oauth2/oauth2/revoke", { token: rt, client_id: app.appKey })
      assert.strictEqual(revoked.status, 200)
      const refreshed = yield* token({
        grant_type: "refresh_token",
        refresh_token: rt,
        client_id: app.appKey
      })
      assert.strictEqual(refreshed.json?.error, "invalid_grant", "the revoked refresh token no longer works")
    }).pipe(Effect.provide(TestLayer()))
  )
})
