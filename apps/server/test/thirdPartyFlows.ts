/**
 * The third-party client tests of ThirdPartyClients.test.ts as a function of where the server
 * is: oauth4webapi (discovery, client credentials, code with PKCE, refresh, introspection,
 * revocation) and simple-oauth2 (password, client credentials). They also run through a
 * round-robin proxy in front of two instances (test/scale).
 */
import { assert, beforeAll, describe, it } from "@effect/vitest"
import * as oauth from "oauth4webapi"
import { ClientCredentials, ResourceOwnerPassword } from "simple-oauth2"
import { createApp, createUser, signInAndAllow } from "./helpers.js"

/** The registered redirect URI (nothing listens there: the flows read the redirect). */
const redirectUri = "http://127.0.0.1:9/callback"

/** The user of the flows. */
export const thirdPartyUser = { username: "e2e-user", password: "e2e password 123" }

/** The flows' application and user, created with the CLI. */
export const seedThirdPartyClients = async (
  db: string,
  env: Record<string, string> = {},
  inProcess = false
): Promise<{ app_key: string; app_secret: string }> => {
  const app = await createApp(
    db,
    [
      "--name",
      "Third Party",
      "--redirect-uri",
      redirectUri,
      "--scope",
      "profile,email",
      "--grant-types",
      "authorization_code,refresh_token,client_credentials,password"
    ],
    env
  )
  await createUser(db, thirdPartyUser.username, thirdPartyUser.password, env, inProcess)
  return app
}

/** Where the clients run. */
export interface ThirdPartyTarget {
  /** The server's base URL, also its issuer. */
  readonly base: string
  readonly app: { readonly app_key: string; readonly app_secret: string }
  readonly user: { readonly username: string; readonly password: string }
}

/** Register the third-party client tests on `t` (read when they run). */
export const thirdPartyClientTests = (t: () => ThirdPartyTarget): void => {
  describe("oauth4webapi", () => {
    const options = { [oauth.allowInsecureRequests]: true }
    let as: oauth.AuthorizationServer
    let client: oauth.Client
    let clientAuth: oauth.ClientAuth

    beforeAll(async () => {
      as = await oauth.processDiscoveryResponse(
        new URL(t().base),
        await oauth.discoveryRequest(new URL(t().base), { ...options, algorithm: "oauth2" })
      )
      client = { client_id: t().app.app_key }
      clientAuth = oauth.ClientSecretBasic(t().app.app_secret)
    })

    it("discovers the metadata", () => {
      assert.strictEqual(as.issuer, t().base)
      assert.strictEqual(as.token_endpoint, `${t().base}/oauth2/oauth2/token`)
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
      const callback = await signInAndAllow(t().base, url.href, t().user)
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
      assert.strictEqual(active.client_id, t().app.app_key)
      assert.strictEqual(active.scope, "profile")

      const me = await fetch(`${t().base}/api/me`, {
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
      const callback = await signInAndAllow(t().base, url.href, t().user)
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
      client: { id: t().app.app_key, secret: t().app.app_secret },
      auth: { tokenHost: t().base, tokenPath: "/oauth2/oauth2/token" },
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
        username: t().user.username,
        password: t().user.password
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
          username: t().user.username,
          password: "not it at all"
        })
        assert.fail("expected an error")
      } catch (e) {
        const data = (e as { data?: { payload?: { error?: string } } }).data
        assert.strictEqual(data?.payload?.error, "invalid_grant")
      }
    })
  })
}
