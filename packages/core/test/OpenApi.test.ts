import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as AdminApi from "../src/admin/AdminApi.js"
import * as Http from "../src/http/Http.js"
import * as OpenApi from "../src/http/OpenApi.js"
import * as OAuthError from "../src/model/OAuthError.js"
import * as Metadata from "../src/oauth/Metadata.js"
import * as BasicAuth from "../src/oauth/requests/BasicAuth.js"
import { StorageError } from "../src/storage/StorageError.js"
import { TokenStore } from "../src/storage/TokenStore.js"
import { UserStore } from "../src/storage/UserStore.js"
import { Audited, adminToken } from "./adminApi.js"
import { cb, issueCode, issuer, newApp, newUser, post, TestLayer, token } from "./fixtures.js"

type Json = Record<string, unknown>

const doc = OpenApi.document({ issuer, registration: true }) as Json & {
  paths: Record<string, Record<string, Json>>
}

/** The value a local `$ref` of document `d` points at. */
const resolveIn = (d: Json, ref: string): unknown =>
  ref
    .replace(/^#\//, "")
    .split("/")
    .reduce<unknown>(
      (node, key) => (node as Json | undefined)?.[key.replace(/~1/g, "/").replace(/~0/g, "~")],
      d
    )

const resolve = (ref: string): unknown => resolveIn(doc, ref)

const derefIn = (d: Json, node: Json): Json =>
  typeof node.$ref === "string" ? derefIn(d, resolveIn(d, node.$ref) as Json) : node

/** The response is documented in `d`: its status, every documented header (with its value when fixed), its error code. */
const assertDocumentedIn = (d: Json, path: string, method: string, res: Http.HttpResponse, label: string) => {
  const documented = (
    (d.paths as Record<string, Record<string, Json>>)[path]?.[method]?.responses as
      | Record<string, Json>
      | undefined
  )?.[String(res.status)]
  assert.isDefined(documented, `${label}: ${res.status} documented for ${method} ${path}`)
  for (const [name, h] of Object.entries((documented?.headers ?? {}) as Record<string, Json>)) {
    const value = res.headers[name]
    assert.isDefined(value, `${label}: header ${name}`)
    const schema = h.schema as { const?: string; pattern?: string }
    if (schema.const !== undefined) assert.strictEqual(value, schema.const, `${label}: ${name}`)
    if (schema.pattern !== undefined) assert.match(value as string, new RegExp(schema.pattern))
  }
  const content = documented?.content as Record<string, { schema: Json }> | undefined
  if (res.body !== "" && content !== undefined) {
    assert.property(content, "application/json", label)
    assert.match(res.headers["content-type"] ?? "", /^application\/json/)
    const body = JSON.parse(res.body) as Json
    const error = (derefIn(d, content["application/json"]?.schema ?? {}).properties as Json | undefined)
      ?.error as { enum: Array<string> } | undefined
    if (typeof body.error === "string") assert.include(error?.enum ?? [], body.error, label)
  }
}

/** Every value of the document, depth first. */
const walk = (node: unknown, visit: (n: Json) => void): void => {
  if (Array.isArray(node)) for (const n of node) walk(n, visit)
  else if (node !== null && typeof node === "object") {
    visit(node as Json)
    for (const v of Object.values(node)) walk(v, visit)
  }
}

describe("OpenApi.document", () => {
  it("is structurally valid OpenAPI 3.1", () => {
    assert.strictEqual(doc.openapi, "3.1.0")
    assert.isString((doc.info as Json).title)
    assert.isString((doc.info as Json).version)
    assert.deepStrictEqual(doc.servers, [{ url: issuer }])
    const refs: Array<string> = []
    walk(doc, (n) => {
      if (typeof n.$ref === "string") refs.push(n.$ref)
    })
    assert.isAbove(refs.length, 5)
    for (const ref of refs) assert.isDefined(resolve(ref), ref)
    const ids = new Set<string>()
    for (const [path, item] of Object.entries(doc.paths)) {
      assert.match(path, /^\//)
      for (const [method, op] of Object.entries(item)) {
        if (method === "servers") continue
        assert.include(["get", "post", "put", "delete", "head", "patch", "options"], method)
        assert.isAbove(Object.keys(op.responses as Json).length, 0, `${method} ${path}`)
        assert.isFalse(ids.has(op.operationId as string))
        ids.add(op.operationId as string)
      }
    }
    for (const [name, scheme] of Object.entries(
      (doc.components as { securitySchemes: Json }).securitySchemes
    ))
      assert.isDefined(scheme, name)
  })

  it("puts the issuer's path in servers and keeps the probes at the origin", () => {
    const d = OpenApi.document({ issuer: "https://auth.example/base/" }) as {
      servers: Array<Json>
      paths: Record<string, Json>
    }
    assert.deepStrictEqual(d.servers, [{ url: "https://auth.example/base" }])
    assert.deepStrictEqual(d.paths["/healthz"]?.servers, [{ url: "https://auth.example" }])
  })

  it("documents every path the core routes", () => {
    for (const path of [...Http.jsonPaths, ...Object.values(Metadata.paths)]) assert.property(doc.paths, path)
  })

  it("documents the registration endpoint only where clients may register", () => {
    const off = OpenApi.document({ issuer }) as { paths: Record<string, unknown> }
    assert.notProperty(off.paths, Metadata.paths.register)
    assert.deepStrictEqual(Object.keys(doc.paths[Metadata.paths.register] ?? {}), [
      "post",
      "get",
      "put",
      "delete"
    ])
  })

  it("documents every error code the core answers", () => {
    const codes = new Set<string>()
    walk(doc, (n) => {
      const error = (n.properties as Json | undefined)?.error as { enum?: Array<string> } | undefined
      for (const c of error?.enum ?? []) codes.add(c)
    })
    const classes = Object.values(OAuthError).filter((v) => typeof v === "function") as Array<
      new (
        args: never
      ) => { readonly error: string }
    >
    assert.isAbove(classes.length, 8)
    for (const C of classes) {
      const e = new C({ description: "", retryAfter: 1, scope: "" } as never)
      assert.include([...codes], e.error, C.name)
    }
  })

  const wrongSecret = (appKey: string) => BasicAuth.encode({ appKey, appSecret: "wrong" })
  const req = (over: Partial<Http.HttpRequest>): Http.HttpRequest => ({
    method: "POST",
    path: Metadata.paths.token,
    query: "",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "",
    remoteAddress: "127.0.0.1",
    ...over
  })
  const route = (r: Http.HttpRequest) => Option.getOrThrow(Http.route(r))

  /** The response is documented: its status, every documented header (with its value when fixed), its error code. */
  const assertDocumented = (path: string, method: string, res: Http.HttpResponse, label: string) =>
    assertDocumentedIn(doc, path, method, res, label)

  it.effect("every answer of the token endpoint is documented with its headers", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp()
      const cc = { grant_type: "client_credentials" }
      const cases: Array<[string, Http.HttpRequest]> = [
        [
          "valid",
          req({
            body: "grant_type=client_credentials",
            headers: { ...req({}).headers, authorization: basic }
          })
        ],
        [
          "unsupported grant",
          req({ body: "grant_type=magic", headers: { ...req({}).headers, authorization: basic } })
        ],
        [
          "wrong secret",
          req({
            body: "grant_type=client_credentials",
            headers: { ...req({}).headers, authorization: wrongSecret(app.appKey) }
          })
        ],
        ["GET", req({ method: "GET" })],
        [
          "oversized",
          req({
            body: "a=".padEnd(Http.maxBodyBytes + 10, "b"),
            headers: { ...req({}).headers, authorization: basic }
          })
        ],
        [
          "gzip",
          req({
            body: "x",
            headers: { ...req({}).headers, "content-encoding": "gzip", authorization: basic }
          })
        ]
      ]
      const statuses = new Set<number>()
      for (const [label, r] of cases) {
        const res = yield* route(r)
        statuses.add(res.status)
        assertDocumented(Metadata.paths.token, "post", res, label)
      }
      for (let i = 0; i < 6; i++) yield* token(cc, wrongSecret(app.appKey))
      const throttled = yield* token(cc, basic)
      assertDocumented(Metadata.paths.token, "post", throttled, "throttled")
      statuses.add(throttled.status)
      const { basic: other } = yield* newApp()
      const tokens = yield* TokenStore
      const down = yield* token(cc, other).pipe(
        Effect.provideService(TokenStore, {
          ...tokens,
          insert: () => Effect.fail(new StorageError({ message: "x" }))
        })
      )
      assertDocumented(Metadata.paths.token, "post", down, "storage down")
      statuses.add(down.status)
      assert.sameMembers([...statuses], [200, 400, 401, 405, 413, 415, 429, 503])
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("every answer of introspection, revocation and metadata is documented with its headers", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp()
      const issued = (yield* token({ grant_type: "client_credentials" }, basic)).json?.access_token as string
      for (const path of [Metadata.paths.introspect, Metadata.paths.revoke]) {
        assertDocumented(path, "post", yield* post(path, { token: issued }, basic), `${path} valid`)
        assertDocumented(
          path,
          "post",
          yield* post(path, { token: issued }, wrongSecret(app.appKey)),
          `${path} 401`
        )
        assertDocumented(path, "post", yield* post(path, {}, basic), `${path} 400`)
        assertDocumented(path, "post", yield* route(req({ path, method: "GET" })), `${path} GET`)
      }
      const meta = yield* route(req({ path: Metadata.paths.metadata, method: "GET" }))
      assert.strictEqual(meta.status, 200)
      assertDocumented(Metadata.paths.metadata, "get", meta, "metadata")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "every answer of userinfo, the JWKS and the OpenID configuration is documented with its headers",
    () =>
      Effect.gen(function* () {
        const { app, basic } = yield* newApp({ scope: "openid,profile" })
        const { user } = yield* newUser()
        const code = yield* issueCode(app.appKey, user.userId, { scope: "openid,profile" })
        const userToken = (yield* token({ grant_type: "authorization_code", code, redirect_uri: cb }, basic))
          .json?.access_token as string
        const narrowCode = yield* issueCode(app.appKey, user.userId, { scope: "profile" })
        const narrowToken = (yield* token(
          { grant_type: "authorization_code", code: narrowCode, redirect_uri: cb },
          basic
        )).json?.access_token as string
        const path = Metadata.paths.userinfo
        const bearer = (t: string) => ({ authorization: `Bearer ${t}` })
        const cases: Array<[string, Partial<Http.HttpRequest>]> = [
          ["GET valid", { method: "GET", headers: bearer(userToken) }],
          ["POST valid", { headers: bearer(userToken) }],
          ["POST body token", { body: `access_token=${userToken}` }],
          ["no token", { method: "GET", headers: {} }],
          ["malformed", { method: "GET", headers: { authorization: "Bearer a b" } }],
          ["invalid", { method: "GET", headers: bearer("nope") }],
          ["insufficient scope", { method: "GET", headers: bearer(narrowToken) }],
          ["PUT", { method: "PUT" }],
          ["oversized", { body: "a=".padEnd(Http.maxBodyBytes + 10, "b") }],
          ["gzip", { body: "x", headers: { ...req({}).headers, "content-encoding": "gzip" } }]
        ]
        const statuses = new Set<number>()
        for (const [label, over] of cases) {
          const r = req({ path, ...over })
          const res = yield* route(r)
          statuses.add(res.status)
          assertDocumented(
            path,
            r.method.toLowerCase() === "put" ? "get" : r.method.toLowerCase(),
            res,
            label
          )
        }
        assert.sameMembers([...statuses], [200, 400, 401, 403, 405, 413, 415])
        for (const [p, label] of [
          [Metadata.paths.jwks, "jwks"],
          [Metadata.paths.openidConfiguration, "openid configuration"]
        ] as const) {
          const res = yield* route(req({ path: p, method: "GET" }))
          assert.strictEqual(res.status, 200)
          assertDocumented(p, "get", res, label)
        }
      }).pipe(Effect.provide(TestLayer()))
  )
})

describe("OpenApi.adminDocument", () => {
  const admin = OpenApi.adminDocument() as Json & { paths: Record<string, Record<string, Json>> }
  const adminRequest = (method: string, path: string, body?: unknown, over: Partial<Http.HttpRequest> = {}) =>
    ({
      method,
      path,
      query: "",
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {})
      },
      body: body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body),
      ...over
    }) satisfies Http.HttpRequest
  const call = (req: Http.HttpRequest) => AdminApi.route(req, { token: adminToken })
  /** The documented path a concrete admin path answers to. */
  const templateOf = (path: string): string => {
    const segments = path.split("/")
    const found = Object.keys(admin.paths).find((t) => {
      const parts = t.split("/")
      return parts.length === segments.length && parts.every((p, i) => p.startsWith("{") || p === segments[i])
    })
    assert.isDefined(found, path)
    return found as string
  }

  it("is structurally valid OpenAPI 3.1 with a bearerAuth scheme", () => {
    assert.strictEqual(admin.openapi, "3.1.0")
    assert.deepStrictEqual(admin.security, [{ bearerAuth: [] }])
    assert.deepInclude((admin.components as { securitySchemes: Json }).securitySchemes, {
      bearerAuth: {
        type: "http",
        scheme: "bearer",
        description: "the admin token (LATCHKEY_ADMIN_TOKEN), compared in constant time"
      }
    })
    const refs: Array<string> = []
    walk(admin, (n) => {
      if (typeof n.$ref === "string") refs.push(n.$ref)
    })
    assert.isAbove(refs.length, 10)
    for (const ref of refs) assert.isDefined(resolveIn(admin, ref), ref)
    const ids = new Set<string>()
    for (const [path, item] of Object.entries(admin.paths)) {
      assert.match(path, /^\/admin\/v1\//)
      for (const [method, op] of Object.entries(item)) {
        if (method === "parameters") continue
        assert.include(["get", "post", "delete", "patch"], method)
        assert.isFalse(ids.has(op.operationId as string))
        ids.add(op.operationId as string)
      }
      const named = [...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1])
      const declared = ((item.parameters ?? []) as unknown as Array<{ name: string }>).map((p) => p.name)
      assert.deepStrictEqual(declared, named, path)
    }
    // 18, resetFactors (DELETE /users/{user}/mfa), the five of /scopes, the review's four actions
    // and three owner endpoints, and the three on registration tokens
    assert.strictEqual(ids.size, 34)
    assert.deepStrictEqual(
      (OpenApi.adminDocument({ server: "http://127.0.0.1:9090/" }) as { servers: unknown }).servers,
      [{ url: "http://127.0.0.1:9090" }]
    )
    // the request bodies refuse unknown fields, as the route does
    const create = resolveIn(admin, "#/components/schemas/CreateApplication") as Json
    assert.strictEqual(create.additionalProperties, false)
  })

  it.effect("every answer of the admin API to representative requests is documented with its headers", () =>
    Effect.gen(function* () {
      const { app } = yield* newApp()
      const { user } = yield* newUser("openapi-user")
      const base = AdminApi.basePath
      const cases: Array<[string, Http.HttpRequest]> = [
        ["list apps", adminRequest("GET", `${base}/applications`)],
        ["create app", adminRequest("POST", `${base}/applications`, { name: "A", redirect_uris: [cb] })],
        ["bad app", adminRequest("POST", `${base}/applications`, { name: "A", redirect_uris: ["x"] })],
        ["unknown field", adminRequest("POST", `${base}/applications`, { name: "A", colour: 1 })],
        ["not json", adminRequest("POST", `${base}/applications`, "{")],
        [
          "text",
          {
            ...adminRequest("POST", `${base}/applications`, "x"),
            headers: { authorization: `Bearer ${adminToken}`, "content-type": "text/plain" }
          }
        ],
        ["too big", adminRequest("POST", `${base}/applications`, "x".repeat(Http.maxBodyBytes + 1))],
        ["no token", adminRequest("GET", `${base}/applications`, undefined, { headers: {} })],
        ["wrong method", adminRequest("PUT", `${base}/applications`)],
        ["get app", adminRequest("GET", `${base}/applications/${app.appKey}`)],
        ["unknown app", adminRequest("GET", `${base}/applications/nope`)],
        ["patch app", adminRequest("PATCH", `${base}/applications/${app.appKey}`, { name: "B" })],
        ["rotate", adminRequest("POST", `${base}/applications/${app.appKey}/secret`, { grace_seconds: 60 })],
        ["rotate empty", adminRequest("POST", `${base}/applications/${app.appKey}/secret`)],
        [
          "revoke subject",
          adminRequest("DELETE", `${base}/applications/${app.appKey}/subjects/dev-1/tokens`)
        ],
        ["no consent", adminRequest("DELETE", `${base}/applications/${app.appKey}/consents/${user.userId}`)],
        ["list users", adminRequest("GET", `${base}/users`)],
        [
          "create user",
          adminRequest("POST", `${base}/users`, { username: "new-one", password: "long enough" })
        ],
        [
          "taken",
          adminRequest("POST", `${base}/users`, { username: "openapi-user", password: "long enough" })
        ],
        ["get user", adminRequest("GET", `${base}/users/${user.userId}`)],
        ["disable", adminRequest("PATCH", `${base}/users/${user.userId}`, { disabled: true })],
        ["consents", adminRequest("GET", `${base}/users/${user.userId}/consents`)],
        [
          "audit",
          adminRequest("GET", `${base}/audit`, undefined, { query: "limit=5&type=application_created" })
        ],
        ["bad audit", adminRequest("GET", `${base}/audit`, undefined, { query: "limit=0" })],
        [
          "create public app",
          adminRequest("POST", `${base}/applications`, { name: "P", redirect_uris: [cb], public: true })
        ],
        [
          "patch to public",
          adminRequest("PATCH", `${base}/applications/${app.appKey}`, {
            public: true,
            grant_types: ["authorization_code"]
          })
        ],
        [
          "patch to confidential",
          adminRequest("PATCH", `${base}/applications/${app.appKey}`, { public: false })
        ],
        ["list keys", adminRequest("GET", `${base}/keys`)],
        ["rotate key", adminRequest("POST", `${base}/keys/rotate`, { algorithm: "RS256" })],
        ["rotate key empty", adminRequest("POST", `${base}/keys/rotate`)],
        ["bad algorithm", adminRequest("POST", `${base}/keys/rotate`, { algorithm: "HS256" })],
        ["openapi", adminRequest("GET", `${base}/openapi.json`)],
        ["delete user", adminRequest("DELETE", `${base}/users/${user.userId}`)],
        ["delete app", adminRequest("DELETE", `${base}/applications/${app.appKey}`)]
      ]
      const statuses = new Set<number>()
      for (const [label, req] of cases) {
        const res = yield* call(req)
        statuses.add(res.status)
        assertDocumentedIn(
          admin,
          templateOf(req.path),
          req.method === "PUT" ? "get" : req.method.toLowerCase(),
          res,
          label
        )
      }
      const users = yield* UserStore
      const down = yield* call(adminRequest("GET", `${base}/users`)).pipe(
        Effect.provideService(UserStore, {
          ...users,
          list: () => Effect.fail(new StorageError({ message: "x" }))
        })
      )
      const defect = yield* call(adminRequest("GET", `${base}/users`)).pipe(
        Effect.provideService(UserStore, { ...users, list: () => Effect.die("boom") })
      )
      for (const res of [down, defect]) {
        statuses.add(res.status)
        assertDocumentedIn(admin, `${base}/users`, "get", res, `status ${res.status}`)
      }
      assert.sameMembers([...statuses], [200, 201, 400, 401, 404, 405, 409, 413, 415, 500, 503])
    }).pipe(Effect.provide(Audited()))
  )
})
