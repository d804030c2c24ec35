/**
 * The server-rendered sign-in, consent, consents and error pages: self-contained HTML with
 * one inline stylesheet (allowed by its hash in the CSP), no script, every reflected value
 * escaped, a desktop layout (`client_type=PC`) and a mobile-first one (`Mobile`), written in
 * the language of a message catalogue (`locales/`), and meant to meet WCAG 2.1 AA (contrast,
 * visible focus, labels, focus order, `lang`).
 */
import { createHash } from "node:crypto"
import type { Interaction } from "@latchkey/core"
import { enrolmentHtml, recoveryCodesHtml } from "./internal/enrolment.js"
import {
  alertIcon,
  type Common,
  checkIcon,
  escapeHtml,
  framed,
  hidden,
  logo,
  ownPage,
  rich,
  type SignInFields,
  sentence,
  signInForm,
  signInPage,
  stylesheet,
  warnIcon
} from "./internal/html.js"
import type { Catalogue, ProblemText, Reason } from "./locales/Catalogue.js"
import { en } from "./locales/en.js"

/** The account page, and what it shows: published in `Pages`. @public */
export { type AccountPage, account } from "./AccountPage.js"
/** Escaping, emphasised catalogue texts, the stylesheet and the layouts of every page: published in `Pages`. @public */
export { escapeHtml, type Layout, rich, stylesheet } from "./internal/html.js"

/** The CSP source allowing the stylesheet, by hash. */
export const styleSource = `'sha256-${createHash("sha256").update(stylesheet).digest("base64")}'`

/**
 * The Content-Security-Policy of a page: nothing loads but the stylesheet, no
 * framing, and forms submit to this origin and (because browsers apply
 * form-action to the redirects a submission follows) to the client's origin.
 */
export const contentSecurityPolicy = (
  formTargets: ReadonlyArray<string>,
  scripts: ReadonlyArray<string> = []
): string =>
  [
    "default-src 'none'",
    `style-src ${styleSource}`,
    // A page with a passkey script: that script alone, and its calls to this origin's endpoints
    ...(scripts.length === 0 ? [] : [`script-src ${scripts.join(" ")}`, "connect-src 'self'"]),
    `form-action ${formTargets.length === 0 ? "'none'" : formTargets.join(" ")}`,
    "frame-ancestors 'none'",
    "base-uri 'none'"
  ].join("; ")

/** What the sign-in page shows. */
export interface LoginPage extends Common, SignInFields {
  readonly appName: string
  /** Host the user is sent back to afterwards. */
  readonly redirectHost: string
}

/** The sign-in page: fields Username and Password, button Sign in. */
export const login = (p: LoginPage): string => {
  const t = p.catalogue ?? en
  return signInPage(p, t, {
    title: t.signIn.title,
    lead: rich(t.signIn.lead(p.appName)),
    form: signInForm(t, p),
    footer: rich(t.signIn.footer(p.redirectHost))
  })
}

/** What the second sign-in step's page shows. */
export interface FactorPage extends Common {
  /** The application asking, in the authorize flow. */
  readonly appName?: string
  readonly username: string
  /** Where the form posts. */
  readonly action: string
  readonly txn: string
  readonly csrf: string
  /** Hidden fields the form posts back as they are. */
  readonly fields: ReadonlyArray<readonly [string, string]>
  /** Why the last code was refused. */
  readonly problem?: Interaction.FactorProblem
}

/** The second step of a sign-in: one field for a code of the authenticator app or a recovery code. */
export const factor = (p: FactorPage): string => {
  const t = p.catalogue ?? en
  const invalid = p.problem !== undefined ? ` aria-invalid="true"` : ""
  return signInPage(p, t, {
    title: t.factor.title,
    lead: rich(t.factor.lead(p.appName)),
    form: `<div class="account"><span>${rich(t.factor.signedInAs(p.username))}</span></div>
${
  p.problem !== undefined
    ? `<div class="alert" role="alert" id="form-error">${alertIcon}<span>${escapeHtml(t.factor.problems[p.problem])}</span></div>\n`
    : ""
}<form method="post" action="${escapeHtml(p.action)}">
${hidden("txn", p.txn)}
${hidden("csrf_token", p.csrf)}${p.fields.map(([name, value]) => hidden(name, value)).join("")}
<div class="field">
<label for="code">${escapeHtml(t.factor.code)}</label>
<input class="input" id="code" name="code" type="text" inputmode="text" autocomplete="one-time-code" autocapitalize="none" autocorrect="off" spellcheck="false" maxlength="32" required autofocus aria-describedby="code-hint${p.problem !== undefined ? " form-error" : ""}"${invalid}>
<p class="hint" id="code-hint">${escapeHtml(t.factor.hint)}</p>
</div>
<div class="submit"><button class="btn btn-primary" type="submit">${escapeHtml(t.factor.submit)}</button></div>
</form>`,
    footer: rich(t.frame.securedBy(p.productName))
  })
}

/** What the authorize flow's enrolment page shows. */
export interface EnrolPage extends Common {
  /** The application that requires a second step. */
  readonly appName: string
  readonly username: string
  /** The pending app: its secret and `otpauth://` URI. */
  readonly enrolment: Interaction.AuthenticatorEnrolment
  /** Where the form posts. */
  readonly action: string
  readonly txn: string
  readonly csrf: string
  /** Hidden fields the form posts back as they are. */
  readonly fields: ReadonlyArray<readonly [string, string]>
  /** Why the last code was refused. */
  readonly problem?: Interaction.FactorProblem
  /** The account page, where a passkey can be added instead (passkeys on). */
  readonly accountHref?: string
}

/** Add an authenticator app in the authorize flow: its QR code, secret and setup link, and a code field. */
export const enrol = (p: EnrolPage): string => {
  const t = p.catalogue ?? en
  const invalid = p.problem !== undefined ? ` aria-invalid="true"` : ""
  return signInPage(p, t, {
    title: t.enrol.title,
    lead: rich(t.enrol.lead(p.appName)),
    form: `<div class="account"><span>${rich(t.factor.signedInAs(p.username))}</span></div>
${
  p.problem !== undefined
    ? `<div class="alert" role="alert" id="form-error">${alertIcon}<span>${escapeHtml(t.account.authenticator.problems[p.problem])}</span></div>\n`
    : ""
}${enrolmentHtml(t, p.enrolment)}
<form method="post" action="${escapeHtml(p.action)}">
${hidden("txn", p.txn)}
${hidden("csrf_token", p.csrf)}${p.fields.map(([name, value]) => hidden(name, value)).join("")}
<div class="field">
<label for="code">${escapeHtml(t.account.authenticator.code)}</label>
<input class="input" id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="32" required autofocus${p.problem !== undefined ? ` aria-describedby="form-error"` : ""}${invalid}>
</div>
<div class="submit"><button class="btn btn-primary" type="submit">${escapeHtml(t.enrol.submit)}</button></div>
</form>${
      p.accountHref === undefined
        ? ""
        : `\n<p class="fine">${escapeHtml(t.enrol.passkey)} <a href="${escapeHtml(p.accountHref)}">${escapeHtml(t.enrol.accountLink)}</a></p>`
    }`,
    footer: rich(t.frame.securedBy(p.productName))
  })
}

/** What the page after an enrolment in the authorize flow shows. */
export interface EnrolledPage extends Common {
  readonly appName: string
  /** The recovery codes, shown this once. */
  readonly recoveryCodes: ReadonlyArray<string>
  /** The authorization request again. */
  readonly continueHref: string
}

/** The app added: its recovery codes, shown this once, and Continue to the application. */
export const enrolled = (p: EnrolledPage): string => {
  const t = p.catalogue ?? en
  return signInPage(p, t, {
    title: t.enrol.doneTitle,
    lead: rich(t.enrol.doneLead(p.appName)),
    form: `${recoveryCodesHtml(t, p.recoveryCodes)}
<div class="submit"><a class="btn btn-primary" id="continue" href="${escapeHtml(p.continueHref)}">${escapeHtml(t.enrol.continue)}</a></div>`,
    footer: rich(t.frame.securedBy(p.productName))
  })
}

/** One requested scope and what it allows. */
export interface ScopeLine {
  readonly name: string
  readonly description: string
}

/** What the consent page shows. */
export interface ConsentPage extends Common {
  readonly appName: string
  readonly redirectHost: string
  readonly username: string
  readonly scopes: ReadonlyArray<ScopeLine>
  /** Where Allow and Deny post. */
  readonly action: string
  /** Where "switch account" posts. */
  readonly switchAction: string
  /** The consents page, linked from the fine print. */
  readonly consentsHref?: string
  readonly txn: string
  readonly csrf: string
}

const scopeItems = (t: Catalogue, productName: string, scopes: ReadonlyArray<ScopeLine>): string =>
  scopes.length === 0
    ? `<li>${checkIcon}<div><span class="scope-desc">${escapeHtml(t.consent.identityOnly(productName))}</span></div></li>`
    : scopes
        .map(
          (s) =>
            `<li>${checkIcon}<div><span class="scope-desc">${escapeHtml(s.description)}</span><span class="scope-name">${escapeHtml(s.name)}</span></div></li>`
        )
        .join("\n")

/** The consent page: the application's name, the scopes with descriptions, buttons Deny and Allow. */
export const consent = (p: ConsentPage): string => {
  const t = p.catalogue ?? en
  const initial = escapeHtml(Array.from(p.appName.trim())[0]?.toUpperCase() ?? "?")
  return framed(p, t, {
    title: t.consent.title(p.appName),
    body: `<div class="pair" aria-hidden="true"><span class="avatar">${initial}</span><span class="dots"></span><span class="avatar avatar-brand">${logo}</span></div>
<h1 class="center">${rich(t.consent.heading(p.appName, p.productName))}</h1>
<div class="account"><span>${rich(t.consent.signedInAs(p.username))}</span><form class="inline" method="post" action="${escapeHtml(p.switchAction)}">${hidden("txn", p.txn)}${hidden("csrf_token", p.csrf)}${hidden("switch_account", "1")}<button class="btn btn-link" type="submit">${escapeHtml(t.consent.notYou)}</button></form></div>
<h2 id="scopes-heading">${escapeHtml(t.consent.willAllow(p.appName))}</h2>
<ul class="scopes" aria-labelledby="scopes-heading">
${scopeItems(t, p.productName, p.scopes)}
</ul>
<form method="post" action="${escapeHtml(p.action)}">
${hidden("txn", p.txn)}
${hidden("csrf_token", p.csrf)}
<div class="actions">
<button class="btn btn-secondary" type="submit" name="decision" value="deny">${escapeHtml(t.consent.deny)}</button>
<button class="btn btn-primary" type="submit" name="decision" value="allow">${escapeHtml(t.consent.allow)}</button>
</div>
</form>
<p class="fine">${escapeHtml(t.consent.trust(p.appName, p.productName))}${
      p.consentsHref === undefined
        ? ""
        : ` <a href="${escapeHtml(p.consentsHref)}">${escapeHtml(t.consent.manage)}</a>`
    }</p>`,
    footer: rich(t.consent.footer(p.redirectHost))
  })
}

/**
 * What the consents page shows to nobody signed in: a sign-in form that comes back to it; with
 * `purpose` `account`, the account page's.
 */
export interface ConsentsSignInPage extends Common, SignInFields {
  readonly purpose?: "account"
}

/** The consents (or account) page before sign-in. */
export const consentsSignIn = (p: ConsentsSignInPage): string => {
  const t = p.catalogue ?? en
  const texts = p.purpose === "account" ? t.account : t.consents
  return signInPage(p, t, {
    title: texts.signInTitle,
    lead: escapeHtml(texts.signInLead(p.productName)),
    form: signInForm(t, p, `\n${hidden("action", "signin")}`),
    footer: rich(t.frame.securedBy(p.productName))
  })
}

/** One authorised application on the consents page. */
export interface AuthorisedApp {
  readonly appKey: string
  readonly appName: string
  /** Epoch seconds of the consent. */
  readonly grantedAt: number
  readonly scopes: ReadonlyArray<ScopeLine>
}

/** What the consents page shows to a signed-in user. */
export interface ConsentsPage extends Common {
  readonly username: string
  readonly apps: ReadonlyArray<AuthorisedApp>
  /** The name of the application whose access was just withdrawn. */
  readonly withdrawn?: string
  /** Where Withdraw and Sign out post. */
  readonly action: string
  readonly txn: string
  readonly csrf: string
}

/** The consents page: each authorised application, its scopes and a Withdraw button; Sign out. */
export const consents = (p: ConsentsPage): string => {
  const t = p.catalogue ?? en
  const ticket = `${hidden("txn", p.txn)}${hidden("csrf_token", p.csrf)}`
  const apps =
    p.apps.length === 0
      ? `<p class="empty">${escapeHtml(t.consents.empty)}</p>`
      : `<ul class="apps">
${p.apps
  .map((app, i) => {
    const id = `app-${i}`
    return `<li class="app">
<h2 id="${id}">${escapeHtml(app.appName)}</h2>
<p class="app-meta">${escapeHtml(t.consents.allowedOn(t.date(app.grantedAt)))}</p>
<ul class="scopes" aria-label="${escapeHtml(t.consents.scopesOf(app.appName))}">
${scopeItems(t, p.productName, app.scopes)}
</ul>
<form method="post" action="${escapeHtml(p.action)}">${ticket}${hidden("action", "withdraw")}${hidden("app_key", app.appKey)}<button class="btn btn-secondary" type="submit" aria-describedby="${id}">${escapeHtml(t.consents.withdraw)}</button></form>
</li>`
  })
  .join("\n")}
</ul>
<p class="fine">${escapeHtml(t.consents.withdrawNote)}</p>`
  return ownPage(
    p,
    t,
    {
      title: t.consents.title,
      lead: t.consents.lead(p.productName),
      notice: p.withdrawn === undefined ? undefined : rich(t.consents.withdrawn(p.withdrawn)),
      username: p.username,
      action: p.action,
      ticket
    },
    apps
  )
}

/** What the end session endpoint's question shows: who asks, who is signed in, and Sign out. */
export interface LogoutConfirmPage extends Common {
  /** The application the request names, when it names a registered one. */
  readonly appName?: string
  readonly username: string
  /** Where the form posts. */
  readonly action: string
  readonly csrf: string
  /** The logout request's parameters, posted back as hidden fields. */
  readonly fields: ReadonlyArray<readonly [string, string]>
}

/** The question of a logout that does not prove which application asks: Sign out? */
export const logoutConfirm = (p: LogoutConfirmPage): string => {
  const t = p.catalogue ?? en
  return framed(p, t, {
    title: t.logout.title,
    body: `<h1>${escapeHtml(t.logout.title)}</h1>
<p class="lead">${rich(t.logout.lead(p.appName, p.productName))}</p>
<div class="account"><span>${rich(t.logout.signedInAs(p.username))}</span></div>
<form method="post" action="${escapeHtml(p.action)}">
${p.fields.map(([name, value]) => hidden(name, value)).join("")}${hidden("csrf_token", p.csrf)}
<div class="submit"><button class="btn btn-primary" type="submit">${escapeHtml(t.logout.confirm)}</button></div>
</form>`,
    footer: rich(t.frame.securedBy(p.productName))
  })
}

/** The page after a logout that names nowhere to go back to. */
export const signedOut = (p: Common): string => {
  const t = p.catalogue ?? en
  return framed(p, t, {
    title: t.logout.signedOutTitle,
    body: `<h1>${escapeHtml(t.logout.signedOutTitle)}</h1>
<p class="lead">${escapeHtml(t.logout.signedOutLead(p.productName))}</p>`,
    footer: rich(t.frame.securedBy(p.productName))
  })
}

/** What an error page shows. */
export interface ErrorPage extends Common {
  readonly status: number
  /** The OAuth error code, shown small. */
  readonly error: string
  /** The technical description (English), shown folded under the code. */
  readonly description: string
  /** What the page explains. */
  readonly problem: Interaction.Problem
  /** A link to start again, when there is a safe one. */
  readonly back?: Interaction.WayBack
  /** The value received that the page names, shown as text (the unregistered `redirect_uri`). */
  readonly received?: string
}

/** An error page shown instead of redirecting (the client or redirect URI cannot be trusted). */
export const error = (p: ErrorPage): string => {
  const t = p.catalogue ?? en
  // The entry for this reason takes this problem: the catalogue's type pairs them
  const text = t.error.problems[p.problem.reason] as unknown as ProblemText<Reason>
  const explain = text.explain(p.problem, p.productName)
  const way =
    p.back === undefined
      ? `<p class="next">${escapeHtml(t.error.closeWindow)}</p>`
      : `<p><a class="btn btn-primary" href="${escapeHtml(p.back.href)}">${escapeHtml(
          p.back.to === "consents"
            ? t.error.backToConsents
            : p.back.to === "account"
              ? t.error.backToAccount
              : t.error.tryAgain
        )}</a></p>`
  return framed(p, t, {
    title: text.title,
    body: `${warnIcon}
<h1>${escapeHtml(text.title)}</h1>
<p class="lead">${escapeHtml(explain)}</p>
${way}
${
  p.received === undefined
    ? ""
    : `<p class="fine received">${escapeHtml(t.error.received)} <code class="code">${escapeHtml(p.received)}</code></p>\n`
}<p class="fine">${escapeHtml(t.error.errorCode)} <span class="code">${escapeHtml(p.error)}</span></p>
<details class="fine"><summary>${escapeHtml(t.error.details)}</summary><p lang="en">${escapeHtml(sentence(p.description))}</p></details>`,
    footer: rich(t.frame.securedBy(p.productName))
  })
}

/**
 * The passkey registration script a page of the account includes (`window.latchkeyRegisterPasskey`),
 * and the CSP source that allows it (with `connect-src 'self'`): `contentSecurityPolicy(targets, [source])`.
 */
export {
  registerScript as passkeyRegistrationScript,
  registerScriptSource as passkeyRegistrationSource
} from "./internal/passkeys.js"
