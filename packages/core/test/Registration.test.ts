/**
 * Dynamic client registration (RFC 7591) and its management (RFC 7592): off unless turned on;
 * a client registers with an initial access token (each use spent only by a registration that
 * is stored), reads, replaces and deletes its registration with its registration access token;
 * every value is checked as the admin API checks it, every change audited as `registration`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as AdminJson from "../src/admin/AdminJson.js"
import * as Http from "../src/http/Http.js"
import * as BasicAuth from "../src/oauth/requests/BasicAuth.js"
import * as Audit from "../src/security/Audit.js"
import { ApplicationStore } from "../src/storage/ApplicationStore.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import * as Memory from "../src/storage/Memory.js"
import { RegistrationStore } from "../src/storage/RegistrationStore.js"
import { post, TestLayer, token } from "./fixtures.js"

const layer = (registration = true, appReview = false) =>
  Layer.merge(TestLayer({ registration, appReview }), Layer.provideMerge(Audit.layer, Memory.auditLayer))

const path = "/oauth2/oauth2/register"

/** A JSON request to the registration endpoint (or a client's configuration URI). */
const send = (method: string, body: unknown, authorization?: string, query = "") => {
  const req: Http.HttpRequest = {
    method,
    path,
    query,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(authorization === undefined ? {} : { authorization })
    },
    body: body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body),
    remoteAddress: "127.0.0.1"
  }
  return Effect.map(Option.getOrThrow(Http.route(req)), (res) => ({
    ...res,
    json: res.body === "" ? undefined : (JSON.parse(res.body) as Record<string, unknown>)
  }))
}

const initialToken = (uses = 1, expiresIn = 3600) =>
  Effect.map(Admin.createInitialAccessToken({ uses, expiresIn }), ({ token }) => `Bearer ${token}`)

const metadata = {
  client_name: "Example RP",
  redirect_uris: ["https://rp.example/cb"],
  grant_types: ["authorization_code", "refresh_token", "client_credentials"],
  scope: "read write"
}

/** Manage the registration at its `registration_client_uri` with its `registration_access_token`. */
const manage = (method: string, registered: Record<string, unknown> | undefined, body?: unknown) => {
  const uri = new URL(registered?.registration_client_uri as string)
  return send(method, body, `Bearer ${registered?.registration_access_token}`, uri.search.slice(1))
}

const usesLeft = Effect.map(Admin.listInitialAccessTokens, (tokens) => tokens.map((t) => t.usesLeft))
const appCount = Effect.map(
  Effect.flatMap(ApplicationStore, (apps) => apps.list()),
  (apps) => apps.length
)
const events = Effect.flatMap(AuditStore, (s) => s.tail({ limit: 100 }))

describe("dynamic client registration", () => {
  it.effect("is off by default: 404, and the metadata names no registration endpoint", () =>
    Effect.gen(function* () {
      const bearer = yield* initialToken()
      const r = yield* send("POST", metadata, bearer)
      assert.strictEqual(r.status, 404)
      assert.strictEqual(r.json?.error, "not_found")
      const doc = yield* post("/.well-known/oauth-authorization-server", {}, undefined, { method: "GET" })
      assert.isFalse("registration_endpoint" in (doc.json ?? {}))
      assert.deepStrictEqual(yield* usesLeft, [1], "nothing spent")
    }).pipe(Effect.provide(layer(false)))
  )

  it.effect("registers a client that then gets a token; the metadata names the endpoint", () =>
    Effect.gen(function* () {
      const doc = yield* post("/.well-known/oauth-authorization-server", {}, undefined, { method: "GET" })
      assert.strictEqual(doc.json?.registration_endpoint, `https://auth.example${path}`)
      const r = yield* send(
        "POST",
        { ...metadata, logo_uri: "https://rp.example/logo.png" },
        yield* initialToken()
      )
      assert.strictEqual(r.status, 201, r.body)
      assert.strictEqual(r.headers["cache-control"], "no-store")
      const info = r.json ?? {}
      assert.strictEqual(info.client_name, "Example RP")
      assert.deepStrictEqual(info.redirect_uris, ["https://rp.example/cb"])
      assert.deepStrictEqual(info.response_types, ["code"])
      assert.strictEqual(info.token_endpoint_auth_method, "client_secret_basic")
      assert.strictEqual(info.scope, "read write", "scopes joined with spaces")
      assert.strictEqual(info.client_secret_expires_at, 0)
      assert.isFalse("logo_uri" in info, "metadata it does not understand is ignored, not echoed")
      assert.strictEqual(
        info.registration_client_uri,
        `https://auth.example${path}?client_id=${encodeURIComponent(info.client_id as string)}`
      )
      const issued = yield* token(
        { grant_type: "client_credentials" },
        BasicAuth.encode({ appKey: info.client_id as string, appSecret: info.client_secret as string })
      )
      assert.strictEqual(issued.status, 200, issued.body)
      assert.strictEqual(issued.json?.scope, "read write", "its answers join scopes with spaces")
      assert.deepStrictEqual(yield* usesLeft, [], "its one use is spent")
      const created = (yield* events).find((e) => e.type === "application_created")
      assert.strictEqual(created?.actor, "registration")
      assert.strictEqual(created?.detail, 'name "Example RP"; registered by the client')
    }).pipe(Effect.provide(layer()))
  )

  it.effect("without a token, with a wrong, spent or expired one: 401 invalid_token, nothing stored", () =>
    Effect.gen(function* () {
      const none = yield* send("POST", metadata)
      assert.strictEqual(none.status, 401)
      assert.strictEqual(none.headers["www-authenticate"], 'Bearer realm="latchkey"')
      const wrong = yield* send("POST", metadata, "Bearer lk_reg_not-issued")
      assert.strictEqual(wrong.status, 401)
      assert.strictEqual(wrong.headers["www-authenticate"], 'Bearer realm="latchkey", error="invalid_token"')
      assert.strictEqual(wrong.json?.error, "invalid_token")
      const once = yield* initialToken(1)
      assert.strictEqual((yield* send("POST", metadata, once)).status, 201)
      assert.strictEqual((yield* send("POST", metadata, once)).status, 401, "spent")
      const short = yield* initialToken(5, 60)
      yield* TestClock.adjust("60 seconds")
      assert.strictEqual((yield* send("POST", metadata, short)).status, 401, "expired")
      assert.strictEqual(yield* appCount, 1)
    }).pipe(Effect.provide(layer()))
  )

  it.effect("metadata it cannot register is 400 naming the problem, and spends no use", () =>
    Effect.gen(function* () {
      const bearer = yield* initialToken(3)
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ ...metadata, redirect_uris: ["http://rp.example/cb"] }, "invalid_redirect_uri"],
        [{ ...metadata, redirect_uris: [] }, "invalid_redirect_uri"],
        [{ ...metadata, token_endpoint_auth_method: "private_key_jwt" }, "invalid_client_metadata"],
        [{ ...metadata, response_types: ["code id_token"] }, "invalid_client_metadata"],
        [
          { ...metadata, grant_types: ["client_credentials"], response_types: ["code"] },
          "invalid_client_metadata"
        ],
        [
          { ...metadata, grant_types: ["urn:ietf:params:oauth:grant-type:device_code"] },
          "invalid_client_metadata"
        ],
        [{ ...metadata, scope: "read\u0000" }, "invalid_client_metadata"],
        [{ ...metadata, client_name: 7 }, "invalid_client_metadata"],
        ["not json", "invalid_client_metadata"]
      ]
      for (const [body, error] of cases) {
        const r = yield* send("POST", body, bearer)
        assert.strictEqual(r.status, 400, JSON.stringify(body))
        assert.strictEqual(r.json?.error, error, JSON.stringify(body))
      }
      const scope = yield* send("POST", { ...metadata, scope: "read\u0000" }, bearer)
      assert.match(scope.json?.error_description as string, /^scope/, "named as RFC 7591 names it")
      assert.deepStrictEqual(yield* usesLeft, [3])
      assert.strictEqual(yield* appCount, 0)
    }).pipe(Effect.provide(layer()))
  )

  it.effect("a public client (none) gets no secret and must use PKCE", () =>
    Effect.gen(function* () {
      const r = yield* send(
        "POST",
        { redirect_uris: ["com.example.app:/cb"], token_endpoint_auth_method: "none" },
        yield* initialToken()
      )
      assert.strictEqual(r.status, 201, r.body)
      assert.isFalse("client_secret" in (r.json ?? {}))
      assert.strictEqual(r.json?.token_endpoint_auth_method, "none")
      assert.strictEqual(r.json?.client_name, "Registered client", "no name and no host to name it by")
      const app = yield* Admin.findApplication(r.json?.client_id as string)
      assert.isTrue(app.public)
      assert.isTrue(app.requirePkce)
    }).pipe(Effect.provide(layer()))
  )

  it.effect(
    "with review on, a registered client waits for the operator, and new redirect URIs send it back",
    () =>
      Effect.gen(function* () {
        const r = (yield* send("POST", metadata, yield* initialToken())).json
        const basic = BasicAuth.encode({
          appKey: r?.client_id as string,
          appSecret: r?.client_secret as string
        })
        const waiting = yield* token({ grant_type: "client_credentials" }, basic)
        assert.strictEqual(waiting.status, 401)
        assert.strictEqual(waiting.json?.error, "invalid_client")
        yield* Admin.reviewApplication(r?.client_id as string, "approve")
        assert.strictEqual((yield* token({ grant_type: "client_credentials" }, basic)).status, 200)
        const moved = yield* manage("PUT", r, {
          ...metadata,
          client_id: r?.client_id,
          redirect_uris: ["https://rp.example/moved"]
        })
        assert.strictEqual(moved.status, 200, moved.body)
        assert.strictEqual((yield* Admin.findApplication(r?.client_id as string)).status, "pending")
        assert.strictEqual((yield* token({ grant_type: "client_credentials" }, basic)).status, 401)
        yield* Admin.reviewApplication(r?.client_id as string, "reject", "not a real business")
        const refused = yield* manage("PUT", r, { ...metadata, client_id: r?.client_id })
        assert.strictEqual(refused.status, 400, "a rejected registration cannot change")
        assert.strictEqual(refused.json?.error, "invalid_client_metadata")
      }).pipe(Effect.provide(layer(true, true)))
  )

  it.effect("one use registers one client, however two registrations interleave", () =>
    Effect.gen(function* () {
      const bearer = yield* initialToken(1)
      const answers = yield* Effect.all([send("POST", metadata, bearer), send("POST", metadata, bearer)], {
        concurrency: 2
      })
      assert.deepStrictEqual(answers.map((a) => a.status).sort(), [201, 401])
      assert.strictEqual(yield* appCount, 1)
    }).pipe(Effect.provide(layer()))
  )
})

describe("client configuration endpoint (RFC 7592)", () => {
  it.effect("reads the registration with its own token; any other token or client is 401", () =>
    Effect.gen(function* () {
      const bearer = yield* initialToken(2)
      const a = (yield* send("POST", metadata, bearer)).json
      const b = (yield* send("POST", metadata, bearer)).json
      const read = yield* manage("GET", a)
      assert.strictEqual(read.status, 200, read.body)
      const { client_secret: _secret, client_secret_expires_at: _expires, ...withoutSecret } = a ?? {}
      assert.deepStrictEqual(read.json, withoutSecret, "the same information, without the secret")
      const query = new URL(a?.registration_client_uri as string).search.slice(1)
      const crossed = yield* send("GET", undefined, `Bearer ${b?.registration_access_token}`, query)
      assert.strictEqual(crossed.status, 401)
      const unknown = yield* send(
        "GET",
        undefined,
        `Bearer ${a?.registration_access_token}`,
        "client_id=nope"
      )
      assert.strictEqual(unknown.status, 401)
      const operatorMade = yield* Admin.createApplication({
        name: "Ops",
        redirectUris: ["https://o.example/cb"]
      })
      const notRegistered = yield* send(
        "GET",
        undefined,
        `Bearer ${a?.registration_access_token}`,
        `client_id=${operatorMade.app.appKey}`
      )
      assert.strictEqual(notRegistered.status, 401, "an application an operator made is not managed here")
    }).pipe(Effect.provide(layer()))
  )

  it.effect("replaces the registration with PUT: omitted fields are deleted, client_id must be its own", () =>
    Effect.gen(function* () {
      const a = (yield* send(
        "POST",
        { ...metadata, post_logout_redirect_uris: ["https://rp.example/bye"] },
        yield* initialToken()
      )).json
      const put = (body: Record<string, unknown>) => manage("PUT", a, body)
      const wrongId = yield* put({ ...metadata, client_id: "someone-else" })
      assert.strictEqual(wrongId.status, 400)
      assert.strictEqual(wrongId.json?.error, "invalid_client_metadata")
      const wrongSecret = yield* put({ ...metadata, client_id: a?.client_id, client_secret: "not-it" })
      assert.strictEqual(wrongSecret.status, 400)
      const r = yield* put({
        client_id: a?.client_id,
        client_secret: a?.client_secret,
        client_name: "Renamed RP",
        redirect_uris: ["https://rp.example/new-cb"]
      })
      assert.strictEqual(r.status, 200, r.body)
      assert.strictEqual(r.json?.client_name, "Renamed RP")
      assert.deepStrictEqual(r.json?.grant_types, ["authorization_code"], "back to the default")
      assert.isFalse("post_logout_redirect_uris" in (r.json ?? {}), "omitted: deleted")
      const app = yield* Admin.findApplication(a?.client_id as string)
      assert.deepStrictEqual(app.redirectUris, ["https://rp.example/new-cb"])
      const updated = (yield* events).find((e) => e.type === "application_updated")
      assert.strictEqual(updated?.actor, "registration")
    }).pipe(Effect.provide(layer()))
  )

  it.effect("DELETE removes the application and ends its tokens; its token then reads nothing", () =>
    Effect.gen(function* () {
      const a = (yield* send("POST", metadata, yield* initialToken())).json
      const basic = BasicAuth.encode({
        appKey: a?.client_id as string,
        appSecret: a?.client_secret as string
      })
      const access = (yield* token({ grant_type: "client_credentials" }, basic)).json?.access_token as string
      const r = yield* manage("DELETE", a)
      assert.strictEqual(r.status, 204)
      assert.strictEqual(r.body, "")
      assert.strictEqual((yield* manage("GET", a)).status, 401)
      assert.strictEqual(yield* appCount, 0)
      const store = yield* RegistrationStore
      assert.isTrue(Option.isNone(yield* store.findClient(a?.client_id as string)))
      const operator = yield* Admin.createApplication({ name: "RS", redirectUris: ["https://rs.example/cb"] })
      const introspected = yield* post(
        "/oauth2/oauth2/introspect",
        { token: access },
        BasicAuth.encode({ appKey: operator.app.appKey, appSecret: operator.appSecret })
      )
      assert.deepStrictEqual(introspected.json, { active: false })
    }).pipe(Effect.provide(layer()))
  )

  it.effect("other methods are 405 naming the ones it serves", () =>
    Effect.gen(function* () {
      const r = yield* send("PATCH", {}, yield* initialToken())
      assert.strictEqual(r.status, 405)
      assert.strictEqual(r.headers.allow, "POST, GET, PUT, DELETE")
    }).pipe(Effect.provide(layer()))
  )
})

describe("initial access tokens", () => {
  it.effect("are issued within bounds, listed by id, revoked once; the audit trail never holds one", () =>
    Effect.gen(function* () {
      const refused = yield* Effect.flip(Admin.createInitialAccessToken({ uses: 0, expiresIn: 3600 }))
      assert.strictEqual(refused._tag === "InvalidField" && refused.field, "uses")
      const short = yield* Effect.flip(Admin.createInitialAccessToken({ uses: 1, expiresIn: 59 }))
      assert.strictEqual(short._tag === "InvalidField" && short.field, "expires_in")
      const { token: issued, record } = yield* Admin.createInitialAccessToken({ uses: 2, expiresIn: 600 })
      assert.match(issued, /^lk_reg_[A-Za-z0-9_-]{43}$/)
      assert.deepStrictEqual(
        (yield* Admin.listInitialAccessTokens).map((t) => t.tokenHash),
        [record.tokenHash]
      )
      const id = AdminJson.registrationToken(record).id
      assert.strictEqual(id, `rt_${record.tokenHash}`, "never a leading - on a command line")
      assert.strictEqual(
        (yield* Effect.flip(Admin.revokeInitialAccessToken(record.tokenHash)))._tag,
        "NotFound",
        "the bare digest is not the id"
      )
      yield* Admin.revokeInitialAccessToken(id)
      const again = yield* Effect.flip(Admin.revokeInitialAccessToken(id))
      assert.strictEqual(again._tag, "NotFound")
      assert.strictEqual((yield* send("POST", metadata, `Bearer ${issued}`)).status, 401, "revoked")
      const trail = yield* events
      assert.deepStrictEqual(
        trail.map((e) => e.type).filter((t) => t.startsWith("registration_token")),
        ["registration_token_created", "registration_token_revoked"]
      )
      assert.isFalse(JSON.stringify(trail).includes(issued))
    }).pipe(Effect.provide(layer()))
  )
})
