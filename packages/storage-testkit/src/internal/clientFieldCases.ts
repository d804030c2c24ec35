/**
 * The storage contract for what OpenID Connect, JWT access tokens and public clients add to the
 * records: an application's `public`, `accessTokenFormat`, `accessTokenAudience`, `webOrigins`,
 * `tokenEndpointAuthMethod` and `scopeDelimiter`, the secret
 * digest a change of `public` replaces, and a code's `nonce` and `authTime`. A record written
 * without them reads them back as the defaults (false, "opaque", null, [], "client_secret_basic",
 * "comma", null, null) in every store.
 */
import { assert, type Vitest } from "@effect/vitest"
import { Application, ApplicationStore, CodeStore, type Stores } from "@latchkey/core"
import { Effect } from "effect"
import * as F from "../Fixtures.js"
import { some } from "./support.js"

const T = F.baseTime

const find = (appKey: string) =>
  Effect.flatMap(ApplicationStore.ApplicationStore, (s) => s.find(appKey)).pipe(
    Effect.map((o) => some(o, "application"))
  )

/** The new fields of applications: stored, defaulted, listed. */
const applicationFields = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "applications: public, the access token format and audience round-trip through insert, find and list",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const app = F.application({
          secretDigest: "",
          requirePkce: true,
          public: true,
          accessTokenFormat: "jwt",
          accessTokenAudience: "https://api.example"
        })
        yield* apps.insert(app)
        assert.deepStrictEqual(yield* find(app.appKey), app)
        assert.deepStrictEqual(
          (yield* apps.list()).find((a) => a.appKey === app.appKey),
          app
        )
      })
  )

  it.effect(
    "applications: one stored without public, format or audience reads back confidential, opaque, audience null",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const {
          public: _p,
          accessTokenFormat: _f,
          accessTokenAudience: _a,
          webOrigins: _o,
          tokenEndpointAuthMethod: _m,
          scopeDelimiter: _d,
          postLogoutRedirectUris: _l,
          backchannelLogoutUri: _b,
          backchannelLogoutSessionRequired: _s,
          requireMfa: _r,
          ...bare
        } = F.application()
        yield* apps.insert(bare)
        const found = yield* find(bare.appKey)
        assert.deepStrictEqual(found, {
          ...bare,
          public: false,
          accessTokenFormat: "opaque",
          accessTokenAudience: null,
          webOrigins: [],
          tokenEndpointAuthMethod: "client_secret_basic",
          scopeDelimiter: "comma",
          postLogoutRedirectUris: [],
          backchannelLogoutUri: null,
          backchannelLogoutSessionRequired: false,
          requireMfa: false
        })
        assert.isFalse(Application.isPublic(found))
        assert.strictEqual(Application.accessTokenFormat(found), "opaque")
        assert.strictEqual(
          Application.accessTokenAudience(found, "https://issuer.example"),
          "https://issuer.example"
        )
        assert.deepStrictEqual(
          (yield* apps.list()).find((a) => a.appKey === bare.appKey),
          found
        )
      })
  )
}

/** The per-application options of browser apps, client authentication and scope joining. */
const applicationOptions = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "applications: web origins, the token endpoint authentication method, the scope delimiter and require_mfa round-trip through insert, update and find",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const app = F.application({
          webOrigins: ["https://spa.example", "http://127.0.0.1:5173"],
          tokenEndpointAuthMethod: "client_secret_post",
          scopeDelimiter: "space",
          requireMfa: true
        })
        yield* apps.insert(app)
        assert.deepStrictEqual(yield* find(app.appKey), app)
        const changed = {
          ...app,
          webOrigins: [],
          tokenEndpointAuthMethod: "client_secret_basic" as const,
          scopeDelimiter: "comma" as const,
          requireMfa: false
        }
        assert.deepStrictEqual(
          some(
            yield* apps.update(
              app.appKey,
              {
                webOrigins: [],
                tokenEndpointAuthMethod: "client_secret_basic",
                scopeDelimiter: "comma",
                requireMfa: false
              },
              T
            ),
            "updated"
          ),
          changed
        )
        // Left out, they stay.
        assert.deepStrictEqual(some(yield* apps.update(app.appKey, { name: "Renamed" }, T), "updated"), {
          ...changed,
          name: "Renamed"
        })
        assert.deepStrictEqual(yield* find(app.appKey), { ...changed, name: "Renamed" })
      })
  )
}

/** Updating the new fields, and the secret digest that changes with `public`. */
const applicationUpdates = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "applications: update changes public, the format and the audience (to null too), and keeps the rest",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const app = F.application()
        yield* apps.insert(app)
        const jwt = { ...app, accessTokenFormat: "jwt" as const, accessTokenAudience: "https://api.example" }
        assert.deepStrictEqual(
          some(
            yield* apps.update(
              app.appKey,
              {
                accessTokenFormat: "jwt",
                accessTokenAudience: "https://api.example"
              },
              T
            ),
            "updated"
          ),
          jwt
        )
        assert.deepStrictEqual(yield* find(app.appKey), jwt)
        // Left out, the audience stays; given as null, it goes.
        assert.deepStrictEqual(some(yield* apps.update(app.appKey, { name: "Renamed" }, T), "updated"), {
          ...jwt,
          name: "Renamed"
        })
        assert.deepStrictEqual(
          some(
            yield* apps.update(app.appKey, { accessTokenAudience: null, accessTokenFormat: "opaque" }, T),
            "updated"
          ),
          { ...app, name: "Renamed" }
        )
        assert.deepStrictEqual(some(yield* apps.update(app.appKey, { public: true }, T), "updated"), {
          ...app,
          name: "Renamed",
          public: true
        })
        assert.deepStrictEqual(yield* find(app.appKey), { ...app, name: "Renamed", public: true })
      })
  )
}

/** A secret digest given to `update`: it replaces the secret and drops the previous one. */
const secretDigestUpdates = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "applications: update with a secret digest replaces it and drops the previous secret in the same write; without one the previous secret stays",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const app = F.application()
        yield* apps.insert(app)
        const d1 = F.hash()
        yield* apps.updateSecret(app.appKey, d1, T + 3600)
        yield* apps.markPreviousSecretUsed(app.appKey, app.secretDigest, T + 5)
        const graced = {
          ...app,
          secretDigest: d1,
          previousSecretDigest: app.secretDigest,
          previousSecretExpiresAt: T + 3600,
          previousSecretUsedAt: T + 5
        }
        assert.deepStrictEqual(some(yield* apps.update(app.appKey, { requirePkce: true }, T), "updated"), {
          ...graced,
          requirePkce: true
        })
        const turnedPublic = {
          ...app,
          requirePkce: true,
          secretDigest: "",
          public: true,
          previousSecretDigest: null,
          previousSecretExpiresAt: null,
          previousSecretUsedAt: null
        }
        assert.deepStrictEqual(
          some(yield* apps.update(app.appKey, { public: true, secretDigest: "" }, T), "updated"),
          turnedPublic
        )
        assert.deepStrictEqual(yield* find(app.appKey), turnedPublic)
        const d2 = F.hash()
        assert.deepStrictEqual(
          some(yield* apps.update(app.appKey, { public: false, secretDigest: d2 }, T), "updated"),
          { ...turnedPublic, public: false, secretDigest: d2 }
        )
      })
  )
}

/** The OpenID Connect fields of codes. */
const codeFields = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "codes: nonce and authTime round-trip and survive redemption; a code without them reads them as null",
    () =>
      Effect.gen(function* () {
        const codes = yield* CodeStore.CodeStore
        const c = F.code({ nonce: `n-${F.hash()}`, authTime: T - 30 })
        yield* F.insertCode(c)
        assert.deepStrictEqual(some(yield* codes.find(c.codeHash), "code"), c)
        yield* codes.redeem(c.codeHash, T + 1, [])
        assert.deepStrictEqual(some(yield* codes.find(c.codeHash), "code"), { ...c, usedAt: T + 1 })
        const { nonce: _n, authTime: _t, sid: _s, ...bare } = F.code()
        yield* F.insertCode(bare)
        assert.deepStrictEqual(some(yield* codes.find(bare.codeHash), "code"), {
          ...bare,
          nonce: null,
          authTime: null,
          sid: null
        })
      })
  )
}

/** Register the cases of the OpenID Connect, JWT access token and public client fields on `it`. */
export const clientFieldCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  applicationFields(it)
  applicationOptions(it)
  applicationUpdates(it)
  secretDigestUpdates(it)
  codeFields(it)
}
