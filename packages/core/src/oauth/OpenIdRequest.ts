/**
 * The OpenID Connect part of an authorization request (OpenID Connect Core 1.0 §3.1.2.1):
 * which requests it applies to, and what `prompt` and `max_age` ask of the sign-in.
 */

import type { Prompt } from "./requests/AuthorizeQuery.js"
import * as Form from "./requests/Form.js"

/** The OpenID Connect parameters of a validated OpenID request. */
export interface OpenIdRequest {
  /** The distinct `prompt` values; empty when none was sent. */
  readonly prompt: ReadonlyArray<Prompt>
  /** `max_age` in seconds, or null when none was sent. */
  readonly maxAge: number | null
  /** `nonce` as sent, or null. */
  readonly nonce: string | null
  /** `acr_values` as sent (space-separated), or null. */
  readonly acrValues: string | null
}

/**
 * Whether a request is an OpenID request: the code flow with `openid` in its scope (the scope
 * sent, or the registered scopes when none is sent; either lies within the registered ones).
 * The implicit flow stays OAuth 2.0 whatever its scope: it issues no ID token.
 */
export const isOpenId = (responseType: "code" | "token", scope: ReadonlyArray<string>): boolean =>
  responseType === "code" && scope.includes("openid")

/**
 * Whether the request asks for a new sign-in whatever the session: `prompt=login`,
 * `prompt=select_account` (the pages sign in one account, so choosing one is signing in) or
 * `max_age=0`.
 */
const forcesSignIn = (req: OpenIdRequest): boolean =>
  req.prompt.includes("login") || req.prompt.includes("select_account") || req.maxAge === 0

/**
 * Whether the user must sign in (again) before this request goes on: nobody is signed in, the
 * request forces a sign-in, or the sign-in is older than `max_age` seconds at `now`.
 */
export const needsSignIn = (req: OpenIdRequest, authenticatedAt: number | null, now: number): boolean =>
  authenticatedAt === null || forcesSignIn(req) || (req.maxAge !== null && now - authenticatedAt > req.maxAge)

/** Whether the request asks for the consent page even when the scope was already allowed. */
export const forcesConsent = (req: OpenIdRequest): boolean => req.prompt.includes("consent")

/** Whether the request forbids every page (`prompt=none`). */
export const showsNoPage = (req: OpenIdRequest): boolean => req.prompt.includes("none")

const signInPrompts: ReadonlySet<string> = new Set<Prompt>(["login", "select_account"])

/**
 * The raw query of an OpenID request once its user signed in during it: `login` and
 * `select_account` gone from `prompt` (the parameter gone when nothing is left) and `max_age`
 * gone, so the flow goes on to consent instead of asking for the sign-in again. Every other
 * part is kept as written.
 */
export const afterSignIn = (rawQuery: string): string =>
  rawQuery
    .split("&")
    .flatMap((part) => {
      const name = Form.partName(part)
      if (name === "max_age") return []
      if (name !== "prompt") return [part]
      const value = Form.parse(part)
      if (value._tag === "Left") return [part]
      const kept = (value.right.prompt ?? "").split(" ").filter((v) => v !== "" && !signInPrompts.has(v))
      return kept.length === 0 ? [] : [`prompt=${encodeURIComponent(kept.join(" "))}`]
    })
    .join("&")
