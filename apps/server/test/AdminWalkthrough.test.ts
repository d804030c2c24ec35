/**
 * The admin API end to end over HTTP, as a developer portal would use it: every change made on
 * the admin listener takes effect on the public port of the same running server, and is in the
 * audit trail with the actor `admin-api`.
 */
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import {
  Browser,
  basic,
  formOf,
  type ServerProcess,
  signInAndAllow,
  spawnServer,
  tempDir
} from "./helpers.js"
import { adminPort, adminToken } from "./prometheus.js"

const tmp = tempDir()
afterAll(() => tmp.cleanup())

const cb = "http://127.0.0.1:9/cb"
const form = { "content-type": "application/x-www-form-urlencoded" }

type Json = Record<string, unknown>

describe("the admin API, end to end", () => {
  let server: ServerProcess
  let admin: string

  /** A request to the admin listener with the token; the status and the JSON body. */
  const call = async (
    method: string,
    path: string,
    body?: unknown
  ): Promise<{ status: number; json: Json }> => {
    const res = await fetch(`${admin}/admin/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await res.text()
    return { status: res.status, json: text === "" ? {} : (JSON.parse(text) as Json) }
  }

  const token = async (app: { app_key: string; app_secret: string }, fields: Record<string, string>) => {
    const res = await fetch(`${server.base}/oauth2/oauth2/token`, {
      method: "POST",
      headers: { authorization: basic(app.app_key, app.app_secret), ...form },
      body: new URLSearchParams(fields).toString()
    })
    return { status: res.status, json: (await res.json()) as Json }
  }

  const introspect = async (app: { app_key: string; app_secret: string }, value: string) => {
    const res = await fetch(`${server.base}/oauth2/oauth2/introspect`, {
      method: "POST",
      headers: { authorization: basic(app.app_key, app.app_secret), ...form },
      body: new URLSearchParams({ token: value }).toString()
    })
    return ((await res.json()) as { active: boolean }).active
  }

  beforeAll(async () => {
    server = await spawnServer({
      LATCHKEY_DB: join(tmp.dir, "walkthrough.sqlite"),
      PORT: "0",
      LATCHKEY_ADMIN_PORT: "0",
      LATCHKEY_ADMIN_TOKEN: adminToken
    })
    admin = `http://127.0.0.1:${await adminPort(server)}`
  })
  afterAll(async () => {
    await server.stop()
  })

  it("creates an application the public port accepts, changes its grants and scopes, rotates and deletes it", async () => {
    const created = await call("POST", "/applications", {
      name: "Portal app",
      redirect_uris: [cb],
      scopes: ["profile", "email"],
      grant_types: ["client_credentials", "refresh_token"],
      require_pkce: true
    })
    assert.strictEqual(created.status, 201)
    const app = created.json as { app_key: string; app_secret: string }
    const first = await token(app, { grant_type: "client_credentials" })
    assert.strictEqual(first.status, 200)
    assert.strictEqual(first.json.scope, "email,profile")

    // Narrowed: the next token carries only what is registered now
    const patched = await call("PATCH", `/applications/${app.app_key}`, { scopes: ["profile"] })
    assert.strictEqual(patched.status, 200)
    assert.deepStrictEqual(patched.json.scopes, ["profile"])
    assert.strictEqual((await token(app, { grant_type: "client_credentials" })).json.scope, "profile")
    // A validation error names the field and changes nothing
    const bad = await call("PATCH", `/applications/${app.app_key}`, { redirect_uris: ["not a uri"] })
    assert.strictEqual(bad.status, 400)
    assert.strictEqual(bad.json.field, "redirect_uris")
    assert.deepStrictEqual((await call("GET", `/applications/${app.app_key}`)).json.redirect_uris, [cb])
    // The grant taken away is refused at once
    await call("PATCH", `/applications/${app.app_key}`, { grant_types: ["authorization_code"] })
    assert.strictEqual(
      (await token(app, { grant_type: "client_credentials" })).json.error,
      "unauthorized_client"
    )
    await call("PATCH", `/applications/${app.app_key}`, { grant_types: ["client_credentials"] })

    // Rotation with a grace: both secrets work until it ends
    const rotated = await call("POST", `/applications/${app.app_key}/secret`, { grace_seconds: 3600 })
    assert.strictEqual(rotated.status, 200)
    const next = { app_key: app.app_key, app_secret: rotated.json.app_secret as string }
    assert.notStrictEqual(next.app_secret, app.app_secret)
    assert.strictEqual((await token(next, { grant_type: "client_credentials" })).status, 200)
    assert.strictEqual((await token(app, { grant_type: "client_credentials" })).status, 200)

    const issued = (await token(next, { grant_type: "client_credentials" })).json.access_token as string
    assert.isTrue(await introspect(next, issued))
    assert.strictEqual((await call("DELETE", `/applications/${app.app_key}`)).status, 200)
    assert.strictEqual((await token(next, { grant_type: "client_credentials" })).status, 401)
    assert.strictEqual((await call("GET", `/applications/${app.app_key}`)).status, 404)
  })

  it("creates a user who can sign in, disables them (refresh refused), sets a new password and enables them", async () => {
    const app = (
      await call("POST", "/applications", {
        name: "Password app",
        redirect_uris: [cb],
        scopes: ["profile"],
        grant_types: ["password", "refresh_token"]
      })
    ).json as { app_key: string; app_secret: string }
    const user = await call("POST", "/users", { username: "walker", password: "first password" })
    assert.strictEqual(user.status, 201)
    const userId = user.json.user_id as string
    assert.strictEqual(
      (await call("POST", "/users", { username: "walker", password: "another one" })).status,
      409
    )

    const signedIn = await token(app, {
      grant_type: "password",
      username: "walker",
      password: "first password"
    })
    assert.strictEqual(signedIn.status, 200)
    const refreshToken = signedIn.json.refresh_token as string

    assert.strictEqual((await call("PATCH", `/users/${userId}`, { disabled: true })).status, 200)
    assert.isFalse(await introspect(app, signedIn.json.access_token as string))
    assert.strictEqual(
      (await token(app, { grant_type: "refresh_token", refresh_token: refreshToken })).json.error,
      "invalid_grant"
    )
    const whileDisabled = await token(app, {
      grant_type: "password",
      username: "walker",
      password: "first password"
    })
    assert.strictEqual(whileDisabled.json.error, "invalid_grant")

    await call("PATCH", `/users/${userId}`, { disabled: false, password: "second password" })
    const old = await token(app, { grant_type: "password", username: "walker", password: "first password" })
    assert.strictEqual(old.json.error, "invalid_grant")
    const again = await token(app, {
      grant_type: "password",
      username: "walker",
      password: "second password"
    })
    assert.strictEqual(again.status, 200)
    assert.strictEqual((await call("GET", `/users/${userId}`)).json.disabled_at, null)
  })

  it("a browser signed in before the user was disabled is signed out once they are enabled again: the sign-in page, no code", async () => {
    const app = (
      await call("POST", "/applications", {
        name: "Pages app",
        redirect_uris: [cb],
        scopes: ["profile"],
        grant_types: ["authorization_code"]
      })
    ).json as { app_key: string }
    const user = await call("POST", "/users", { username: "idle-walker", password: "first password" })
    const url = `${server.base}/oauth2/oauth2/authorize?${new URLSearchParams({
      response_type: "code",
      client_id: app.app_key,
      redirect_uri: cb,
      scope: "profile",
      state: "s1"
    })}`
    const browser = new Browser()
    const login = formOf(await (await browser.fetch(url)).text())
    const signedIn = await browser.postForm(server.base + login.action, {
      ...login.fields,
      username: "idle-walker",
      password: "first password"
    })
    assert.strictEqual(signedIn.status, 303)
    const consent = formOf(await (await browser.fetch(url)).text())
    await browser.postForm(server.base + consent.action, { ...consent.fields, decision: "allow" })
    const before = await browser.fetch(url)
    assert.strictEqual(before.status, 302)
    assert.isNotNull(new URL(before.headers.get("location") as string).searchParams.get("code"))

    // The browser stays idle while the account is disabled, then enabled again
    const userPath = `/users/${user.json.user_id as string}`
    assert.strictEqual((await call("PATCH", userPath, { disabled: true })).status, 200)
    assert.strictEqual((await call("PATCH", userPath, { disabled: false })).status, 200)
    const after = await browser.fetch(url)
    assert.strictEqual(after.status, 200, "the sign-in page, not a redirect with a code")
    assert.isNull(after.headers.get("location"))
    assert.include(await after.text(), 'name="password"')
    const events = await call("GET", "/audit?type=user_updated&limit=2")
    assert.deepStrictEqual(
      (events.json as unknown as Array<{ detail: string }>).map((e) => e.detail),
      ["disabled; tokens revoked, sessions ended", "enabled"]
    )
  })

  it("revokes every token of one open_id of one application, and no other", async () => {
    const app = (
      await call("POST", "/applications", {
        name: "Subjects app",
        redirect_uris: [cb],
        grant_types: ["client_credentials"]
      })
    ).json as { app_key: string; app_secret: string }
    const mine = await token(app, { grant_type: "client_credentials", open_id: "subject-1" })
    const also = await token(app, { grant_type: "client_credentials", open_id: "subject-1" })
    const other = await token(app, { grant_type: "client_credentials", open_id: "subject-2" })
    const revoked = await call("DELETE", `/applications/${app.app_key}/subjects/subject-1/tokens`)
    assert.strictEqual(revoked.status, 200)
    assert.strictEqual(revoked.json.revoked, 2)
    assert.isFalse(await introspect(app, mine.json.access_token as string))
    assert.isFalse(await introspect(app, also.json.access_token as string))
    assert.isTrue(await introspect(app, other.json.access_token as string))
  })

  it("withdraws a consent given on the pages: its refresh token stops working and the consent is gone", async () => {
    const app = (
      await call("POST", "/applications", {
        name: "Consent app",
        redirect_uris: [cb],
        scopes: ["profile"],
        grant_types: ["authorization_code", "refresh_token"]
      })
    ).json as { app_key: string; app_secret: string }
    const user = await call("POST", "/users", { username: "consenter", password: "consenter password" })
    const userId = user.json.user_id as string
    const authorize = `${server.base}/oauth2/oauth2/authorize?${new URLSearchParams({
      response_type: "code",
      client_id: app.app_key,
      redirect_uri: cb,
      scope: "profile"
    })}`
    const location = await signInAndAllow(server.base, authorize, {
      username: "consenter",
      password: "consenter password"
    })
    const code = new URL(location).searchParams.get("code") as string
    const tokens = await token(app, { grant_type: "authorization_code", code, redirect_uri: cb })
    assert.strictEqual(tokens.status, 200)
    const listed = await fetch(`${admin}/admin/v1/users/${userId}/consents`, {
      headers: { authorization: `Bearer ${adminToken}` }
    })
    const consents = (await listed.json()) as Array<{ app_key: string; scopes: Array<string> }>
    assert.deepStrictEqual(consents.find((c) => c.app_key === app.app_key)?.scopes, ["profile"])

    const withdrawn = await call("DELETE", `/applications/${app.app_key}/consents/${userId}`)
    assert.strictEqual(withdrawn.status, 200)
    assert.strictEqual(
      (await token(app, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token as string }))
        .json.error,
      "invalid_grant"
    )
    assert.strictEqual((await call("DELETE", `/applications/${app.app_key}/consents/${userId}`)).status, 404)
    const after = await fetch(`${admin}/admin/v1/users/${userId}/consents`, {
      headers: { authorization: `Bearer ${adminToken}` }
    })
    assert.deepStrictEqual(await after.json(), [])
  })

  it("answers the audit trail filtered by application and type, oldest first, with the admin as actor and the application's name", async () => {
    const app = (
      await call("POST", "/applications", {
        name: "Audited",
        redirect_uris: [cb],
        grant_types: ["client_credentials"]
      })
    ).json as { app_key: string }
    await call("PATCH", `/applications/${app.app_key}`, { name: "Audited, renamed" })
    const events = await call("GET", `/audit?app_key=${encodeURIComponent(app.app_key)}&limit=10`)
    assert.strictEqual(events.status, 200)
    const list = events.json as unknown as Array<{
      type: string
      actor: string | null
      app_key: string
      app_name: string | null
    }>
    assert.isTrue(list.every((e) => e.app_name === "Audited, renamed"))
    assert.deepStrictEqual(
      list.map((e) => [e.type, e.actor]),
      [
        ["application_created", "admin-api"],
        ["application_updated", "admin-api"]
      ]
    )
    const created = await call(
      "GET",
      `/audit?type=application_created&app_key=${encodeURIComponent(app.app_key)}`
    )
    assert.lengthOf(created.json as unknown as Array<Json>, 1)
    const badType = await call("GET", "/audit?type=nonsense")
    assert.strictEqual(badType.status, 400)
    assert.strictEqual(badType.json.field, "type")
  })
})
