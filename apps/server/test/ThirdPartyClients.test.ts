import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as oauth from "oauth4webapi"
import { ClientCredentials, ResourceOwnerPassword } from "simple-oauth2"
import {
  createApp,
  createUser,
  freePort,
  type ServerProcess,
  signInAndAllow,
  spawnServer,
  tempDir
} from "./helpers.js"

const tmp = tempDir()
const db = join(tmp.dir, "e2e.sqlite")
const redirectUri = "http://127.0.0.1:9/callback"
let server: ServerProcess
let issuer: URL
let app: { app_key: string; app_secret: string }
const user = { username: "e2e-user", password: "e2e password 123" }

beforeAll(async () => {
  const port = await freePort()
  app = await createApp(db, [
    "--name",
    "Third Party",
    "--redirect-uri",
    redirectUri,
    "--scope",
    "profile,email",
    "--grant-types",
    "authorization_code,refresh_token,client_credentials,password"
  ])
  await createUser(db, user.username, user.password)
  server = await spawnServer({
    LATCHKEY_DB: db,
    PORT: String(port),
    LATCHKEY_ISSUER: `http://127.0.0.1:${port}`
  })
  issuer = new URL(server.base)
}, 60_000)

afterAll(async () => {
  await server.stop()
  tmp.cleanup()
})

describe("oauth4webapi", () => {
  const options = { [oauth.allowInsecureRequests]: true }
  let as: oauth.AuthorizationServer
  let client: oauth.Client
  let clientAuth: oauth.ClientAuth

  beforeAll(async () => {
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { ...options, algorithm: "oauth2" })
    )
    client = { client_id: app.app_key }
    clientAuth = oauth.ClientSecretBasic(app.app_secret)
  })

  it("discovers the metadata", () => {
    assert.strictEqual(as.issuer, server.base)
    assert.strictEqual(as.token_endpoint, `${server.base}/oauth2/oauth2/token`)
    assert.isTrue(as.authorization_response_iss_parameter_supported)
  })

  it("gets a client_credentials token", async () => {
    const res = await oauth.clientCredentialsGrantRequest(as, client, clientAuth, {}, options)
    const tokens = await oauth.processClientCredentialsResponse(as, client, res)
    assert.strictEqual(tokens.token_type, "bearer")
    assert.strictEqual(tokens.expires_in, 3600)
    assert.strictEqual(tokens.scope, "email,profile")
  })

  it("runs the authorization code flow with PKCE, then refresh, introspection and revocation", async () => {
    const verifier = oauth.generateRandomCodeVerifier()
    const challenge = await oauth.calculatePKCECodeChallenge(verifier)
    const state = oauth.generateRandomState()
    const url = new URL(as.authorization_endpoint as string)
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: redirectUri,
      scope: "profile",
      state,
      code_challenge: challenge,
      code_challenge_method: "S256"
    }).toString()
    const callback = await signInAndAllow(server.base, url.href, user)
    const params = oauth.validateAuthResponse(as, client, new URL(callback), state)
    const codeRes = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth,
      params,
      redirectUri,
      verifier,
      options
    )
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, codeRes)
    assert.strictEqual(tokens.scope, "profile")
    assert.isString(tokens.refresh_token)

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token as string, options)
    )
    assert.notStrictEqual(refreshed.refresh_token, tokens.refresh_token)

    const active = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, clientAuth, refreshed.access_token, options)
    )
    assert.isTrue(active.active)
    assert.strictEqual(active.client_id, app.app_key)
    assert.strictEqual(active.scope, "profile")

    const me = await fetch(`${server.base}/api/me`, {
      headers: { authorization: `Bearer ${refreshed.access_token}` }
    })
    assert.strictEqual(me.status, 200)

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, clientAuth, refreshed.refresh_token as string, options)
    )
    const inactive = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, clientAuth, refreshed.access_token, options)
    )
    assert.isFalse(inactive.active)
  })

  it("sees a wrong PKCE verifier refused with invalid_grant", async () => {
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const url = new URL(as.authorization_endpoint as string)
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: redirectUri,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256"
    }).toString()
    const callback = await signInAndAllow(server.base, url.href, user)
    const params = oauth.validateAuthResponse(as, client, new URL(callback), state)
    const res = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth,
      params,
      redirectUri,
      oauth.generateRandomCodeVerifier(),
      options
    )
    try {
      await oauth.processAuthorizationCodeResponse(as, client, res)
      assert.fail("expected invalid_grant")
    } catch (e) {
      assert.instanceOf(e, oauth.ResponseBodyError)
      assert.strictEqual((e as oauth.ResponseBodyError).error, "invalid_grant")
    }
  })
})

describe("simple-oauth2", () => {
  const config = () => ({
    client: { id: app.app_key, secret: app.app_secret },
    auth: { tokenHost: server.base, tokenPath: "/oauth2/oauth2/token" },
    options: { authorizationMethod: "header" as const }
  })

  it("gets a client_credentials token", async () => {
    const token = await new ClientCredentials(config()).getToken({})
    assert.strictEqual(token.token.token_type, "Bearer")
    assert.strictEqual(token.token.scope, "email,profile")
    assert.isFalse(token.expired())
  })

  it("gets a password token and refreshes it", async () => {
    const token = await new ResourceOwnerPassword(config()).getToken({
      username: user.username,
      password: user.password
    })
    assert.isString(token.token.refresh_token)
    assert.isString(token.token.open_id)
    const refreshed = await token.refresh({ scope: "email" })
    assert.strictEqual(refreshed.token.scope, "email")
    assert.notStrictEqual(refreshed.token.refresh_token, token.token.refresh_token)
  })

  it("sees wrong credentials refused with invalid_grant", async () => {
    try {
      await new ResourceOwnerPassword(config()).getToken({
        username: user.username,
        password: "not it at all"
      })
      assert.fail("expected an error")
    } catch (e) {
      const data = (e as { data?: { payload?: { error?: string } } }).data
      assert.strictEqual(data?.payload?.error, "invalid_grant")
    }
  })
})
