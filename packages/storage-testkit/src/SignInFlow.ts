/**
 * A browser sign-in through the core's pages (`Interaction.handle`) over a storage layer, for an
 * adapter's tests to count what each of its four requests costs the database.
 */
import {
  Accounts,
  Admin,
  Audit,
  AuditStore,
  type Interaction,
  Metadata,
  type StorageError,
  type Stores
} from "@latchkey/core"
import { Effect, Layer } from "effect"
import { formOf, pageBrowser, pageServices as services } from "./internal/pages.js"

/**
 * What each request of a browser sign-in counted, in order: the authorize request, the sign-in
 * form with a wrong password then with the right one, the consent page and form.
 */
export interface SignInCounts {
  /** The authorize request, answered with the sign-in page. */
  readonly authorizeGet: number
  /** The sign-in form with a wrong password, answered with the sign-in page again. */
  readonly wrongPassword: number
  /** The sign-in form, answered with the redirect back to the authorize request. */
  readonly signInPost: number
  /** The authorize request again, answered with the consent page. */
  readonly consentGet: number
  /** The consent form's Allow, answered with the redirect carrying the code. */
  readonly consentPost: number
}

type SignInRequest = keyof SignInCounts

const cb = "https://app.example/cb"

const ticketOf = (view: Interaction.View): Record<string, string> => {
  if (view._tag !== "SignIn" && view._tag !== "Consent") throw new Error(`no form on ${view._tag}`)
  return { txn: view.ticket.txn, csrf_token: view.ticket.csrf }
}

/**
 * Sign a new user in to a new application over `storage` (with its audit store as the audit
 * log), from the authorize request to the redirect carrying the code (a wrong password tried
 * first; its `signin_failed`, `signin_succeeded` and `consent_granted` events checked stored), and
 * answer what
 * `counter()` (a running count the caller keeps, e.g. of COMMIT statements) grew by during each
 * request. Fails unless every request answers as a browser sign-in expects.
 */
export const signInCounts = <E>(
  storage: Layer.Layer<Stores.Stores | AuditStore.AuditStore, E>,
  counter: () => number
): Effect.Effect<SignInCounts, E | StorageError.StorageError | Error> =>
  Effect.gen(function* () {
    const { app } = yield* Admin.createApplication({
      name: "Sign-in",
      redirectUris: [cb],
      scope: "read",
      grantTypes: ["authorization_code"]
    })
    const username = `user-${crypto.randomUUID()}`
    const user = yield* Accounts.createUser(username, "correct horse battery")
    const query = formOf({ response_type: "code", client_id: app.appKey, redirect_uri: cb, state: "s" })
    const browser = pageBrowser()
    const counts: Partial<Record<SignInRequest, number>> = {}
    const send = (name: SignInRequest, page: "authorize" | "login", method: string, q: string, body = "") =>
      Effect.gen(function* () {
        const before = counter()
        const view = yield* browser(Metadata.paths[page], method, q, body)
        counts[name] = counter() - before
        return view
      })
    const signInPage = yield* send("authorizeGet", "authorize", "GET", query)
    const refused = yield* send(
      "wrongPassword",
      "login",
      "POST",
      "",
      formOf({ ...ticketOf(signInPage), username, password: "wrong horse battery" })
    )
    if (refused._tag !== "SignIn" || refused.status !== 400) {
      return yield* Effect.fail(new Error(`a wrong password answered ${refused._tag}`))
    }
    const signedIn = yield* send(
      "signInPost",
      "login",
      "POST",
      "",
      formOf({ ...ticketOf(refused), username, password: "correct horse battery" })
    )
    if (signedIn._tag !== "Redirect")
      return yield* Effect.fail(new Error(`sign-in answered ${signedIn._tag}`))
    const consentPage = yield* send("consentGet", "authorize", "GET", query)
    const approved = yield* send(
      "consentPost",
      "authorize",
      "POST",
      query,
      formOf({ ...ticketOf(consentPage), decision: "allow" })
    )
    if (approved._tag !== "Redirect" || !approved.location.startsWith(`${cb}?code=`)) {
      return yield* Effect.fail(new Error(`consent answered ${JSON.stringify(approved)}`))
    }
    // Every audit event of the sign-in stored, each with its change
    const trail = yield* Effect.flatMap(AuditStore.AuditStore, (audit) => audit.tail({ limit: 1000 }))
    const types = trail.filter((e) => e.userId === user.userId).map((e) => e.type)
    const expected = ["signin_failed", "signin_succeeded", "consent_granted"]
    if (JSON.stringify(types) !== JSON.stringify(expected)) {
      return yield* Effect.fail(new Error(`the audit trail of the sign-in is ${JSON.stringify(types)}`))
    }
    return counts as SignInCounts
  }).pipe(Effect.provide(Layer.mergeAll(storage, Layer.provide(Audit.layer, storage), services)))
