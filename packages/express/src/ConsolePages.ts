/**
 * The operator console's pages: the core's `Console.ConsoleAnswer` rendered as an HTTP answer
 * (status, headers, HTML), in the language `Accept-Language` asks for, with the public pages'
 * stylesheet, hardening headers and CSP (forms to this origin only, no framing, no script).
 */
import { type Console, Locale } from "@latchkey/core"
import { NodeHttp } from "@latchkey/node"
import { Option } from "effect"
import { alertIcon, doneIcon, escapeHtml, frame, hidden, rich } from "./internal/html.js"
import { type Catalogue, catalogue, defaultLanguage, languages } from "./locales/index.js"
import { contentSecurityPolicy } from "./Pages.js"

/** What the console's pages are rendered with. */
export interface Options {
  /** The request's `Accept-Language` header. */
  readonly acceptLanguage: string | undefined
  /** Product name shown on the pages (default "Latchkey"). */
  readonly productName?: string
  /** Whether the issuer is https (HSTS, as the public pages). */
  readonly https: boolean
}

/** An answer as a binding writes it. */
export interface Rendered {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

const paths = {
  signIn: "/console/sign-in",
  signOut: "/console/sign-out",
  apps: "/console/apps",
  rotate: "/console/apps/rotate-secret"
} as const

type Page = { readonly title: string; readonly body: string }

const alert = (text: string) =>
  `<div class="alert" role="alert" id="form-error">${alertIcon}<span>${escapeHtml(text)}</span></div>\n`

const signInPage = (t: Catalogue, v: Extract<Console.ConsoleView, { _tag: "SignIn" }>): Page => {
  const c = t.console
  const problem = Option.map(v.problem, (p) => c.signInProblems[p](Option.getOrElse(v.retryAfter, () => 0)))
  const invalid = Option.isSome(problem) ? ` aria-invalid="true" aria-describedby="form-error"` : ""
  const value = v.username === "" ? " autofocus" : ` value="${escapeHtml(v.username)}"`
  return {
    title: c.signInTitle,
    body: `<h1>${escapeHtml(c.signInTitle)}</h1>
<p class="lead">${escapeHtml(c.signInLead)}</p>
${Option.match(problem, { onNone: () => "", onSome: alert })}<form method="post" action="${paths.signIn}">
${hidden("csrf_token", v.csrf)}
<div class="field">
<label for="username">${escapeHtml(c.name)}</label>
<input class="input" id="username" name="username" type="text" autocomplete="username" autocapitalize="none" autocorrect="off" spellcheck="false" maxlength="64" required${value}${invalid}>
</div>
<div class="field">
<label for="password">${escapeHtml(c.password)}</label>
<input class="input" id="password" name="password" type="password" autocomplete="current-password" maxlength="1024" required${v.username === "" ? "" : " autofocus"}${invalid}>
</div>
<div class="submit"><button class="btn btn-primary" type="submit">${escapeHtml(c.submit)}</button></div>
</form>`
  }
}

/** Who is signed in, and Sign out. */
const account = (t: Catalogue, s: Console.SignedIn): string =>
  `<div class="account"><span>${rich(t.console.signedInAs(s.operator, t.console.roles[s.role]))}</span><form class="inline" method="post" action="${paths.signOut}">${hidden("csrf_token", s.csrf)}<button class="btn btn-link" type="submit">${escapeHtml(t.console.signOut)}</button></form></div>`

const appItem = (t: Catalogue, a: Console.AppRow, csrf: string, canRotate: boolean): string => {
  const c = t.console
  const rotate = canRotate
    ? `<form method="post" action="${paths.rotate}">${hidden("csrf_token", csrf)}${hidden("app_key", a.appKey)}<button class="btn btn-secondary" type="submit" aria-describedby="rotate-hint">${escapeHtml(c.rotate)}</button></form>`
    : ""
  return `<li class="app"><h2>${escapeHtml(a.name)}${a.public ? `<span class="badge">${escapeHtml(c.publicClient)}</span>` : ""}</h2>
<p class="app-meta">${escapeHtml(c.appKey)}: <span class="code">${escapeHtml(a.appKey)}</span> · ${escapeHtml(c.created(t.date(a.createdAt)))}</p>
${a.public ? "" : rotate}</li>`
}

const rotatedNotice = (t: Catalogue, r: Console.Rotated): string =>
  `<div class="notice" role="status">${doneIcon}<span>${rich(t.console.rotated(r.name))}</span></div>
<div class="field"><label for="new-secret">${escapeHtml(t.console.newSecret)}</label>
<input class="input" id="new-secret" type="text" readonly value="${escapeHtml(r.appSecret)}" spellcheck="false" autocomplete="off"></div>
`

const appsPage = (t: Catalogue, v: Extract<Console.ConsoleView, { _tag: "Apps" }>): Page => {
  const c = t.console
  const list =
    v.apps.length === 0
      ? `<p class="empty">${escapeHtml(c.noApps)}</p>`
      : `<ul class="apps">${v.apps.map((a) => appItem(t, a, v.signedIn.csrf, v.canRotate)).join("\n")}</ul>`
  return {
    title: c.appsTitle,
    body: `<h1>${escapeHtml(c.appsTitle)}</h1>
<p class="lead">${escapeHtml(c.appsLead)}</p>
${account(t, v.signedIn)}
${Option.match(v.rotated, { onNone: () => "", onSome: (r) => rotatedNotice(t, r) })}<form method="get" action="${paths.apps}" role="search">
<div class="field"><label for="q">${escapeHtml(c.search)}</label>
<input class="input" id="q" name="q" type="search" maxlength="200" value="${escapeHtml(v.query)}"></div>
<div class="submit"><button class="btn btn-primary" type="submit">${escapeHtml(c.searchSubmit)}</button></div>
</form>
${v.canRotate ? `<p class="hint" id="rotate-hint">${escapeHtml(c.rotateHint)}</p>\n` : ""}${list}`
  }
}

const problemPage = (t: Catalogue, v: Extract<Console.ConsoleView, { _tag: "Problem" }>): Page => {
  const text = t.console.problems[v.reason]
  const back = Option.isSome(v.signedIn) || v.reason === "forbidden" ? paths.apps : paths.signIn
  return {
    title: text.title,
    body: `<h1>${escapeHtml(text.title)}</h1>
<p class="lead">${escapeHtml(text.explain)}</p>
${Option.match(v.signedIn, { onNone: () => "", onSome: (s) => account(t, s) })}
<p><a href="${back}">${escapeHtml(t.console.back)}</a></p>`
  }
}

const pageOf = (t: Catalogue, view: Console.ConsoleView): Page => {
  switch (view._tag) {
    case "SignIn":
      return signInPage(t, view)
    case "Apps":
      return appsPage(t, view)
    case "Problem":
      return problemPage(t, view)
  }
}

/** The page CSP: the stylesheet by hash, forms to this origin only, no framing. */
export const pageSecurityPolicy: string = contentSecurityPolicy(["'self'"])

/** Render the console's answer: its page as HTML with the page headers, or a redirect without a body. */
export const render = (answer: Console.ConsoleAnswer, options: Options): Rendered => {
  const headers = {
    ...NodeHttp.hardeningHeaders(options.https),
    "content-security-policy": pageSecurityPolicy,
    ...answer.headers
  }
  if (Option.isNone(answer.view)) return { status: answer.status, headers, body: "" }
  const t = catalogue(
    Locale.choose(languages, { uiLocales: [], acceptLanguage: options.acceptLanguage }, defaultLanguage)
  )
  const page = pageOf(t, answer.view.value)
  const body = frame({
    layout: "PC",
    lang: t.lang,
    productName: options.productName ?? "Latchkey",
    title: page.title,
    body: page.body,
    footer: rich(t.frame.securedBy(options.productName ?? "Latchkey"))
  })
  return { status: answer.status, headers: { ...headers, "content-type": "text/html; charset=utf-8" }, body }
}
