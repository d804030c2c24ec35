/**
 * D15: a consent withdrawal that commits between `Authorize.approve`'s consent check (or grant) and
 * its code or token write stops what approve issues. The withdrawal is pinned there by a consent
 * store whose `find` (the check) or `grant` runs it right after answering.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import * as Scope from "../src/model/Scope.js"
import * as Authorize from "../src/oauth/Authorize.js"
import { sha256 } from "../src/services/Digest.js"
import { CodeStore } from "../src/storage/CodeStore.js"
import { ConsentStore } from "../src/storage/ConsentStore.js"
import { TokenStore } from "../src/storage/TokenStore.js"
import { cb, form, newApp, newUser, TestLayer, token } from "./fixtures.js"

const read = Either.getOrThrow(Scope.parse("read"))

for (const step of ["find", "grant"] as const) {
  const when = step === "find" ? "after the consent check" : "after the consent grant"
  describe(`a withdrawal committed ${when}, before approve's write`, () => {
    /** Approve `response_type` for a fresh user with the withdrawal pinned after `step`. */
    const approveRacing = (responseType: "code" | "token") =>
      Effect.gen(function* () {
        const { app, basic } = yield* newApp()
        const { user } = yield* newUser()
        const consents = yield* ConsentStore
        // "find": the consent stands before approve, which only checks it
        if (step === "find") yield* consents.grant(user.userId, app.appKey, read, 0)
        const withdrawn: Array<boolean> = []
        const withdraw = consents
          .withdraw(user.userId, app.appKey, 1)
          .pipe(Effect.map((w) => withdrawn.push(w)))
        const racing =
          step === "find"
            ? { ...consents, find: (u: string, a: string) => Effect.tap(consents.find(u, a), () => withdraw) }
            : {
                ...consents,
                grant: (u: string, a: string, scope: Scope.ScopeSet, now: number) =>
                  Effect.zipRight(consents.grant(u, a, scope, now), withdraw)
              }
        const req = yield* Authorize.validate(
          form({
            response_type: responseType,
            client_id: app.appKey,
            redirect_uri: cb,
            state: "s",
            scope: "read"
          })
        )
        const location = yield* Authorize.approve(req, user.userId).pipe(
          Effect.provideService(ConsentStore, racing)
        )
        assert.deepStrictEqual(withdrawn, [true], "the withdrawal ran once and removed the consent")
        return { app, basic, user, location: new URL(location) }
      })

    it.effect("the code approve issued does not redeem: invalid_grant, and it stays unused", () =>
      Effect.gen(function* () {
        const { basic, location } = yield* approveRacing("code")
        const code = location.searchParams.get("code") as string
        const res = yield* token({ grant_type: "authorization_code", code, redirect_uri: cb }, basic)
        assert.deepStrictEqual(
          [res.status, res.json?.error, res.json?.error_description],
          [400, "invalid_grant", "authorization code is invalid or expired"]
        )
        const stored = yield* Effect.flatMap(CodeStore, (codes) => Effect.flatMap(sha256(code), codes.find))
        assert.isNull(Option.getOrThrow(stored).usedAt)
      }).pipe(Effect.provide(TestLayer()))
    )

    it.effect("the implicit answer is access_denied, and no token of the user is active", () =>
      Effect.gen(function* () {
        const { app, user, location } = yield* approveRacing("token")
        const frag = new URLSearchParams(location.hash.slice(1))
        assert.deepStrictEqual(
          [frag.get("error"), frag.get("state"), frag.get("access_token")],
          ["access_denied", "s", null]
        )
        const unrevoked = yield* Effect.flatMap(TokenStore, (t) =>
          t.revokeSubject({ appKey: app.appKey, userId: user.userId }, 2)
        )
        assert.strictEqual(unrevoked, 0)
      }).pipe(Effect.provide(TestLayer()))
    )
  })
}
