/**
 * Real clients against a running server, not only our own requests: openid-client runs
 * discovery, the authorization code flow with PKCE in headless Chromium, ID token validation,
 * userinfo and refresh, for a confidential client (HTTP Basic, and openid-client's default
 * `client_secret_post` for an application registered for it), for a public client (no secret)
 * and for a native app whose loopback redirect URI was registered without a port; a resource
 * server using jose's remote JWKS verifies JWT access tokens, `iat` with no leeway, across a key
 * rotation made on the admin API.
 */
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as jose from "jose"
import * as client from "openid-client"
import type { Browser } from "playwright-core"
import { type Callback, signInAndAllowIn, startCallback } from "./browserFlows.js"
import { haveChromium, launchChromium } from "./chromium.js"
import {
  basic,
  createApp,
  createUser,
  freePort,
  type ServerProcess,
  spawnServer,
  tempDir
} from "./helpers.js"
import { adminPort, adminToken } from "./prometheus.js"

const tmp = tempDir()
const db = join(tmp.dir, "openid.sqlite")
const user = { username: "oidc-user", password: "oidc password 123" }
const insecure = { execute: [client.allowInsecureRequests] }

let server: ServerProcess
let admin: string
let callback: Callback
let browser: Browser
let confidential: { app_key: string; app_secret: string }
let publicApp: { app_key: string }
let jwtApp: { app_key: string; app_secret: string }
let postApp: { app_key: string; app_secret: string }
let nativeApp: { app_key: string }

beforeAll(async () => {
  callback = await startCallback()
  const redirect = `${callback.base}/cb`
  const registration = ["--redirect-uri", redirect, "--scope", "openid,profile,email"]
  confidential = await createApp(db, [
    "--name",
    "OIDC Web",
    ...registration,
    "--grant-types",
    "authorization_code,refresh_token"
  ])
  publicApp = await createApp(db, [
    "--name",
    "OIDC SPA",
    ...registration,
    "--grant-types",
    "authorization_code,refresh_token",
    "--public"
  ])
  jwtApp = await createApp(db, [
    "--name",
    "JWT API client",
    "--redirect-uri",
    redirect,
    "--scope",
    "notes.read",
    "--grant-types",
    "client_credentials",
    "--access-token-format",
    "jwt"
  ])
  postApp = await createApp(db, [
    "--name",
    "OIDC Web (client_secret_post)",
    ...registration,
    "--grant-types",
    "authorization_code,refresh_token",
    "--token-endpoint-auth-method",
    "client_secret_post",
    "--scope-delimiter",
    "space"
  ])
  // RFC 8252 §7.3: registered without a port, the callback's ephemeral port is accepted
  nativeApp = await createApp(db, [
    "--name",
    "OIDC native app",
    "--redirect-uri",
    "http://127.0.0.1/cb",
    "--scope",
    "openid,profile",
    "--grant-types",
    "authorization_code,refresh_token",
    "--public"
  ])
  await createUser(db, user.username, user.password)
  const port = await freePort()
  server = await spawnServer({
    LATCHKEY_DB: db,
    PORT: String(port),
    LATCHKEY_ISSUER: `http://127.0.0.1:${port}`,
    LATCHKEY_ADMIN_PORT: "0",
    LATCHKEY_ADMIN_TOKEN: adminToken
  })
  admin = `http://127.0.0.1:${await adminPort(server)}`
  if (haveChromium) browser = await launchChromium()
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await callback?.close()
  tmp.cleanup()
})

/** Sign in and allow in Chromium from `url`; the URL the browser lands on at the callback. */
const signInInChromium = async (url: URL): Promise<URL> => {
  const context = await browser.newContext()
  try {
    return await signInAndAllowIn(await context.newPage(), url.href, user, `${callback.base}/cb`)
  } finally {
    await context.close()
  }
}

/** Discovery, code flow with PKCE in Chromium, ID token, userinfo and refresh with `config`. */
const codeFlow = async (config: client.Configuration) => {
  const verifier = client.randomPKCECodeVerifier()
  const nonce = client.randomNonce()
  const state = client.randomState()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: `${callback.base}/cb`,
    scope: "openid profile",
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    nonce,
    state
  })
  const landed = await signInInChromium(url)
  const tokens = await client.authorizationCodeGrant(config, landed, {
    pkceCodeVerifier: verifier,
    expectedNonce: nonce,
    expectedState: state,
    idTokenExpected: true
  })
  const claims = tokens.claims()
  assert.isDefined(claims)
  const info = await client.fetchUserInfo(config, tokens.access_token, claims?.sub as string)
  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token as string)
  return { tokens, claims: claims as client.IDToken, info, refreshed }
}

describe.skipIf(!haveChromium)("openid-client against a running server", () => {
  it("a confidential client: discovery, code with PKCE in Chromium, a valid ID token with its nonce, userinfo, refresh", async () => {
    const config = await client.discovery(
      new URL(server.base),
      confidential.app_key,
      undefined,
      client.ClientSecretBasic(confidential.app_secret),
      insecure
    )
    assert.strictEqual(config.serverMetadata().issuer, server.base)
    const { tokens, claims, info, refreshed } = await codeFlow(config)
    assert.strictEqual(claims.aud, confidential.app_key)
    assert.strictEqual(claims.sub, (tokens as unknown as { open_id: string }).open_id)
    assert.isNumber(claims.auth_time)
    assert.deepStrictEqual(info as unknown as Record<string, unknown>, {
      sub: claims.sub,
      preferred_username: user.username
    })
    assert.notStrictEqual(refreshed.access_token, tokens.access_token)
    assert.strictEqual(refreshed.claims()?.sub, claims.sub)
  })

  it("a password sign-in: openid-client reads acr urn:latchkey:acr:password and amr pwd; the refreshed ID token and introspection keep the sign-in's acr and auth_time", async () => {
    const config = await client.discovery(
      new URL(server.base),
      confidential.app_key,
      undefined,
      client.ClientSecretBasic(confidential.app_secret),
      insecure
    )
    assert.deepStrictEqual(config.serverMetadata().acr_values_supported, [
      "urn:latchkey:acr:password",
      "urn:latchkey:acr:mfa",
      "phr"
    ])
    assert.includeMembers(config.serverMetadata().claims_supported ?? [], ["acr", "amr", "auth_time"])
    const { tokens, claims, refreshed } = await codeFlow(config)
    assert.deepStrictEqual([claims.acr, claims.amr], ["urn:latchkey:acr:password", ["pwd"]])
    const again = refreshed.claims()
    assert.deepStrictEqual(
      [again?.acr, again?.amr, again?.auth_time],
      [claims.acr, claims.amr, claims.auth_time]
    )
    for (const token of [tokens.access_token, refreshed.access_token]) {
      const introspected = await client.tokenIntrospection(config, token)
      assert.deepStrictEqual(
        [introspected.active, introspected.acr, introspected.auth_time],
        [true, claims.acr, claims.auth_time]
      )
    }
  })

  it("openid-client's default client authentication (client_secret_post) for an application registered for it: the same flow, scopes joined with spaces", async () => {
    // A client secret given as the metadata argument makes openid-client send it in the body
    const config = await client.discovery(
      new URL(server.base),
      postApp.app_key,
      postApp.app_secret,
      undefined,
      insecure
    )
    assert.include(config.serverMetadata().token_endpoint_auth_methods_supported ?? [], "client_secret_post")
    const { tokens, claims, info, refreshed } = await codeFlow(config)
    assert.strictEqual(claims.aud, postApp.app_key)
    assert.strictEqual(tokens.scope, "openid profile")
    assert.strictEqual(info.sub, claims.sub)
    assert.strictEqual(refreshed.scope, "openid profile")
    assert.notStrictEqual(refreshed.access_token, tokens.access_token)
  })

  it("a native app: its loopback redirect URI registered without a port takes the callback's ephemeral port", async () => {
    assert.notStrictEqual(new URL(callback.base).port, "")
    const config = await client.discovery(
      new URL(server.base),
      nativeApp.app_key,
      undefined,
      client.None(),
      insecure
    )
    const { claims, info, refreshed } = await codeFlow(config)
    assert.strictEqual(claims.aud, nativeApp.app_key)
    assert.strictEqual(info.sub, claims.sub)
    assert.isString(refreshed.refresh_token)
  })

  it("a public client: the same flow with no secret, and the server refuses it a secret-less client_credentials", async () => {
    const config = await client.discovery(
      new URL(server.base),
      publicApp.app_key,
      undefined,
      client.None(),
      insecure
    )
    const { claims, info, refreshed } = await codeFlow(config)
    assert.strictEqual(claims.aud, publicApp.app_key)
    assert.strictEqual(info.sub, claims.sub)
    assert.isString(refreshed.refresh_token)
    const res = await fetch(`${server.base}/oauth2/oauth2/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "client_credentials", client_id: publicApp.app_key }).toString()
    })
    assert.strictEqual(res.status, 400)
    assert.strictEqual(((await res.json()) as { error: string }).error, "unauthorized_client")
  })
})

describe("a resource server with jose's remote JWKS", () => {
  const clientCredentials = async (): Promise<string> => {
    const res = await fetch(`${server.base}/oauth2/oauth2/token`, {
      method: "POST",
      headers: {
        authorization: basic(jwtApp.app_key, jwtApp.app_secret),
        "content-type": "application/x-www-form-urlencoded"
      },
      body: "grant_type=client_credentials"
    })
    assert.strictEqual(res.status, 200)
    return ((await res.json()) as { access_token: string }).access_token
  }

  it("verifies JWT access tokens signed before and after a key rotation", async () => {
    const metadata = (await (await fetch(`${server.base}/.well-known/openid-configuration`)).json()) as {
      jwks_uri: string
    }
    // Refetch at once on an unknown kid (jose waits 30 s between fetches by default)
    const jwks = jose.createRemoteJWKSet(new URL(metadata.jwks_uri), { cooldownDuration: 0 })
    const expected = { issuer: server.base, audience: server.base, typ: "at+jwt" }
    const before = await clientCredentials()
    // RFC 7519 §4.1.6: iat is never after the issue instant, so a check with no leeway at the
    // instant the token arrives passes (PyJWT's default, jose's with maxTokenAge)
    const first = await jose.jwtVerify(before, jwks, { ...expected, clockTolerance: 0, maxTokenAge: 60 })
    assert.strictEqual(first.payload.client_id, jwtApp.app_key)
    assert.strictEqual(first.payload.scope, "notes.read")
    const rotated = await fetch(`${admin}/admin/v1/keys/rotate`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}` }
    })
    assert.strictEqual(rotated.status, 200)
    const after = await clientCredentials()
    const second = await jose.jwtVerify(after, jwks, expected)
    assert.notStrictEqual(second.protectedHeader.kid, first.protectedHeader.kid)
    // The token signed with the retired key still verifies
    assert.strictEqual((await jose.jwtVerify(before, jwks, expected)).payload.jti, first.payload.jti)
  })
})
