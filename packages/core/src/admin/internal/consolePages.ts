/**
 * What every answer of the console shares: its request value, pages, redirects and error pages,
 * and the checks of a posted form (its body, a cross-site post, the CSRF token of the cookie).
 */
import { Effect, Either, Option } from "effect"
import * as Http from "../../http/Http.js"
import * as ConsoleSession from "../../security/ConsoleSession.js"
import { type ConsoleAnswer, type ProblemReason, type SignedIn, ConsoleView as View } from "../ConsoleView.js"

/** A request to the console: the request value, and the origin the browser used (for the cross-site check). */
export interface ConsoleRequest extends Http.HttpRequest {
  readonly ownOrigin: string
}

const noStore = { "cache-control": "no-store" }

/** An answer with a page. */
export const page = (
  status: number,
  view: View,
  headers: Readonly<Record<string, string>> = {}
): ConsoleAnswer => ({
  status,
  headers: { ...noStore, ...headers },
  view: Option.some(view)
})

/** A 303 to `location`. */
export const seeOther = (
  location: string,
  headers: Readonly<Record<string, string>> = {}
): ConsoleAnswer => ({
  status: 303,
  headers: { ...noStore, location, ...headers },
  view: Option.none()
})

const statusOf: Readonly<Record<ProblemReason, number>> = {
  forbidden: 403,
  not_found: 404,
  bad_request: 400,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unavailable: 503
}

/** An error page. */
export const problem = (
  reason: ProblemReason,
  signedIn: Option.Option<SignedIn> = Option.none(),
  headers: Readonly<Record<string, string>> = {}
): ConsoleAnswer => page(statusOf[reason], View.Problem({ reason, signedIn }), headers)

/** Whether a form post comes from another site (Fetch Metadata, then `Origin`). */
export const crossSite = (req: ConsoleRequest): boolean => {
  const site = Http.header(req, "sec-fetch-site")
  if (site === null || (site !== undefined && site !== "same-origin" && site !== "none")) return true
  const origin = Http.header(req, "origin")
  // Referrer-Policy: no-referrer makes browsers send `Origin: null` on same-origin posts
  return origin !== undefined && origin !== "null" && origin !== req.ownOrigin
}

/** The form of a POST, once its body, origin and CSRF token are good; else the answer refusing it. */
export const readForm = (req: ConsoleRequest, visit: ConsoleSession.Visit) =>
  Effect.gen(function* () {
    const signedIn = yield* signedInOf(visit)
    const params = Http.readForm(req)
    if (Either.isLeft(params)) {
      const { status } = params.left
      const reason: ProblemReason =
        status === 413 ? "payload_too_large" : status === 415 ? "unsupported_media_type" : "bad_request"
      return Either.left(problem(reason, signedIn))
    }
    const form = params.right
    if (crossSite(req) || !(yield* ConsoleSession.csrfMatches(visit.id, form.csrf_token))) {
      return Either.left(problem("forbidden", signedIn))
    }
    return Either.right(form)
  })

/** The signed-in operator of a visit, as the pages show them. */
export const signedInOf = (visit: ConsoleSession.Visit) =>
  Option.match(visit.signedIn, {
    onNone: () => Effect.succeed(Option.none<SignedIn>()),
    onSome: ({ operator }) =>
      Effect.map(ConsoleSession.csrfToken(visit.id), (csrf) =>
        Option.some({ operator: operator.name, role: operator.role, csrf })
      )
  })
