/**
 * What the operator console answers: a view for a binding to render (`ConsoleView`), or a redirect,
 * with its status and headers (`ConsoleAnswer`). Bindings render views as HTML; the core has
 * decided everything the page shows.
 */
import { Data, type Option } from "effect"
import type { Role } from "../model/Operator.js"

/** Why the sign-in form is shown again. */
export type SignInProblem = "bad_credentials" | "throttled"

/** Why the console refuses a request: its error page's reason. */
export type ProblemReason =
  | "forbidden"
  | "not_found"
  | "bad_request"
  | "method_not_allowed"
  | "payload_too_large"
  | "unsupported_media_type"
  | "unavailable"

/** An application as the applications view lists it. */
export interface AppRow {
  readonly appKey: string
  readonly name: string
  readonly public: boolean
  readonly createdAt: number
}

/** The operator signed in, as each signed-in page shows them, and the token of the page's forms. */
export interface SignedIn {
  readonly operator: string
  readonly role: Role
  readonly csrf: string
}

/** A secret the console has just rotated, shown once. */
export interface Rotated {
  readonly appKey: string
  readonly name: string
  readonly appSecret: string
}

/** A page of the console. */
export type ConsoleView = Data.TaggedEnum<{
  /** The sign-in form; with the name typed before and why it was refused, when it was. */
  SignIn: {
    readonly csrf: string
    readonly username: string
    readonly problem: Option.Option<SignInProblem>
    /** Seconds to wait when throttled. */
    readonly retryAfter: Option.Option<number>
  }
  /** The applications, found by `query`; `canRotate` when the operator's role may rotate secrets. */
  Apps: {
    readonly signedIn: SignedIn
    readonly query: string
    readonly apps: ReadonlyArray<AppRow>
    readonly canRotate: boolean
    readonly rotated: Option.Option<Rotated>
  }
  /** An error page. */
  Problem: {
    readonly reason: ProblemReason
    readonly signedIn: Option.Option<SignedIn>
  }
}>

/** Makers and matchers of `ConsoleView`. */
export const ConsoleView = Data.taggedEnum<ConsoleView>()

/** The console's answer: a status, headers, and the page to render (none for a redirect). */
export interface ConsoleAnswer {
  readonly status: number
  /** Lowercase names: `location`, `set-cookie`, `retry-after`, `allow`. */
  readonly headers: Readonly<Record<string, string>>
  readonly view: Option.Option<ConsoleView>
}
