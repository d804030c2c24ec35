/**
 * What the tests of OpenID requests at the authorize endpoint share: an application registered
 * for `openid`, its query, following the pages' redirects and reading the code they issued.
 */
import { assert } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import * as Digest from "../src/services/Digest.js"
import { CodeStore } from "../src/storage/CodeStore.js"
import { type Answer, type Browser, signIn, ticketOf, view } from "./browser.js"
import { cb, form, issuer, newApp, newUser } from "./fixtures.js"

/** An application registered for `openid`, a user, and an OpenID code request with state. */
export const openIdSetup = (extra: Record<string, string> = {}, registered = "openid,read") =>
  Effect.gen(function* () {
    const { app } = yield* newApp({ scope: registered })
    const { user, password } = yield* newUser()
    const query = form({
      response_type: "code",
      client_id: app.appKey,
      redirect_uri: cb,
      state: "s-1",
      scope: "openid read",
      ...extra
    })
    return { app, user, password, query }
  })

/** The query of a same-origin redirect back to the authorize endpoint. */
export const queryOf = (a: Answer): string => new URL(view(a, "Redirect").location, issuer).search.slice(1)

/** The parameters of a redirect to the client. */
export const clientRedirect = (a: Answer): URLSearchParams => {
  const r = view(a, "Redirect")
  assert.isTrue(r.location.startsWith(cb), r.location)
  return new URL(r.location).searchParams
}

/** Assert the answer is an error redirect to the client with `error`, carrying state and iss. */
export const assertErrorRedirect = (a: Answer, error: string, state = "s-1") => {
  const p = clientRedirect(a)
  assert.deepStrictEqual(
    [p.get("error"), p.get("state"), p.get("iss"), p.get("code")],
    [error, state, issuer, null]
  )
  assert.strictEqual(view(a, "Redirect").error, error)
}

/** The stored code a redirect to the client carries. */
export const codeOf = (a: Answer) =>
  Effect.gen(function* () {
    const value = clientRedirect(a).get("code")
    assert.isNotNull(value, "a code")
    const found = yield* Effect.flatMap(CodeStore, (codes) =>
      Effect.flatMap(Digest.sha256(value as string), codes.find)
    )
    return Option.getOrThrow(found)
  })

/** Allow on the consent page `consent`. */
export const allow = (b: Browser, consent: Answer) =>
  b.post("authorize", { ...ticketOf(consent), decision: "allow" })

/**
 * Sign in at `at` seconds (TestClock) and allow a plain `openid read` request, so the user is
 * signed in with consent; returns the sign-in time.
 */
export const signedInWithConsent = (
  b: Browser,
  query: string,
  username: string,
  password: string,
  at = 1000
) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(at * 1000)
    const next = yield* signIn(b, query, username, password)
    const consent = yield* b.get(queryOf(next))
    view(consent, "Consent")
    clientRedirect(yield* allow(b, consent))
    return at
  })
