/**
 * The console's sign-in form posted: the form checked (`Console.readForm`), the attempt counted
 * before the password is checked (`Throttle.consoleKeys`: the sign-in page's rules, never locking
 * an operator out by guesses from elsewhere), the same work for an unknown name as for a known
 * one, one answer for both, and on success a new session under a new id.
 */
import { Effect, Either, Option } from "effect"
import * as Paths from "../../http/Paths.js"
import { maxNameLength } from "../../model/Operator.js"
import { isPlainText } from "../../oauth/requests/Params.js"
import { dummyHash } from "../../security/Accounts.js"
import * as Audit from "../../security/Audit.js"
import * as ConsoleSession from "../../security/ConsoleSession.js"
import * as Throttle from "../../security/Throttle.js"
import { maxPasswordLength, PasswordHasher } from "../../services/PasswordHasher.js"
import { OperatorStore } from "../../storage/OperatorStore.js"
import { type SignInProblem, ConsoleView as View } from "../ConsoleView.js"
import { type ConsoleRequest, page, readForm, seeOther } from "./consolePages.js"

const malformed = (name: string, password: string): boolean =>
  name.length > maxNameLength ||
  password.length > maxPasswordLength ||
  !isPlainText(name) ||
  !isPlainText(password)

/** The sign-in form again, with the name typed and why it was refused. */
const again = (visit: ConsoleSession.Visit, username: string, problem: SignInProblem, retryAfter?: number) =>
  Effect.map(ConsoleSession.csrfToken(visit.id), (csrf) =>
    page(
      problem === "throttled" ? 429 : 400,
      View.SignIn({
        csrf,
        username,
        problem: Option.some(problem),
        retryAfter: Option.fromNullable(retryAfter)
      }),
      retryAfter === undefined ? {} : { "retry-after": String(retryAfter) }
    )
  )

/** Whether `password` is the operator's (`found`), after the same work when there is none. */
const passwordMatches = (found: Option.Option<{ readonly passwordHash: string }>, password: string) =>
  Effect.flatMap(PasswordHasher, (hasher) =>
    Option.isNone(found)
      ? Effect.as(
          Effect.flatMap(dummyHash(hasher), (dummy) => hasher.verify(password, dummy)),
          false
        )
      : hasher.verify(password, found.value.passwordHash)
  )

/** Answer a posted sign-in form. */
export const signIn = (req: ConsoleRequest, visit: ConsoleSession.Visit) =>
  Effect.gen(function* () {
    const form = yield* readForm(req, visit)
    if (Either.isLeft(form)) return form.left
    const username = form.right.username ?? ""
    const password = form.right.password ?? ""
    const bad = malformed(username, password)
    const keys = Throttle.consoleKeys(bad ? "(malformed)" : username, req.remoteAddress)
    const reserved = yield* Throttle.reserve(keys).pipe(
      Effect.map(Either.right),
      Effect.catchTag("RateLimited", (e) => Effect.succeed(Either.left(e)))
    )
    if (Either.isLeft(reserved)) return yield* again(visit, username, "throttled", reserved.left.retryAfter)
    // One audit event per lockout, not one per refused attempt
    if (reserved.right.started) yield* Audit.record("console_signin_throttled")
    const store = yield* OperatorStore
    const found = bad ? Option.none() : yield* store.find(username)
    if (!(yield* passwordMatches(found, password)) || Option.isNone(found)) {
      yield* Audit.record("console_signin_failed", {
        detail: Option.isSome(found) ? `operator ${username}` : null
      })
      return yield* again(visit, username, "bad_credentials")
    }
    const name = found.value.name
    yield* Throttle.succeeded(keys)
    const started = yield* ConsoleSession.start(name)
    const stored = yield* Effect.provideService(
      Audit.recordWith(started.write, [["console_signin_succeeded", { detail: `operator ${name}` }]]),
      Audit.RequestInfo,
      { requestId: req.requestId ?? null, address: req.remoteAddress ?? null, actor: `operator:${name}` }
    )
    // Deleted between the check and the write: the answer of a wrong password
    if (!stored) return yield* again(visit, username, "bad_credentials")
    return seeOther(Paths.console.apps, { "set-cookie": started.setCookie })
  })
