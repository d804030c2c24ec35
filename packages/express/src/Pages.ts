/**
 * The server-rendered sign-in, consent and error pages: self-contained HTML with
 * one inline stylesheet (allowed by its hash in the CSP), every reflected value
 * escaped, a desktop layout (`client_type=PC`) and a mobile-first one (`Mobile`).
 */
import { createHash } from "node:crypto"

/** Page layout, chosen by `client_type`. */
export type Layout = "PC" | "Mobile"

/** Escape a value for HTML text and double-quoted attributes. */
export const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;"
  )

/** The one stylesheet of every page. */
export const stylesheet = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;font-size:16px;line-height:1.5;color:#1f2937;background:#f3f4f6;-webkit-font-smoothing:antialiased}
.shell{min-height:100vh;display:flex;flex-direction:column;align-items:center;justify-content:center;padding:48px 16px}
.brand{display:flex;align-items:center;gap:10px;font-weight:650;font-size:18px;letter-spacing:-.01em;color:#111827;margin:0 0 24px}
.brand svg{width:30px;height:30px;flex:none}
.card{width:100%;max-width:440px;background:#fff;border:1px solid #e5e7eb;border-radius:16px;box-shadow:0 1px 2px rgba(16,24,40,.04),0 16px 40px rgba(16,24,40,.08);padding:40px 40px 32px}
h1{font-size:24px;line-height:1.3;margin:0 0 8px;letter-spacing:-.02em;font-weight:650;color:#111827}
h2{font-size:14px;font-weight:600;margin:24px 0 12px;color:#374151}
.lead{margin:0 0 28px;color:#4b5563}
.lead strong,h1 strong{color:#111827;font-weight:650}
.field{margin:0 0 18px}
label{display:block;font-weight:600;font-size:14px;margin:0 0 6px;color:#374151}
.input{display:block;width:100%;font:inherit;padding:11px 13px;border:1px solid #d1d5db;border-radius:10px;background:#fff;color:#111827;transition:border-color .15s,box-shadow .15s}
.input:focus{outline:none;border-color:#4f46e5;box-shadow:0 0 0 4px rgba(79,70,229,.16)}
.input[aria-invalid=true]{border-color:#dc2626}
.btn{display:flex;align-items:center;justify-content:center;width:100%;font:inherit;font-weight:600;padding:12px 18px;border-radius:10px;border:1px solid transparent;cursor:pointer;transition:background-color .15s,border-color .15s}
.btn:focus-visible{outline:3px solid rgba(79,70,229,.5);outline-offset:2px}
.btn-primary{background:#4f46e5;color:#fff;box-shadow:0 1px 2px rgba(16,24,40,.12)}
.btn-primary:hover{background:#4338ca}
.btn-secondary{background:#fff;color:#374151;border-color:#d1d5db}
.btn-secondary:hover{background:#f9fafb;border-color:#9ca3af}
.btn-link{display:inline;width:auto;padding:0;border:0;background:none;color:#4f46e5;font-weight:600;font-size:inherit}
.btn-link:hover{text-decoration:underline}
form.inline{display:inline}
.submit{margin-top:26px}
.alert{display:flex;gap:10px;align-items:flex-start;padding:12px 14px;border-radius:10px;background:#fef2f2;border:1px solid #fecaca;color:#991b1b;font-size:14px;margin:0 0 22px}
.alert svg{width:18px;height:18px;flex:none;margin-top:1px}
.pair{display:flex;align-items:center;justify-content:center;gap:12px;margin:0 0 24px}
.avatar{width:52px;height:52px;border-radius:14px;display:flex;align-items:center;justify-content:center;font-weight:700;font-size:22px;color:#fff;background:linear-gradient(135deg,#0ea5e9,#6366f1)}
.avatar-brand{background:#eef2ff}
.avatar-brand svg{width:30px;height:30px}
.dots{width:44px;border-top:2px dotted #c7cbd3}
.center{text-align:center}
h1.center{font-size:22px}
.account{display:flex;align-items:center;justify-content:space-between;gap:12px;padding:10px 14px;border:1px solid #e5e7eb;border-radius:10px;background:#f9fafb;font-size:14px;color:#4b5563;margin:20px 0 8px}
.account strong{color:#111827}
.scopes{list-style:none;margin:0;padding:0;border:1px solid #e5e7eb;border-radius:12px}
.scopes li{display:flex;gap:12px;align-items:flex-start;padding:14px 16px}
.scopes li+li{border-top:1px solid #f0f1f4}
.scopes svg{width:20px;height:20px;flex:none;margin-top:2px}
.scope-desc{color:#111827;font-weight:500}
.scope-name{display:block;margin-top:2px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px;color:#6b7280}
.actions{display:flex;gap:12px;margin-top:28px}
.fine{margin:20px 0 0;font-size:13px;color:#6b7280}
.fine strong{color:#374151;font-weight:600}
.code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px;color:#6b7280;background:#f3f4f6;border-radius:6px;padding:2px 6px}
.status-icon{width:48px;height:48px;margin:0 0 20px}
.footer{margin-top:28px;font-size:13px;color:#6b7280;text-align:center}
@media (max-width:520px){.layout-pc .card{padding:28px 22px 24px}.layout-pc .shell{padding:28px 12px}}
.layout-mobile{background:#fff}
.layout-mobile .shell{justify-content:flex-start;padding:0;min-height:100vh}
.layout-mobile .brand{align-self:stretch;margin:0;padding:14px 20px;font-size:17px;border-bottom:1px solid #eef0f3;background:#fff;position:sticky;top:0;z-index:1}
.layout-mobile .brand svg{width:26px;height:26px}
.layout-mobile .card{max-width:520px;border:0;box-shadow:none;border-radius:0;padding:32px 20px 24px;flex:1;display:flex;flex-direction:column}
.layout-mobile h1{font-size:26px}
.layout-mobile .input{font-size:17px;padding:14px 15px;border-radius:12px}
.layout-mobile .btn{font-size:17px;padding:15px 18px;border-radius:12px}
.layout-mobile .btn-link{padding:0;font-size:inherit}
.layout-mobile .actions{flex-direction:column-reverse;gap:10px;margin-top:auto;padding-top:28px}
.layout-mobile .submit{margin-top:30px}
.layout-mobile .pair{justify-content:flex-start}
.layout-mobile .center{text-align:left}
.layout-mobile .footer{margin:0;padding:16px 20px calc(16px + env(safe-area-inset-bottom));border-top:1px solid #eef0f3;align-self:stretch;text-align:left}
`

/** The CSP source allowing the stylesheet, by hash. */
export const styleSource = `'sha256-${createHash("sha256").update(stylesheet).digest("base64")}'`

/**
 * The Content-Security-Policy of a page: nothing loads but the stylesheet, no
 * framing, and forms submit to this origin and (because browsers apply
 * form-action to the redirects a submission follows) to the client's origin.
 */
export const contentSecurityPolicy = (formTargets: ReadonlyArray<string>): string =>
  [
    "default-src 'none'",
    `style-src ${styleSource}`,
    `form-action ${formTargets.length === 0 ? "'none'" : formTargets.join(" ")}`,
    "frame-ancestors 'none'",
    "base-uri 'none'"
  ].join("; ")

const logo = `<svg viewBox="0 0 32 32" aria-hidden="true" focusable="false"><rect width="32" height="32" rx="9" fill="#4f46e5"/><path d="M11 14.5V11a5 5 0 0 1 10 0v3.5" fill="none" stroke="#fff" stroke-width="2.4" stroke-linecap="round"/><rect x="8.5" y="14" width="15" height="11" rx="3" fill="#fff"/><circle cx="16" cy="19.5" r="1.8" fill="#4f46e5"/></svg>`

const alertIcon = `<svg viewBox="0 0 20 20" aria-hidden="true" focusable="false"><circle cx="10" cy="10" r="9" fill="#dc2626"/><path d="M10 5.5v5.5" stroke="#fff" stroke-width="2" stroke-linecap="round"/><circle cx="10" cy="14.5" r="1.2" fill="#fff"/></svg>`

const checkIcon = `<svg viewBox="0 0 20 20" aria-hidden="true" focusable="false"><circle cx="10" cy="10" r="10" fill="#e0e7ff"/><path d="M6 10.5l2.6 2.6L14 7.8" fill="none" stroke="#4f46e5" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"/></svg>`

const warnIcon = `<svg class="status-icon" viewBox="0 0 48 48" aria-hidden="true" focusable="false"><circle cx="24" cy="24" r="24" fill="#fef3c7"/><path d="M24 13.5v13" stroke="#b45309" stroke-width="3.4" stroke-linecap="round"/><circle cx="24" cy="33.5" r="2.3" fill="#b45309"/></svg>`

interface Frame {
  readonly layout: Layout
  readonly productName: string
  readonly title: string
  readonly body: string
  readonly footer: string
}

const frame = (f: Frame): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(f.title)} · ${escapeHtml(f.productName)}</title>
<style>${stylesheet}</style>
</head>
<body class="${f.layout === "Mobile" ? "layout-mobile" : "layout-pc"}">
<div class="shell">
<header class="brand">${logo}<span>${escapeHtml(f.productName)}</span></header>
<main class="card">
${f.body}
</main>
<footer class="footer">${f.footer}</footer>
</div>
</body>
</html>
`

const hidden = (name: string, value: string): string =>
  `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`

// Capitalise a description and end it with a period, leaving identifiers such as `redirect_uri` alone
const sentence = (s: string): string => {
  const first = s.split(" ")[0] ?? ""
  const capitalised = /[_=]/.test(first) ? s : (s[0]?.toUpperCase() ?? "") + s.slice(1)
  return capitalised.replace(/([^.])$/, "$1.")
}

/** What the sign-in page shows. */
export interface LoginPage {
  readonly layout: Layout
  readonly productName: string
  readonly appName: string
  /** Host the user is sent back to afterwards. */
  readonly redirectHost: string
  /** Where the form posts. */
  readonly action: string
  readonly txn: string
  readonly csrf: string
  /** The username to fill in again after a failed attempt. */
  readonly username?: string
  /** An inline error message. */
  readonly error?: string
}

/** The sign-in page: fields Username and Password, button Sign in. */
export const login = (p: LoginPage): string => {
  const invalid = p.error !== undefined ? ` aria-invalid="true" aria-describedby="form-error"` : ""
  const hasUser = p.username !== undefined && p.username.length > 0
  return frame({
    layout: p.layout,
    productName: p.productName,
    title: "Sign in",
    body: `<h1>Sign in</h1>
<p class="lead">to continue to <strong>${escapeHtml(p.appName)}</strong></p>
${
  p.error !== undefined
    ? `<div class="alert" role="alert" id="form-error">${alertIcon}<span>${escapeHtml(sentence(p.error))}</span></div>`
    : ""
}<form method="post" action="${escapeHtml(p.action)}">
${hidden("txn", p.txn)}
${hidden("csrf_token", p.csrf)}
<div class="field">
<label for="username">Username</label>
<input class="input" id="username" name="username" type="text" autocomplete="username" autocapitalize="none" autocorrect="off" spellcheck="false" maxlength="128" required${hasUser ? ` value="${escapeHtml(p.username as string)}"` : " autofocus"}${invalid}>
</div>
<div class="field">
<label for="password">Password</label>
<input class="input" id="password" name="password" type="password" autocomplete="current-password" maxlength="1024" required${hasUser ? " autofocus" : ""}${invalid}>
</div>
<div class="submit"><button class="btn btn-primary" type="submit">Sign in</button></div>
</form>`,
    footer: `After you sign in you will return to <strong>${escapeHtml(p.redirectHost)}</strong>.`
  })
}

/** One requested scope and what it allows. */
export interface ScopeLine {
  readonly name: string
  readonly description: string
}

/** What the consent page shows. */
export interface ConsentPage {
  readonly layout: Layout
  readonly productName: string
  readonly appName: string
  readonly redirectHost: string
  readonly username: string
  readonly scopes: ReadonlyArray<ScopeLine>
  /** Where Allow and Deny post. */
  readonly action: string
  /** Where "switch account" posts. */
  readonly switchAction: string
  readonly txn: string
  readonly csrf: string
}

/** The consent page: the application's name, the scopes with descriptions, buttons Allow and Deny. */
export const consent = (p: ConsentPage): string => {
  const app = escapeHtml(p.appName)
  const initial = escapeHtml(Array.from(p.appName.trim())[0]?.toUpperCase() ?? "?")
  const scopes =
    p.scopes.length === 0
      ? `<li>${checkIcon}<div><span class="scope-desc">Know which ${escapeHtml(p.productName)} account you use</span></div></li>`
      : p.scopes
          .map(
            (s) =>
              `<li>${checkIcon}<div><span class="scope-desc">${escapeHtml(s.description)}</span><span class="scope-name">${escapeHtml(s.name)}</span></div></li>`
          )
          .join("\n")
  return frame({
    layout: p.layout,
    productName: p.productName,
    title: `Allow ${p.appName}?`,
    body: `<div class="pair" aria-hidden="true"><span class="avatar">${initial}</span><span class="dots"></span><span class="avatar avatar-brand">${logo}</span></div>
<h1 class="center"><strong>${app}</strong> wants to access your ${escapeHtml(p.productName)} account</h1>
<div class="account"><span>Signed in as <strong>${escapeHtml(p.username)}</strong></span><form class="inline" method="post" action="${escapeHtml(p.switchAction)}">${hidden("txn", p.txn)}${hidden("csrf_token", p.csrf)}${hidden("switch_account", "1")}<button class="btn btn-link" type="submit">Not you?</button></form></div>
<h2 id="scopes-heading">This will allow ${app} to:</h2>
<ul class="scopes" aria-labelledby="scopes-heading">
${scopes}
</ul>
<form method="post" action="${escapeHtml(p.action)}">
${hidden("txn", p.txn)}
${hidden("csrf_token", p.csrf)}
<div class="actions">
<button class="btn btn-secondary" type="submit" name="decision" value="deny">Deny</button>
<button class="btn btn-primary" type="submit" name="decision" value="allow">Allow</button>
</div>
</form>
<p class="fine">Make sure you trust ${app}. ${escapeHtml(p.productName)} remembers your choice for this application.</p>`,
    footer: `Allow or Deny sends you back to <strong>${escapeHtml(p.redirectHost)}</strong>.`
  })
}

/** What an error page shows. */
export interface ErrorPage {
  readonly layout: Layout
  readonly productName: string
  readonly status: number
  readonly error: string
  readonly description: string
}

const titles: Record<number, string> = {
  403: "This form has expired",
  405: "This address does not take that request",
  429: "Too many attempts",
  500: "Something went wrong on our side",
  503: "Temporarily unavailable"
}

/** An error page shown instead of redirecting (the client or redirect URI cannot be trusted). */
export const error = (p: ErrorPage): string => {
  const title = titles[p.status] ?? "This request can't be completed"
  return frame({
    layout: p.layout,
    productName: p.productName,
    title,
    body: `${warnIcon}
<h1>${escapeHtml(title)}</h1>
<p class="lead">${escapeHtml(sentence(p.description))}</p>
<p class="fine">Error code <span class="code">${escapeHtml(p.error)}</span></p>
<p class="fine">You can close this window and return to the application you came from.</p>`,
    footer: `Secured by ${escapeHtml(p.productName)}`
  })
}
