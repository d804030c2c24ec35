/**
 * A browser for the pages' route (`Interaction.handle`): it keeps the cookies the answers set
 * and sends them back, as the tests of the authorize flow and the consents page drive it.
 */
import { assert } from "@effect/vitest"
import { Clock, Effect } from "effect"
import * as Paths from "../src/http/Paths.js"
import * as Interaction from "../src/interaction/Interaction.js"
import * as Metadata from "../src/oauth/Metadata.js"
import * as Totp from "../src/security/Totp.js"
import { cb, form, newApp, newUser } from "./fixtures.js"

/** The path of a page. */
const pathOf = (page: Interaction.Page | Interaction.PasskeyPage): string => {
  switch (page) {
    case "consents":
      return Interaction.consentsPath
    case "account":
      return Interaction.accountPath
    case "passkeyChallenge":
      return Paths.passkeys.challenge
    case "passkeyLogin":
      return Paths.passkeys.login
    case "passkeys":
      return Paths.passkeys.account
    default:
      return Metadata.paths[page]
  }
}

/** What the route answers. */
export type Answer = Interaction.PageResponse

/** A browser: keeps the session cookie the answers set, and sends it back. */
export class Browser {
  cookie: string | undefined
  device: string | undefined
  constructor(readonly extra: Record<string, string> = {}) {}

  keep(a: Answer): Answer {
    if (a.setCookie !== null) this.cookie = a.setCookie.split(";")[0]
    if (a.deviceCookie !== undefined && a.deviceCookie !== null) this.device = a.deviceCookie.split(";")[0]
    return a
  }

  cookies(): string | undefined {
    const all = [this.cookie, this.device].filter((c) => c !== undefined)
    return all.length === 0 ? undefined : all.join("; ")
  }

  request(
    page: Interaction.Page | Interaction.PasskeyPage,
    method: string,
    query: string,
    body = "",
    headers: Record<string, string> = {},
    basePath = ""
  ) {
    return Effect.map(
      Interaction.handle({
        method,
        path: pathOf(page),
        query,
        headers: {
          ...(this.cookies() !== undefined ? { cookie: this.cookies() as string } : {}),
          ...(method === "POST" ? { "content-type": "application/x-www-form-urlencoded" } : {}),
          ...this.extra,
          ...headers
        },
        body,
        remoteAddress: "192.0.2.1",
        basePath,
        ownOrigin: "http://127.0.0.1:8080"
      }),
      (a) => this.keep(a)
    )
  }

  get(query: Record<string, string> | string, headers: Record<string, string> = {}) {
    return this.request("authorize", "GET", typeof query === "string" ? query : form(query), "", headers)
  }

  post(
    page: Interaction.Page | Interaction.PasskeyPage,
    fields: Record<string, string> | string,
    headers: Record<string, string> = {},
    query = ""
  ) {
    return this.request(page, "POST", query, typeof fields === "string" ? fields : form(fields), headers)
  }

  /** GET the account page with this query. */
  account(query = "", headers: Record<string, string> = {}) {
    return this.request("account", "GET", query, "", headers)
  }

  /** GET the consents page with this query. */
  consents(query = "", headers: Record<string, string> = {}) {
    return this.request("consents", "GET", query, "", headers)
  }
}

/** The answer's view, asserted to be a `tag`. */
export const view = <T extends Interaction.View["_tag"]>(a: Answer, tag: T) => {
  assert.strictEqual(a.view._tag, tag, JSON.stringify(a.view))
  return a.view as Extract<Interaction.View, { _tag: T }>
}
/** The hidden fields of the form on the answer's page. */
export const ticketOf = (a: Answer) => {
  const v = a.view
  if (
    v._tag !== "SignIn" &&
    v._tag !== "Consent" &&
    v._tag !== "ConsentsSignIn" &&
    v._tag !== "Consents" &&
    v._tag !== "Account"
  )
    throw new Error(`no form on ${v._tag}`)
  return { txn: v.ticket.txn, csrf_token: v.ticket.csrf }
}
/** The answer's error page. */
export const errorOf = (a: Answer) => view(a, "ErrorPage")

/** An application, a user, and the authorize query of a code request with state. */
export const setup = (extra: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const { app } = yield* newApp({ scope: "read,write" })
    const { user, password } = yield* newUser()
    const query = form({
      response_type: "code",
      client_id: app.appKey,
      redirect_uri: cb,
      state: "s-1",
      ...extra
    })
    return { app, user, password, query }
  })

/** Sign in from the sign-in page of `query`; returns the login POST's answer. */
export const signIn = (b: Browser, query: string, username: string, password: string) =>
  Effect.gen(function* () {
    const page = yield* b.get(query)
    return yield* b.post("login", { ...ticketOf(page), username, password })
  })

/** Sign in with the account page's own form; returns its POST's answer. */
export const accountSignIn = (b: Browser, username: string, password: string) =>
  Effect.gen(function* () {
    const page = yield* b.account()
    return yield* b.post("account", { ...ticketOf(page), action: "signin", username, password })
  })

/** The code an authenticator app shows now for `secret` (base32, as the pages show it). */
export const appCode = (secret: string) =>
  Effect.gen(function* () {
    const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    return yield* Totp.codeAt(Totp.fromBase32(secret) ?? new Uint8Array(), Totp.stepAt(now))
  })

/** The second sign-in step's form of a Factor page, with `code`. */
export const factorForm = (a: Answer, code: string): Record<string, string> => {
  const v = view(a, "Factor")
  const fields: Record<string, string> = Object.fromEntries(v.fields)
  return { txn: v.ticket.txn, csrf_token: v.ticket.csrf, ...fields, code }
}
