/**
 * How the router answers a page request: the core's `Interaction.View` rendered as an HTTP
 * response, one function per view (a redirect, a HEAD answer, the sign-in, consent, consents,
 * account and error pages), with the page headers (CSP, no caching), in the language the request asks for.
 */
import { Http, Interaction, Locale, type Scope, type ScopeCatalogue } from "@latchkey/core"
import { NodeHttp } from "@latchkey/node"
import { Option } from "effect"
import type { Request, Response } from "express"
import { type Catalogue, catalogue, defaultLanguage, languages } from "../locales/index.js"
import * as Pages from "../Pages.js"
import * as PasskeyScripts from "./passkeys.js"

/** What a view is rendered with: the request and its response, and the router's page options. */
export interface PageContext {
  readonly req: Request
  readonly res: Response
  /** Product name shown on the pages. */
  readonly productName: string
  /** What each scope allows, by scope (one text, or texts by language tag). */
  readonly scopeDescriptions: Readonly<Record<string, string | Readonly<Record<string, string>>>> | undefined
}

/**
 * The language of a page: the first supported tag of the request's `ui_locales`, else of
 * `Accept-Language`, else English.
 */
const languageOf = (req: Request, uiLocales: ReadonlyArray<string>): Catalogue =>
  catalogue(
    Locale.choose(languages, { uiLocales, acceptLanguage: req.headers["accept-language"] }, defaultLanguage)
  )

/** The catalogue's text of an OpenID scope, if `name` is one. */
const builtIn = (t: Catalogue, name: string): string | undefined =>
  Object.hasOwn(t.consent.openIdScopes, name)
    ? t.consent.openIdScopes[name as keyof Catalogue["consent"]["openIdScopes"]]
    : undefined

/** Texts by language tag: the one in the page's language, else in English, if any. */
const inLanguage = (d: Readonly<Record<string, string>>, t: Catalogue): string | undefined => {
  const tag = Option.getOrUndefined(
    Option.orElse(Locale.match(Object.keys(d), t.lang), () => Locale.match(Object.keys(d), "en"))
  )
  return tag === undefined ? undefined : d[tag]
}

/**
 * The text of one scope in the page's language: the scope catalogue's (`catalogued`), else the
 * router's own, each in the page's language, else in English; else the page catalogue's for an
 * OpenID scope, else the fallback.
 */
const describeScope = (
  ctx: PageContext,
  name: string,
  t: Catalogue,
  catalogued: ScopeCatalogue.DescribedScopes
): Pages.ScopeLine => {
  const fromCatalogue = Object.hasOwn(catalogued, name) ? inLanguage(catalogued[name] ?? {}, t) : undefined
  if (fromCatalogue !== undefined) return { name, description: fromCatalogue }
  const d =
    ctx.scopeDescriptions !== undefined && Object.hasOwn(ctx.scopeDescriptions, name)
      ? ctx.scopeDescriptions[name]
      : undefined
  if (typeof d === "string") return { name, description: d }
  const text = d === undefined ? undefined : inLanguage(d, t)
  return { name, description: text ?? builtIn(t, name) ?? t.consent.scopeFallback(name) }
}

/** The lines of a scope set, each with what it allows. */
const describe = (
  ctx: PageContext,
  scope: Scope.ScopeSet,
  t: Catalogue,
  catalogued: ScopeCatalogue.DescribedScopes
): ReadonlyArray<Pages.ScopeLine> => scope.map((name) => describeScope(ctx, name, t, catalogued))

/** The headers of every page: its CSP (forms post only to `formTargets`), no caching. */
const pageHeaders = (
  res: Response,
  formTargets: ReadonlyArray<string>,
  scripts: ReadonlyArray<string> = []
): void => {
  res.setHeader("content-security-policy", Pages.contentSecurityPolicy(formTargets, scripts))
  res.setHeader("cache-control", "no-store")
  res.setHeader("pragma", "no-cache")
}

/** Send a page (with the CSP sources of its scripts, if it has any). */
const sendHtml = (
  res: Response,
  status: number,
  html: string,
  formTargets: ReadonlyArray<string>,
  scripts: ReadonlyArray<string> = []
): void => {
  pageHeaders(res, formTargets, scripts)
  res.status(status)
  res.setHeader("content-type", "text/html; charset=utf-8")
  res.end(html)
}

/** A view of the core, by its tag. */
type ViewOf<Tag extends Interaction.View["_tag"]> = Extract<Interaction.View, { readonly _tag: Tag }>

/** What every page takes: its layout, the product's name, and the language the request asks for. */
const common = (ctx: PageContext, v: Pick<ViewOf<"SignIn">, "layout" | "uiLocales">) => ({
  layout: v.layout,
  productName: ctx.productName,
  catalogue: languageOf(ctx.req, v.uiLocales)
})

/** The form of a view: where it posts, and its ticket. */
const form = (v: Pick<ViewOf<"SignIn">, "action" | "ticket">) => ({
  action: v.action,
  txn: v.ticket.txn,
  csrf: v.ticket.csrf
})

/** The sign-in form of a view: its form, and the failed attempt it follows. */
const signInFields = (v: ViewOf<"SignIn"> | ViewOf<"ConsentsSignIn">) => ({
  ...form(v),
  ...(Option.isSome(v.error) ? { error: v.error.value.problem, username: v.error.value.username } : {})
})

/** A redirect (to the client, or back to a page), never cached. */
const redirect = ({ res }: PageContext, { status, location, error }: ViewOf<"Redirect">): void => {
  NodeHttp.noteError(res, error)
  res.setHeader("cache-control", "no-store")
  res.setHeader("pragma", "no-cache")
  res.setHeader("location", location)
  res.status(status).end()
}

/** The answer to HEAD on a page: its headers, no body. */
const head = ({ res }: PageContext, { formTargets }: ViewOf<"Head">): void => {
  pageHeaders(res, formTargets)
  res.setHeader("content-type", "text/html; charset=utf-8")
  res.status(200).end()
}

/** The sign-in page of the authorize flow. */
const signIn = (ctx: PageContext, v: ViewOf<"SignIn">): void =>
  sendHtml(
    ctx.res,
    v.status,
    Pages.login({
      ...common(ctx, v),
      appName: v.appName,
      redirectHost: v.redirectHost,
      ...signInFields(v),
      ...(v.passkey === undefined ? {} : { passkey: v.passkey })
    }),
    v.formTargets,
    v.passkey === undefined ? [] : [PasskeyScripts.signInScriptSource]
  )

/** The second step of a sign-in: a code. */
const factor = (ctx: PageContext, v: ViewOf<"Factor">): void =>
  sendHtml(
    ctx.res,
    v.status,
    Pages.factor({
      ...common(ctx, v),
      ...(Option.isSome(v.appName) ? { appName: v.appName.value } : {}),
      username: v.username,
      ...form(v),
      fields: v.fields,
      ...(Option.isSome(v.problem) ? { problem: v.problem.value } : {})
    }),
    v.formTargets
  )

/** The authorize flow's page adding an authenticator app. */
const enrol = (ctx: PageContext, v: ViewOf<"Enrol">): void =>
  sendHtml(
    ctx.res,
    v.status,
    Pages.enrol({
      ...common(ctx, v),
      appName: v.appName,
      username: v.username,
      enrolment: v.enrolment,
      ...form(v),
      fields: v.fields,
      ...(Option.isSome(v.problem) ? { problem: v.problem.value } : {}),
      ...(Option.isSome(v.passkeysHref) ? { accountHref: v.passkeysHref.value } : {})
    }),
    v.formTargets
  )

/** The app added in the authorize flow: its recovery codes and Continue. */
const enrolled = (ctx: PageContext, v: ViewOf<"Enrolled">): void =>
  sendHtml(
    ctx.res,
    200,
    Pages.enrolled({
      ...common(ctx, v),
      appName: v.appName,
      recoveryCodes: v.recoveryCodes,
      continueHref: v.continueHref
    }),
    v.formTargets
  )

/** A passkey endpoint's JSON answer, never cached. */
const json = ({ res }: PageContext, v: ViewOf<"Json">): void => {
  pageHeaders(res, [])
  NodeHttp.write(res, Http.json(v.status, v.body))
}

/** The consent page: the application and the scopes it asks for. */
const consent = (ctx: PageContext, v: ViewOf<"Consent">): void => {
  const page = common(ctx, v)
  sendHtml(
    ctx.res,
    200,
    Pages.consent({
      ...page,
      appName: v.appName,
      redirectHost: v.redirectHost,
      username: v.username,
      scopes: describe(ctx, v.scope, page.catalogue, v.scopeDescriptions),
      switchAction: v.switchAction,
      consentsHref: v.consentsHref,
      ...form(v)
    }),
    v.formTargets
  )
}

/** The consents (or account) page before sign-in. */
const consentsSignIn = (ctx: PageContext, v: ViewOf<"ConsentsSignIn">): void =>
  sendHtml(
    ctx.res,
    v.status,
    Pages.consentsSignIn({
      ...common(ctx, v),
      ...signInFields(v),
      ...(v.purpose !== undefined ? { purpose: v.purpose } : {})
    }),
    v.formTargets
  )

/** The account page: its sections. */
const account = (ctx: PageContext, v: ViewOf<"Account">): void =>
  sendHtml(
    ctx.res,
    v.status,
    Pages.account({
      ...common(ctx, v),
      username: v.username,
      sections: v.sections,
      ...(Option.isSome(v.notice) ? { notice: v.notice.value } : {}),
      ...form(v)
    }),
    v.formTargets,
    // The passkeys section's Add runs the account page's script
    v.sections.some((s) => s._tag === "Passkeys") ? [PasskeyScripts.accountScriptSource] : []
  )

/** The consents page: the applications the user authorised. */
const consents = (ctx: PageContext, v: ViewOf<"Consents">): void => {
  const page = common(ctx, v)
  sendHtml(
    ctx.res,
    200,
    Pages.consents({
      ...page,
      username: v.username,
      apps: v.consents.map((c) => ({
        appKey: c.appKey,
        appName: c.appName,
        grantedAt: c.grantedAt,
        scopes: describe(ctx, c.scope, page.catalogue, v.scopeDescriptions)
      })),
      ...(Option.isSome(v.withdrawn) ? { withdrawn: v.withdrawn.value } : {}),
      ...form(v)
    }),
    v.formTargets
  )
}

/** The end session endpoint's question: sign out? */
const logoutConfirm = (ctx: PageContext, v: ViewOf<"LogoutConfirm">): void =>
  sendHtml(
    ctx.res,
    200,
    Pages.logoutConfirm({
      ...common(ctx, v),
      ...(Option.isSome(v.appName) ? { appName: v.appName.value } : {}),
      username: v.username,
      action: v.action,
      csrf: v.csrf,
      fields: v.fields
    }),
    v.formTargets
  )

/** The page after a logout. */
const signedOut = (ctx: PageContext, v: ViewOf<"SignedOut">): void =>
  sendHtml(ctx.res, 200, Pages.signedOut(common(ctx, v)), [])

/** An error page, or its JSON when the client asks for JSON. */
const errorPage = (ctx: PageContext, e: ViewOf<"ErrorPage">): void => {
  const { req, res } = ctx
  NodeHttp.noteReason(res, e.problem.reason)
  for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v)
  // Content negotiation: JSON instead of the page when the client asks for JSON (always English)
  if (req.accepts(["html", "json"]) === "json") {
    pageHeaders(res, [])
    NodeHttp.write(res, Http.json(e.status, { error: e.error, error_description: e.description }))
    return
  }
  sendHtml(
    res,
    e.status,
    Pages.error({
      ...common(ctx, e),
      status: e.status,
      error: e.error,
      description: e.description,
      problem: e.problem,
      ...(Option.isSome(e.back) ? { back: e.back.value } : {}),
      ...(Option.isSome(e.received) ? { received: e.received.value } : {})
    }),
    []
  )
}

/** Answer a page request with the core's answer: its cookies, then its view. */
export const render = (ctx: PageContext, answer: Interaction.PageResponse): void => {
  const cookies = [answer.setCookie, answer.deviceCookie ?? null].filter((c): c is string => c !== null)
  if (cookies.length > 0) ctx.res.setHeader("set-cookie", cookies)
  Interaction.View.$match(answer.view, {
    Redirect: (v) => redirect(ctx, v),
    Head: (v) => head(ctx, v),
    SignIn: (v) => signIn(ctx, v),
    Factor: (v) => factor(ctx, v),
    Enrol: (v) => enrol(ctx, v),
    Enrolled: (v) => enrolled(ctx, v),
    Consent: (v) => consent(ctx, v),
    ConsentsSignIn: (v) => consentsSignIn(ctx, v),
    Consents: (v) => consents(ctx, v),
    LogoutConfirm: (v) => logoutConfirm(ctx, v),
    SignedOut: (v) => signedOut(ctx, v),
    Account: (v) => account(ctx, v),
    Json: (v) => json(ctx, v),
    ErrorPage: (v) => errorPage(ctx, v)
  })
}
