/**
 * The userinfo endpoint on the whole server over SQLite, through openid-client: it accepts a JWT
 * access token of an application with an audience of its own, which verifies with no `iat`
 * leeway the moment it is issued, and refuses it once the token is revoked or its application
 * deleted, as introspection answers `active: false` (docs/openid-connect.md, "Userinfo").
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Admin } from "@latchkey/core"
import * as jose from "jose"
import * as client from "openid-client"
import { type Client, read, type Stack, startStack, token } from "./harness.js"

let s: Stack

beforeAll(async () => {
  s = await startStack()
})

afterAll(async () => {
  await s?.close()
})

const audience = "https://api.example"
const insecure = { execute: [client.allowInsecureRequests] }

/** An application whose JWT access tokens name `aud` (default: the issuer), its openid-client configuration, and alice's token. */
const issued = async (aud: string | null = audience) => {
  const app: Client = await s.client({
    scope: "openid,profile",
    grantTypes: ["password"],
    accessTokenFormat: "jwt",
    accessTokenAudience: aud
  })
  const config = await client.discovery(
    new URL(s.base),
    app.appKey,
    undefined,
    client.ClientSecretBasic(app.appSecret),
    insecure
  )
  const r = await read(
    await token(
      s,
      {
        grant_type: "password",
        username: s.alice.username,
        password: s.alice.password,
        scope: "openid,profile"
      },
      app
    )
  )
  assert.strictEqual(r.status, 200)
  return { app, config, access: r.body.access_token as string, openId: r.body.open_id as string }
}

/** How a userinfo call with openid-client ended: its claims, or the `error` of its challenge. */
const userinfo = (
  config: client.Configuration,
  access: string,
  openId: string
): Promise<{ readonly claims?: Record<string, unknown>; readonly error?: string | undefined }> =>
  client.fetchUserInfo(config, access, openId).then(
    (claims) => ({ claims: claims as unknown as Record<string, unknown> }),
    (e: unknown) => {
      assert.instanceOf(e, client.WWWAuthenticateChallengeError)
      return { error: (e as client.WWWAuthenticateChallengeError).cause[0]?.parameters.error }
    }
  )

describe("userinfo with a JWT access token of an audience of its own (SQLite)", () => {
  it("openid-client's fetchUserInfo answers for it, and the token verifies with no iat leeway at once", async () => {
    const { config, access, openId } = await issued()
    // RFC 7519 §4.1.6: iat is not in the future, even within the second the token was issued
    const jwks = jose.createRemoteJWKSet(new URL(`${s.base}/oauth2/oauth2/jwks`))
    const verified = await jose.jwtVerify(access, jwks, {
      issuer: s.base,
      audience,
      typ: "at+jwt",
      clockTolerance: 0,
      maxTokenAge: "1 hour"
    })
    assert.strictEqual(verified.payload.sub, openId)
    assert.deepStrictEqual(await userinfo(config, access, openId), {
      claims: { sub: openId, preferred_username: s.alice.username }
    })
  })

  for (const aud of [audience, null]) {
    it(`once the token (${aud ?? "the issuer"} as audience) is revoked, introspection says inactive and userinfo refuses it`, async () => {
      const { config, access, openId } = await issued(aud)
      assert.strictEqual((await userinfo(config, access, openId)).claims?.sub, openId)
      await client.tokenRevocation(config, access)
      assert.isFalse((await client.tokenIntrospection(config, access)).active)
      assert.deepStrictEqual(await userinfo(config, access, openId), { error: "invalid_token" })
    })
  }

  it("once its application (the issuer as audience) is deleted, userinfo refuses it with invalid_token", async () => {
    const { app, config, access, openId } = await issued(null)
    assert.strictEqual((await userinfo(config, access, openId)).claims?.sub, openId)
    await s.runtime.runPromise(Admin.deleteApplication(app.appKey))
    assert.deepStrictEqual(await userinfo(config, access, openId), { error: "invalid_token" })
  })
})
