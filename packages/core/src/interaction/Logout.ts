/**
 * The end session endpoint (OpenID Connect RP-Initiated Logout 1.0): an application sends the
 * browser here to end its sign-in session. The request (`Forms.LogoutRequest`) is checked first:
 * an `id_token_hint` must be an ID token of this server (signature and issuer; an expired one is
 * accepted, §2), a `client_id` beside it must be its audience, the application they name must be
 * registered, and a `post_logout_redirect_uri` must be one of its registered URIs, exactly (§3);
 * anything wrong is an error page, never a redirect, and nothing changes.
 *
 * Then the browser's session ends (deleted with its `logout` audit event in one transaction, the
 * cookie removed) when the request proves it is about this session: the hint's `sid` is this
 * session's (`Session.sidOf`), or the user confirmed on this server's own page (a form tied to
 * the session, from this site). Otherwise the page asks the user first (§2: "the OP MUST ask the
 * End-User" when no hint, or one of another session, was sent). Without a signed-in session there
 * is nothing to end: logout answers as if it had (idempotent). Last, the browser goes back to the
 * registered URI with `state`, or sees the signed-out page.
 */
import { Effect, Either, Option } from "effect"
import type { Refusal } from "../http/Http.js"
import * as Http from "../http/Http.js"
import * as Paths from "../http/Paths.js"
import { type Application, matchesPostLogoutRedirectUri } from "../model/Application.js"
import { Config } from "../model/Config.js"
import { forDisplay } from "../model/DisplayText.js"
import * as Authorize from "../oauth/Authorize.js"
import * as Form from "../oauth/requests/Form.js"
import { isPlainText } from "../oauth/requests/Params.js"
import * as Audit from "../security/Audit.js"
import * as Session from "../security/Session.js"
import { hmac, timingSafeEqual } from "../services/Digest.js"
import * as Jwt from "../signing/Jwt.js"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import { SessionStore } from "../storage/SessionStore.js"
import { atomically } from "../storage/Transaction.js"
import { type LogoutRequest, logoutRequestOf } from "./Forms.js"
import * as Locale from "./Locale.js"
import {
  answer,
  cookieOf,
  crossSite,
  early,
  errorPage,
  type Frame,
  forbidden,
  formTargetsOf,
  frameOf,
  refused
} from "./Page.js"
import { type PageRequest, View } from "./View.js"

/** A logout request once checked: what it names, and where the browser goes afterwards. */
interface Checked {
  readonly request: LogoutRequest
  readonly frame: Frame
  /** The application the hint or `client_id` names. */
  readonly app: Option.Option<Application>
  /** The `sid` of a valid `id_token_hint` that carries one. */
  readonly hintSid: Option.Option<string>
  /** The registered `post_logout_redirect_uri`, and it with `state`: where the browser goes. */
  readonly destination: Option.Option<{ readonly uri: string; readonly location: string }>
}

/** How a logout proved it is about this session: the audit event's detail. */
type Proof = "id_token_hint" | "confirmed"

/** A request that cannot be trusted: its error page, and nothing changed. */
const untrusted = (frame: Frame, description: string, received?: string) =>
  early(
    errorPage(
      frame,
      400,
      "invalid_request",
      description,
      { reason: "bad_logout" },
      {},
      Option.map(Option.fromNullable(received), Authorize.shownValue)
    )
  )

/** The single audience of an ID token's claims, if it names one. */
const audienceOf = (claims: { readonly aud?: string | ReadonlyArray<string> }): Option.Option<string> =>
  typeof claims.aud === "string"
    ? Option.some(claims.aud)
    : Array.isArray(claims.aud) && claims.aud.length === 1
      ? Option.fromNullable(claims.aud[0] as string | undefined)
      : Option.none()

/** The claims of a valid `id_token_hint`: this server's ID token, expired or not (§2). */
const hintOf = (request: LogoutRequest, frame: Frame) =>
  request.id_token_hint === undefined
    ? Effect.succeed(Option.none<{ readonly aud: string; readonly sid: Option.Option<string> }>())
    : Jwt.verify(request.id_token_hint, { typ: Jwt.idTokenType, acceptExpired: true }).pipe(
        Effect.catchTag("InvalidJwt", () =>
          untrusted(frame, "id_token_hint is not an ID token this server issued")
        ),
        Effect.flatMap((claims) =>
          Option.match(audienceOf(claims), {
            onNone: () => untrusted(frame, "id_token_hint names no single application"),
            onSome: (aud) =>
              Effect.succeed(
                Option.some({
                  aud,
                  sid: typeof claims.sid === "string" ? Option.some(claims.sid) : Option.none<string>()
                })
              )
          })
        )
      )

/** The registered application `appKey` names; an unknown one ends the request with its error page. */
const applicationOf = (appKey: Option.Option<string>, frame: Frame) =>
  Effect.gen(function* () {
    if (Option.isNone(appKey)) return Option.none<Application>()
    // docs/security.md T13: an App Key that is not plain text names no application, in any store
    const found = isPlainText(appKey.value)
      ? yield* Effect.flatMap(ApplicationStore, (apps) => apps.find(appKey.value))
      : Option.none<Application>()
    if (Option.isNone(found)) {
      return yield* early(
        errorPage(frame, 400, "invalid_request", "client_id or the id_token_hint's audience is unknown", {
          reason: "unknown_client"
        })
      )
    }
    return found
  })

/** Check a logout request (§2, §3): its hint, its application and where it may send the browser. */
const check = Effect.fnUntraced(function* (request: LogoutRequest, frame: Frame) {
  const hint = yield* hintOf(request, frame)
  const hintAud = Option.map(hint, (h) => h.aud)
  if (request.client_id !== undefined && Option.isSome(hintAud) && hintAud.value !== request.client_id) {
    return yield* untrusted(frame, "client_id is not the audience of id_token_hint")
  }
  const app = yield* applicationOf(
    Option.orElse(hintAud, () => Option.fromNullable(request.client_id)),
    frame
  )
  const uri = request.post_logout_redirect_uri
  if (uri !== undefined && Option.isNone(app)) {
    return yield* untrusted(frame, "post_logout_redirect_uri needs client_id or id_token_hint", uri)
  }
  if (uri !== undefined && Option.isSome(app) && !matchesPostLogoutRedirectUri(app.value, uri)) {
    return yield* untrusted(frame, "post_logout_redirect_uri is not registered for this application", uri)
  }
  const checked: Checked = {
    request,
    frame,
    app,
    hintSid: Option.flatMap(hint, (h) => h.sid),
    destination:
      uri === undefined
        ? Option.none()
        : Option.some({ uri, location: Authorize.append(uri, "?", [["state", request.state ?? null]]) })
  }
  return checked
})

/** Where the pages of a checked request may send the browser: this site, and the registered URI. */
const targetsOf = (checked: Checked): ReadonlyArray<string> =>
  Option.match(checked.destination, { onNone: () => ["'self'"], onSome: (d) => formTargetsOf(d.uri) })

/** The confirmation form's CSRF token: tied to the session, made with the server key. */
const csrfOf = (session: Session.Session) =>
  Effect.flatMap(Config, ({ serverKey }) =>
    hmac(`${serverKey}\u0000latchkey-logout-confirm`, `${session.id}\u0000logout`)
  )

/**
 * How the request proves it is about this session, if it does: the confirmation form (a POST from
 * this site with the session's CSRF token; a wrong one ends the request as forbidden), or a hint
 * issued in this session.
 */
const proofOf = (req: PageRequest, checked: Checked, session: Session.Session) =>
  Effect.gen(function* () {
    const csrf = checked.request.csrf_token
    if (csrf !== undefined && req.method === "POST") {
      const ok = !(yield* crossSite(req)) && timingSafeEqual(csrf, yield* csrfOf(session))
      return ok ? Option.some<Proof>("confirmed") : yield* early(forbidden(checked.frame))
    }
    if (Option.isNone(checked.hintSid)) return Option.none<Proof>()
    const sid = yield* Session.sidOf(session.idHash)
    return timingSafeEqual(checked.hintSid.value, sid)
      ? Option.some<Proof>("id_token_hint")
      : Option.none<Proof>()
  })

/** The question: sign out? Its form posts the request back with the CSRF token. */
const confirmPage = (req: PageRequest, checked: Checked, session: Session.Session) =>
  Effect.gen(function* () {
    const fields = Object.entries(checked.request).filter(
      (f): f is [string, string] => f[0] !== "csrf_token" && typeof f[1] === "string"
    )
    return answer(
      View.LogoutConfirm({
        layout: checked.frame.layout,
        uiLocales: checked.frame.uiLocales,
        appName: Option.map(checked.app, (a) => forDisplay(a.name)),
        username: forDisplay(session.username ?? ""),
        action: req.basePath + Paths.oauth.logout,
        csrf: yield* csrfOf(session),
        fields,
        formTargets: targetsOf(checked)
      })
    )
  })

/** End the session: deleted with its `logout` event in one transaction; the cookie that removes it. */
const endSession = (req: PageRequest, checked: Checked, session: Session.Session, proof: Proof) =>
  Effect.gen(function* () {
    const fields = {
      appKey: Option.getOrNull(Option.map(checked.app, (a) => a.appKey)),
      userId: session.userId,
      detail: proof
    }
    yield* atomically(
      Audit.recordWith(
        Effect.flatMap(SessionStore, (s) => s.remove(session.idHash)),
        [["logout", fields]]
      )
    )
    return Session.clearing(yield* cookieOf(req))
  })

/** The answer once the session is over: back to the registered URI with `state`, or the signed-out page. */
const finished = (checked: Checked, status: 302 | 303, setCookie: string | null) =>
  Option.match(checked.destination, {
    onSome: (d) => answer(View.Redirect({ status, location: d.location }), setCookie),
    onNone: () =>
      answer(
        View.SignedOut({
          layout: checked.frame.layout,
          uiLocales: checked.frame.uiLocales,
          appName: Option.map(checked.app, (a) => forDisplay(a.name))
        }),
        setCookie
      )
  })

/** The parameters of a logout request: the query (GET, HEAD) or the form body (POST). */
const paramsOf = (req: PageRequest, frame: Frame) => {
  const read =
    req.method === "POST"
      ? Http.readForm(req)
      : Either.mapLeft(
          Form.parse(req.query),
          (e): Refusal => ({ status: 400, description: e.description, headers: {} })
        )
  return Either.match(read, { onLeft: (r) => early(refused(frame, r)), onRight: Effect.succeed })
}

/** GET, HEAD or POST of the end session endpoint. */
export const logoutRequest = (req: PageRequest) =>
  Effect.gen(function* () {
    const params = yield* paramsOf(req, frameOf(req.method === "POST" ? "" : req.query))
    const request = logoutRequestOf(params)
    const frame: Frame = {
      layout: request.client_type === "Mobile" ? "Mobile" : "PC",
      uiLocales: Locale.parseUiLocales(request.ui_locales),
      back: Option.none()
    }
    const checked = yield* check(request, frame)
    if (req.method === "HEAD") return answer(View.Head({ formTargets: targetsOf(checked) }))
    const status = req.method === "POST" ? 303 : 302
    const session = yield* Session.load(Http.header(req, "cookie") ?? undefined)
    // Nobody signed in: nothing to end, the answer of a logout all the same
    if (Option.isNone(session) || session.value.userId === null) return finished(checked, status, null)
    const proof = yield* proofOf(req, checked, session.value)
    if (Option.isNone(proof)) return yield* confirmPage(req, checked, session.value)
    return finished(checked, status, yield* endSession(req, checked, session.value, proof.value))
  })
