import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Layer, Logger, Option } from "effect"
import * as Http from "../src/http/Http.js"
import * as Authorize from "../src/oauth/Authorize.js"
import * as BasicAuth from "../src/oauth/requests/BasicAuth.js"
import * as Audit from "../src/security/Audit.js"
import * as Throttle from "../src/security/Throttle.js"
import * as Memory from "../src/storage/Memory.js"
import { cb, issueCode, newApp, newUser, TestLayer, token } from "./fixtures.js"

const errorCodes = new Set([
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "invalid_scope",
  "temporarily_unavailable"
])

const names = [
  "grant_type",
  "code",
  "redirect_uri",
  "username",
  "password",
  "open_id",
  "scope",
  "refresh_token",
  "client_id",
  "client_secret",
  "code_verifier",
  "token"
]

/** Collects every log line a program writes, to search it for secrets. */
const capture = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ message, annotations }) => {
    lines.push(JSON.stringify({ message, annotations: [...annotations] }))
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

describe("fuzzing the token and authorize endpoints", () => {
  it("thousands of random and mutated token requests: no 5xx, only RFC 6749 errors, no token without valid credentials, no secret logged", async () => {
    const logs = capture()
    const setup = Effect.gen(function* () {
      const { app, appSecret, basic } = yield* newApp()
      const { user, password } = yield* newUser("alice", "alice password 1")
      const code = yield* issueCode(app.appKey, user.userId)
      const rt = (yield* token({ grant_type: "client_credentials", open_id: "dev" }, basic)).json
        ?.refresh_token as string
      return { app, appSecret, basic, user, password, code, rt }
    })
    // lenient throttling, so the fuzzer keeps reaching the grants instead of the lockout
    const lenient = { ...Throttle.defaultPolicy, freeFailures: 1e9, addressFreeFailures: 1e9 }
    const services = Layer.mergeAll(
      TestLayer({}, lenient),
      Layer.provideMerge(Audit.layer, Memory.auditLayer),
      logs.layer
    )
    await Effect.runPromise(
      Effect.gen(function* () {
        const s = yield* setup
        const secrets = [s.appSecret, s.password, s.code, s.rt]
        const value = fc.oneof(
          fc.constantFrom(
            "client_credentials",
            "authorization_code",
            "password",
            "refresh_token",
            cb,
            s.code,
            s.rt,
            s.password,
            "alice",
            s.app.appKey,
            "read,write",
            "a".repeat(5000)
          ),
          fc.string({ unit: "binary", maxLength: 64 }),
          fc.string({ maxLength: 8 })
        )
        const grant = fc.constantFrom("client_credentials", "authorization_code", "password", "refresh_token")
        const params = fc
          .tuple(grant, fc.dictionary(fc.constantFrom(...names), value, { maxKeys: 5 }))
          .map(([g, rest]) => {
            // open_id and client_id are identifiers the caller chooses and are audited as such (a
            // failed client authentication records the App Key it named, as with Basic): keep
            // secrets out of them
            const p: Record<string, string> = { grant_type: g, ...rest }
            if (p.open_id !== undefined && secrets.includes(p.open_id)) p.open_id = "device-1"
            if (p.client_id !== undefined && secrets.includes(p.client_id)) p.client_id = s.app.appKey
            return p
          })
        const body = fc.oneof(
          params.map((p) => new URLSearchParams(p).toString()),
          fc.tuple(params, fc.string({ unit: "binary", maxLength: 12 }), fc.nat()).map(([p, junk, at]) => {
            const b = new URLSearchParams(p).toString()
            const i = b.length === 0 ? 0 : at % b.length
            return b.slice(0, i) + junk + b.slice(i)
          })
        )
        const auth = fc.oneof(
          { arbitrary: fc.constant(s.basic), weight: 6 },
          fc.constant(undefined),
          fc.string({ maxLength: 40 }),
          fc
            .string({ minLength: 1, maxLength: 20 })
            .map((x) => BasicAuth.encode({ appKey: s.app.appKey, appSecret: x }))
        )
        const type = fc.oneof(
          { arbitrary: fc.constant("application/x-www-form-urlencoded"), weight: 8 },
          fc.constantFrom(
            "application/x-www-form-urlencoded; charset=utf-8",
            "application/json",
            "text/plain",
            undefined
          )
        )
        const method = fc.oneof({ arbitrary: fc.constant("POST"), weight: 9 }, fc.constantFrom("GET", "PUT"))
        const path = fc.constantFrom(
          "/oauth2/oauth2/token",
          "/oauth2/oauth2/introspect",
          "/oauth2/oauth2/revoke"
        )
        const services = yield* Effect.context<Http.Requirements>()
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(method, path, body, auth, type, async (m, p, b, a, t) => {
              const headers: Record<string, string> = {}
              if (a !== undefined) headers.authorization = a
              if (t !== undefined) headers["content-type"] = t
              const req: Http.HttpRequest = {
                method: m,
                path: p,
                query: "",
                headers,
                body: b,
                remoteAddress: "198.51.100.1"
              }
              const res = await Effect.runPromise(
                Option.getOrThrow(Http.route(req)).pipe(Effect.provide(services), Effect.provide(logs.layer))
              )
              assert.isBelow(res.status, 500)
              if (res.status === 200 && p === "/oauth2/oauth2/token") {
                assert.strictEqual(a, s.basic, "a token was issued without valid client credentials")
              }
              if (res.status >= 400 && res.status !== 405 && res.status !== 413) {
                assert.isTrue(errorCodes.has(JSON.parse(res.body).error), res.body)
              }
            }),
            { numRuns: 3000 }
          )
        )
        const text = logs.lines.join("\n")
        for (const secret of secrets) assert.notInclude(text, secret)
      }).pipe(Effect.provide(services))
    )
  }, 60_000)

  it("random authorize queries never redirect anywhere but a registered URI", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const { app } = yield* newApp({ redirectUris: [cb, "http://127.0.0.1:9000/cb"] })
        const uri = fc.oneof(
          fc.constantFrom(
            cb,
            "http://127.0.0.1:9000/cb",
            `${cb}/`,
            "https://evil.example/cb",
            "//evil.example",
            cb.toUpperCase()
          ),
          fc.string({ maxLength: 30 }),
          fc.webUrl()
        )
        const query = fc
          .record(
            {
              response_type: fc.constantFrom("code", "token", "CODE", "code token", "", "x"),
              client_id: fc.oneof(fc.constant(app.appKey), fc.string({ maxLength: 10 })),
              redirect_uri: uri,
              state: fc.string({ unit: "binary", maxLength: 20 }),
              scope: fc.oneof(
                fc.constantFrom("read", "read,write", "admin", ""),
                fc.string({ maxLength: 10 })
              ),
              client_type: fc.constantFrom("PC", "Mobile", "pc", ""),
              code_challenge: fc.string({ maxLength: 50 })
            },
            { requiredKeys: [] }
          )
          .map((q) => new URLSearchParams(q).toString())
        const mutated = fc
          .tuple(query, fc.string({ unit: "binary", maxLength: 6 }), fc.nat())
          .map(([q, j, at]) => {
            const i = q.length === 0 ? 0 : at % q.length
            return q.slice(0, i) + j + q.slice(i)
          })
        const services = yield* Effect.context<Http.Requirements>()
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.oneof(query, mutated), async (q) => {
              const result = await Effect.runPromise(
                Effect.either(Authorize.validate(q)).pipe(Effect.provide(services))
              )
              const location = Either.match(result, {
                onLeft: (e) => (e._tag === "ErrorRedirect" ? e.location : null),
                onRight: (r) => r.redirectUri
              })
              if (location !== null) {
                assert.isTrue(
                  app.redirectUris.some(
                    (r) => location === r || location.startsWith(`${r}?`) || location.startsWith(`${r}#`)
                  ),
                  location
                )
              }
            }),
            { numRuns: 3000 }
          )
        )
      }).pipe(Effect.provide(TestLayer()))
    )
  }, 60_000)
})
