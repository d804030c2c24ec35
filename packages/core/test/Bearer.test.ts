import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import type * as Http from "../src/http/Http.js"
import * as Scope from "../src/model/Scope.js"
import * as Bearer from "../src/oauth/Bearer.js"
import { newApp, post, TestLayer, token } from "./fixtures.js"

const verify = (h: string | undefined, scope = "") =>
  Effect.either(Bearer.verify(h, Either.getOrThrow(Scope.parse(scope))))

describe("Bearer.verify (RFC 6750)", () => {
  it.effect("accepts an active token and names its client, open_id and scope", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp()
      const t = (yield* token({ grant_type: "client_credentials", open_id: "dev-1" }, basic)).json
        ?.access_token as string
      const r = yield* verify(`Bearer ${t}`, "read")
      assert.deepStrictEqual(
        Either.map(r, (p) => [p.clientId, p.openId, Scope.format(p.scope)]),
        Either.right([app.appKey, "dev-1", "read,write"])
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "missing header is invalid_request; unknown or revoked tokens are invalid_token; a missing scope is insufficient_scope",
    () =>
      Effect.gen(function* () {
        const { basic } = yield* newApp()
        const t = (yield* token({ grant_type: "client_credentials" }, basic)).json?.access_token as string
        const err = (r: Either.Either<unknown, { readonly _tag: string }>) =>
          Either.isLeft(r) ? ((r.left as { readonly error?: string }).error ?? r.left._tag) : "ok"
        assert.strictEqual(err(yield* verify(undefined)), "invalid_request")
        assert.strictEqual(err(yield* verify("Bearer nope")), "invalid_token")
        assert.strictEqual(err(yield* verify(`Bearer ${t}`, "admin")), "insufficient_scope")
        yield* post("/oauth2/oauth2/revoke", { token: t }, basic)
        assert.strictEqual(err(yield* verify(`Bearer ${t}`)), "invalid_token")
      }).pipe(Effect.provide(TestLayer()))
  )
})

describe("Bearer.admit (RFC 6750 §3)", () => {
  const scope = (s: string) => Either.getOrThrow(Scope.parse(s))
  const refusal = (
    r: Either.Either<Bearer.Principal, { status: number; headers: Record<string, string> }>
  ) => {
    assert.isTrue(Either.isLeft(r))
    const res = (r as Either.Left<{ status: number; headers: Record<string, string> }, Bearer.Principal>).left
    return [res.status, res.headers["www-authenticate"]] as const
  }

  it.effect("answers each refusal with its status and challenge, and admits a valid token", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const t = (yield* token({ grant_type: "client_credentials" }, basic)).json?.access_token as string
      assert.deepStrictEqual(refusal(yield* Bearer.admit([], scope(""), "api")), [401, 'Bearer realm="api"'])
      assert.deepStrictEqual(refusal(yield* Bearer.admit(["Basic abc"], scope(""))), [
        401,
        'Bearer realm="latchkey"'
      ])
      assert.deepStrictEqual(refusal(yield* Bearer.admit([`Bearer ${t}`, `Bearer ${t}`], scope(""))), [
        400,
        'Bearer realm="latchkey", error="invalid_request"'
      ])
      const [status, unknown] = refusal(yield* Bearer.admit(["Bearer nope"], scope("")))
      assert.strictEqual(status, 401)
      assert.match(unknown as string, /^Bearer realm="latchkey", error="invalid_token", error_description="/)
      const [forbidden, lacking] = refusal(yield* Bearer.admit([`Bearer ${t}`], scope("admin")))
      assert.strictEqual(forbidden, 403)
      assert.match(lacking as string, /error="insufficient_scope".*scope="admin"$/)
      const admitted = yield* Bearer.admit([`Bearer ${t}`], scope("read"))
      assert.isTrue(Either.isRight(admitted))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a refusal carries the code its challenge names as a value, none for a bare challenge", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const t = (yield* token({ grant_type: "client_credentials" }, basic)).json?.access_token as string
      for (const authorization of [[`Bearer ${t}`, `Bearer ${t}`], ["Bearer nope"], [`Bearer ${t}`], []]) {
        const admitted = yield* Bearer.admit(authorization, scope(authorization.length === 1 ? "admin" : ""))
        assert.isTrue(Either.isLeft(admitted))
        const res = (admitted as Either.Left<Http.HttpResponse, Bearer.Principal>).left
        const named = /error="([^"]*)"/.exec(res.headers["www-authenticate"] ?? "")
        assert.strictEqual(res.error, named?.[1])
      }
    }).pipe(Effect.provide(TestLayer()))
  )

  it("quotes challenge parameters with safe characters only", () => {
    assert.strictEqual(
      Bearer.challenge('re"al\\m\n', { error_description: "a\u0000b" }),
      'Bearer realm="realm", error_description="ab"'
    )
  })
})
