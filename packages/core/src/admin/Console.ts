/**
 * The operator console on the admin listener (`Paths.console`): request values in, `ConsoleAnswer`s
 * out. Operators sign in with their own accounts (`OperatorStore`, throttled like the sign-in page),
 * every form is checked for a cross-site post and for the CSRF token of the browser's cookie
 * (`ConsoleSession`), and what an operator may do is asked of `Operator.may` alone. The console's
 * changes are the admin API's operations (`Admin`), recorded with the actor `operator:<name>`.
 */
import { Effect, Either, Option } from "effect"
import * as Http from "../http/Http.js"
import * as Paths from "../http/Paths.js"
import { isPublic } from "../model/Application.js"
import { type Action, actorOf, may } from "../model/Operator.js"
import * as Form from "../oauth/requests/Form.js"
import * as Audit from "../security/Audit.js"
import * as ConsoleSession from "../security/ConsoleSession.js"
import { sha256 } from "../services/Digest.js"
import { OperatorStore } from "../storage/OperatorStore.js"
import * as Admin from "./Admin.js"
import type { Requirements as AdminRequirements } from "./AdminApi.js"
import { type ConsoleAnswer, type Rotated, type SignedIn, ConsoleView as View } from "./ConsoleView.js"
import {
  type ConsoleRequest,
  page,
  problem,
  readForm,
  seeOther,
  signedInOf
} from "./internal/consolePages.js"
import { signIn } from "./internal/consoleSignIn.js"

export {
  type AppRow,
  type ConsoleAnswer,
  ConsoleView,
  type ProblemReason,
  type Rotated,
  type SignedIn,
  type SignInProblem
} from "./ConsoleView.js"
export type { ConsoleRequest } from "./internal/consolePages.js"

/** What the console needs: the admin API's services. */
export type Requirements = AdminRequirements

/** Whether a path is the console's (the binding hands these to `handle`). */
export const owns = (path: string): boolean =>
  path === Paths.console.root || path.startsWith(`${Paths.console.root}/`)

const queryOf = (query: string): string =>
  Either.match(Form.parse(query), { onLeft: () => "", onRight: (p) => (p.q ?? "").trim().slice(0, 200) })

/** The applications whose name or App Key contains `query` (case-insensitive), oldest first. */
const appsMatching = (query: string) =>
  Effect.map(Admin.listApplications, (apps) => {
    const q = query.toLowerCase()
    return apps
      .filter((a) => q === "" || a.name.toLowerCase().includes(q) || a.appKey.toLowerCase().includes(q))
      .map((a) => ({
        appKey: a.appKey,
        name: a.name,
        public: isPublic(a),
        createdAt: a.createdAt
      }))
  })

/** The applications view. */
const appsPage = (signedIn: SignedIn, query: string, rotated: Option.Option<Rotated> = Option.none()) =>
  Effect.map(appsMatching(query), (apps) =>
    page(
      200,
      View.Apps({ signedIn, query, apps, canRotate: may(signedIn.role, "manage_applications"), rotated })
    )
  )

/** Run `effect` with its audit events recorded as the operator's (`operator:<name>`), from this request. */
const asOperator = <A, E, R>(req: ConsoleRequest, operator: string | null, effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, Audit.RequestInfo, {
    requestId: req.requestId ?? null,
    address: req.remoteAddress ?? null,
    actor: operator === null ? null : actorOf(operator)
  })

/** A signed-in request for `action`: the signed-in operator, or the answer refusing it (sign in first, or 403). */
const allowed = (visit: ConsoleSession.Visit, action: Action, get: boolean) =>
  Effect.map(signedInOf(visit), (signedIn) =>
    Option.isNone(signedIn)
      ? Either.left(get ? seeOther(Paths.console.signIn) : problem("forbidden"))
      : may(signedIn.value.role, action)
        ? Either.right(signedIn.value)
        : Either.left(problem("forbidden", signedIn))
  )

/** Rotate an application's secret (`Admin.rotateSecret`, as the admin API and the CLI) and show the new one once. */
const rotate = (req: ConsoleRequest, visit: ConsoleSession.Visit) =>
  Effect.gen(function* () {
    const who = yield* allowed(visit, "manage_applications", false)
    if (Either.isLeft(who)) return who.left
    const form = yield* readForm(req, visit)
    if (Either.isLeft(form)) return form.left
    const appKey = form.right.app_key ?? ""
    const signedIn = who.right
    const rotated = yield* asOperator(req, signedIn.operator, Admin.rotateSecret(appKey)).pipe(
      Effect.map(Either.right),
      Effect.catchTags({
        NotFound: () => Effect.succeed(Either.left(problem("not_found", Option.some(signedIn)))),
        InvalidField: () => Effect.succeed(Either.left(problem("bad_request", Option.some(signedIn))))
      })
    )
    if (Either.isLeft(rotated)) return rotated.left
    const app = yield* Effect.option(Admin.findApplication(appKey))
    const name = Option.match(app, { onNone: () => appKey, onSome: (a) => a.name })
    const shown = { appKey, name, appSecret: rotated.right.appSecret }
    return yield* appsPage(signedIn, "", Option.some(shown))
  })

/** End the browser's session (a POST with its token) and go back to the sign-in form. */
const signOut = (req: ConsoleRequest, visit: ConsoleSession.Visit) =>
  Effect.gen(function* () {
    const form = yield* readForm(req, visit)
    if (Either.isLeft(form)) return form.left
    const cleared = yield* ConsoleSession.setCookie("", 0)
    if (Option.isNone(visit.signedIn)) return seeOther(Paths.console.signIn, { "set-cookie": cleared })
    const { session, operator } = visit.signedIn.value
    const store = yield* OperatorStore
    yield* asOperator(
      req,
      operator.name,
      Audit.recordWith(store.endSession(yield* sha256(visit.id)), [
        ["console_signed_out", { detail: `operator ${session.operator}` }]
      ])
    )
    return seeOther(Paths.console.signIn, { "set-cookie": cleared })
  })

/** The sign-in form, for a browser not signed in. */
const signInForm = (visit: ConsoleSession.Visit) =>
  Effect.gen(function* () {
    if (Option.isSome(visit.signedIn)) return seeOther(Paths.console.apps)
    const csrf = yield* ConsoleSession.csrfToken(visit.id)
    return page(200, View.SignIn({ csrf, username: "", problem: Option.none(), retryAfter: Option.none() }))
  })

const methods: ReadonlyArray<readonly [string, string]> = [
  [Paths.console.root, "GET, HEAD"],
  [Paths.console.signIn, "GET, HEAD, POST"],
  [Paths.console.signOut, "POST"],
  [Paths.console.apps, "GET, HEAD"],
  [Paths.console.rotateSecret, "POST"]
]

/** The answer of one path and method, for a visit. */
const route = (req: ConsoleRequest, visit: ConsoleSession.Visit) => {
  const get = req.method === "GET" || req.method === "HEAD"
  const allow = methods.find(([path]) => path === req.path)?.[1]
  if (allow === undefined)
    return Effect.flatMap(signedInOf(visit), (s) => Effect.succeed(problem("not_found", s)))
  if (!allow.split(", ").includes(req.method)) {
    return Effect.succeed(problem("method_not_allowed", Option.none(), { allow }))
  }
  switch (req.path) {
    case Paths.console.root:
      return Effect.succeed(seeOther(Paths.console.apps))
    case Paths.console.signIn:
      return get ? signInForm(visit) : asOperator(req, null, signIn(req, visit))
    case Paths.console.signOut:
      return signOut(req, visit)
    case Paths.console.apps:
      return Effect.flatMap(allowed(visit, "read", true), (who) =>
        Either.isLeft(who) ? Effect.succeed(who.left) : appsPage(who.right, queryOf(req.query))
      )
    default:
      return rotate(req, visit)
  }
}

/**
 * Answer a request to the console. A storage failure is the 503 page; a new visitor's cookie is
 * set on whatever is answered.
 */
export const handle = (req: ConsoleRequest): Effect.Effect<ConsoleAnswer, never, Requirements> =>
  Effect.gen(function* () {
    const visit = yield* ConsoleSession.load(Http.header(req, "cookie") ?? undefined)
    const answer = yield* route(req, visit)
    return Option.match(visit.setCookie, {
      onNone: () => answer,
      onSome: (cookie) =>
        answer.headers["set-cookie"] !== undefined
          ? answer
          : { ...answer, headers: { ...answer.headers, "set-cookie": cookie } }
    })
  }).pipe(
    Effect.catchTag("StorageError", () =>
      Effect.succeed(problem("unavailable", Option.none(), { "retry-after": "5" }))
    )
  )
