/**
 * What every page is built of: escaping, the one stylesheet, the icons, the frame of a page in
 * the language of a catalogue, hidden fields and the sign-in form. `Pages` publishes the parts
 * its readers use (`escapeHtml`, `rich`, `stylesheet`, `Layout`); the pages' modules share the rest.
 */
import type { Interaction } from "@latchkey/core"
import type { Catalogue, Rich } from "../locales/Catalogue.js"
import * as PasskeyScripts from "./passkeys.js"

/** Page layout, chosen by `client_type`. */
export type Layout = "PC" | "Mobile"

/** Escape a value for HTML text and double-quoted attributes. */
export const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;"
  )

/** A catalogue text as HTML: every part escaped, the emphasised ones in `<strong>`. */
export const rich = (text: Rich): string =>
  text
    .map((part) =>
      typeof part === "string" ? escapeHtml(part) : `<strong>${escapeHtml(part.strong)}</strong>`
    )
    .join("")

/**
 * The one stylesheet of every page. Colours meet WCAG 2.1 AA on their backgrounds: text at
 * least 4.5:1, control borders and focus indicators at least 3:1 (1.4.3, 1.4.11).
 */
export const stylesheet = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"PingFang SC","Microsoft YaHei","Noto Sans CJK SC",sans-serif;font-size:16px;line-height:1.5;color:#1f2937;background:#f3f4f6;-webkit-font-smoothing:antialiased}
.shell{min-height:100vh;display:flex;flex-direction:column;align-items:center;justify-content:center;padding:48px 16px}
.brand{display:flex;align-items:center;gap:10px;font-weight:650;font-size:18px;letter-spacing:-.01em;color:#111827;margin:0 0 24px}
.brand svg{width:30px;height:30px;flex:none}
.card{width:100%;max-width:440px;background:#fff;border:1px solid #e5e7eb;border-radius:16px;box-shadow:0 1px 2px rgba(16,24,40,.04),0 16px 40px rgba(16,24,40,.08);padding:40px 40px 32px}
h1{font-size:24px;line-height:1.3;margin:0 0 8px;letter-spacing:-.02em;font-weight:650;color:#111827}
h2{font-size:14px;font-weight:600;margin:24px 0 12px;color:#374151}
a{color:#4338ca;text-decoration:underline;text-underline-offset:2px}
a:hover{color:#3730a3}
a:focus-visible,summary:focus-visible,.btn:focus-visible{outline:3px solid #4338ca;outline-offset:2px}
.lead{margin:0 0 28px;color:#4b5563}
.lead strong,h1 strong{color:#111827;font-weight:650}
.field{margin:0 0 18px}
label{display:block;font-weight:600;font-size:14px;margin:0 0 6px;color:#374151}
.input{display:block;width:100%;font:inherit;padding:11px 13px;border:1px solid #6b7280;border-radius:10px;background:#fff;color:#111827;transition:border-color .15s}
.input:focus{outline:3px solid #4338ca;outline-offset:1px;border-color:#4338ca}
.input[aria-invalid=true]{border-color:#b91c1c}
.btn{display:flex;align-items:center;justify-content:center;width:100%;font:inherit;font-weight:600;padding:12px 18px;border-radius:10px;border:1px solid transparent;cursor:pointer;text-decoration:none;text-align:center;transition:background-color .15s,border-color .15s}
.btn-primary{background:#4f46e5;color:#fff;box-shadow:0 1px 2px rgba(16,24,40,.12)}
.btn-primary:hover{background:#4338ca;color:#fff}
.btn-secondary{background:#fff;color:#374151;border-color:#6b7280}
.btn-secondary:hover{background:#f9fafb;border-color:#374151}
.btn-link{display:inline;width:auto;padding:0;border:0;background:none;color:#4338ca;font-weight:600;font-size:inherit;text-decoration:underline;text-underline-offset:2px}
.btn-link:hover{color:#3730a3}
form.inline{display:inline}
.submit{margin-top:26px}
.alert{display:flex;gap:10px;align-items:flex-start;padding:12px 14px;border-radius:10px;background:#fef2f2;border:1px solid #fecaca;color:#991b1b;font-size:14px;margin:0 0 22px}
.alert svg,.notice svg{width:18px;height:18px;flex:none;margin-top:1px}
.notice{display:flex;gap:10px;align-items:flex-start;padding:12px 14px;border-radius:10px;background:#ecfdf5;border:1px solid #a7f3d0;color:#065f46;font-size:14px;margin:0 0 22px}
.notice strong{color:#064e3b}
.pair{display:flex;align-items:center;justify-content:center;gap:12px;margin:0 0 24px}
.avatar{width:52px;height:52px;border-radius:14px;display:flex;align-items:center;justify-content:center;font-weight:700;font-size:22px;color:#fff;background:linear-gradient(135deg,#0369a1,#4338ca)}
.avatar-brand{background:#eef2ff}
.avatar-brand svg{width:30px;height:30px}
.dots{width:44px;border-top:2px dotted #9ca3af}
.center{text-align:center}
h1.center{font-size:22px}
.account{display:flex;align-items:center;justify-content:space-between;gap:12px;padding:10px 14px;border:1px solid #e5e7eb;border-radius:10px;background:#f9fafb;font-size:14px;color:#4b5563;margin:20px 0 8px}
.account strong{color:#111827}
.scopes{list-style:none;margin:0;padding:0;border:1px solid #e5e7eb;border-radius:12px}
.scopes li{display:flex;gap:12px;align-items:flex-start;padding:14px 16px}
.scopes li+li{border-top:1px solid #f0f1f4}
.scopes svg{width:20px;height:20px;flex:none;margin-top:2px}
.scope-desc{color:#111827;font-weight:500}
.scope-name{display:block;margin-top:2px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px;color:#4b5563}
.actions{display:flex;gap:12px;margin-top:28px}
.qr{display:block;width:184px;height:184px;margin:8px 0 12px}
.recovery-codes{list-style:none;margin:0 0 16px;padding:0;display:grid;grid-template-columns:repeat(2,max-content);gap:6px 16px}
.fine{margin:20px 0 0;font-size:13px;color:#4b5563}
.fine strong{color:#374151;font-weight:600}
.next{margin:0 0 8px;color:#374151;font-weight:500}
.code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px;color:#374151;background:#f3f4f6;border-radius:6px;padding:2px 6px}
details.fine summary{cursor:pointer;color:#374151}
details.fine p{margin:8px 0 0;overflow-wrap:anywhere}
.received{overflow-wrap:anywhere}
.status-icon{width:48px;height:48px;margin:0 0 20px}
.apps{list-style:none;margin:24px 0 0;padding:0}
.app{border:1px solid #e5e7eb;border-radius:12px;padding:16px;margin:0 0 14px}
.app h2{margin:0;font-size:17px;color:#111827}
.app-meta{margin:2px 0 12px;font-size:13px;color:#4b5563}
.app .scopes{margin:0 0 14px}
.app .scopes li{padding:10px 12px}
.section{margin:32px 0 0;padding:24px 0 0;border-top:1px solid #e5e7eb}
.section h2{margin:0 0 6px;font-size:17px;color:#111827}
.section .lead{margin:0 0 16px;font-size:14px}
.hint{margin:4px 0 0;font-size:13px;color:#4b5563}
.badge{display:inline-block;margin-left:8px;padding:1px 8px;border-radius:999px;background:#eef2ff;color:#3730a3;font-size:12.5px;font-weight:600}
.sessions{list-style:none;margin:0 0 14px;padding:0}
.empty{margin:24px 0 0;padding:16px;border:1px dashed #9ca3af;border-radius:12px;color:#4b5563;text-align:center}
.footer{margin-top:28px;font-size:13px;color:#4b5563;text-align:center}
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
.layout-mobile .actions{flex-direction:column;gap:10px;margin-top:auto;padding-top:28px}
.layout-mobile .submit{margin-top:30px}
.layout-mobile .pair{justify-content:flex-start}
.layout-mobile .center{text-align:left}
.layout-mobile .footer{margin:0;padding:16px 20px calc(16px + env(safe-area-inset-bottom));border-top:1px solid #eef0f3;align-self:stretch;text-align:left}
`

export const logo = `<svg viewBox="0 0 32 32" aria-hidden="true" focusable="false"><rect width="32" height="32" rx="9" fill="#4f46e5"/><path d="M11 14.5V11a5 5 0 0 1 10 0v3.5" fill="none" stroke="#fff" stroke-width="2.4" stroke-linecap="round"/><rect x="8.5" y="14" width="15" height="11" rx="3" fill="#fff"/><circle cx="16" cy="19.5" r="1.8" fill="#4f46e5"/></svg>`

export const alertIcon = `<svg viewBox="0 0 20 20" aria-hidden="true" focusable="false"><circle cx="10" cy="10" r="9" fill="#dc2626"/><path d="M10 5.5v5.5" stroke="#fff" stroke-width="2" stroke-linecap="round"/><circle cx="10" cy="14.5" r="1.2" fill="#fff"/></svg>`

export const checkIcon = `<svg viewBox="0 0 20 20" aria-hidden="true" focusable="false"><circle cx="10" cy="10" r="10" fill="#e0e7ff"/><path d="M6 10.5l2.6 2.6L14 7.8" fill="none" stroke="#4f46e5" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"/></svg>`

export const doneIcon = `<svg viewBox="0 0 20 20" aria-hidden="true" focusable="false"><circle cx="10" cy="10" r="10" fill="#047857"/><path d="M6 10.5l2.6 2.6L14 7.8" fill="none" stroke="#fff" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"/></svg>`

export const warnIcon = `<svg class="status-icon" viewBox="0 0 48 48" aria-hidden="true" focusable="false"><circle cx="24" cy="24" r="24" fill="#fef3c7"/><path d="M24 13.5v13" stroke="#b45309" stroke-width="3.4" stroke-linecap="round"/><circle cx="24" cy="33.5" r="2.3" fill="#b45309"/></svg>`

export interface Frame {
  readonly layout: Layout
  readonly lang: string
  readonly productName: string
  readonly title: string
  readonly body: string
  readonly footer: string
}

export const frame = (f: Frame): string => `<!doctype html>
<html lang="${escapeHtml(f.lang)}">
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

export const hidden = (name: string, value: string): string =>
  `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`

// Capitalise a description and end it with a period, leaving identifiers such as `redirect_uri` alone
export const sentence = (s: string): string => {
  const first = s.split(" ")[0] ?? ""
  const capitalised = /[_=]/.test(first) ? s : (s[0]?.toUpperCase() ?? "") + s.slice(1)
  return capitalised.replace(/([^.])$/, "$1.")
}

/** What every page takes: its layout, the product's name and the language to write in. */
export interface Common {
  readonly layout: Layout
  readonly productName: string
  /** The language of the page (default English). */
  readonly catalogue?: Catalogue
}

/** The frame of a page in the language of `t`, with the layout and product name every page takes. */
export const framed = (p: Common, t: Catalogue, page: Pick<Frame, "title" | "body" | "footer">): string =>
  frame({ layout: p.layout, lang: t.lang, productName: p.productName, ...page })

/** The fields of a sign-in form, with the error of a failed attempt. */
export interface SignInFields {
  /** Where the form posts. */
  readonly action: string
  readonly txn: string
  readonly csrf: string
  /** The username to fill in again after a failed attempt. */
  readonly username?: string
  /** Why the last attempt failed. */
  readonly error?: Interaction.SignInProblem
  /** "Sign in with a passkey", when the server has passkeys: the endpoints its script posts to. */
  readonly passkey?: Interaction.PasskeyActions
}

/** The passkey button, its error line and its script (hidden until the script finds WebAuthn). */
const passkeyButton = (t: Catalogue, p: Interaction.PasskeyActions): string =>
  `<div class="submit"><button class="btn" type="button" id="passkey" hidden data-challenge="${escapeHtml(p.challenge)}" data-login="${escapeHtml(p.login)}">${escapeHtml(t.signIn.passkey)}</button></div>
<p class="alert" role="alert" id="passkey-error" hidden>${escapeHtml(t.signIn.passkeyFailed)}</p>
<script>${PasskeyScripts.signInScript}</script>`

export const signInForm = (t: Catalogue, p: SignInFields, extra = ""): string => {
  const invalid = p.error !== undefined ? ` aria-invalid="true" aria-describedby="form-error"` : ""
  const hasUser = p.username !== undefined && p.username.length > 0
  return `${
    p.error !== undefined
      ? `<div class="alert" role="alert" id="form-error">${alertIcon}<span>${escapeHtml(t.signIn.problems[p.error])}</span></div>\n`
      : ""
  }<form method="post" action="${escapeHtml(p.action)}">
${hidden("txn", p.txn)}
${hidden("csrf_token", p.csrf)}${extra}
<div class="field">
<label for="username">${escapeHtml(t.signIn.username)}</label>
<input class="input" id="username" name="username" type="text" autocomplete="username${p.passkey === undefined ? "" : " webauthn"}" autocapitalize="none" autocorrect="off" spellcheck="false" maxlength="128" required${hasUser ? ` value="${escapeHtml(p.username as string)}"` : " autofocus"}${invalid}>
</div>
<div class="field">
<label for="password">${escapeHtml(t.signIn.password)}</label>
<input class="input" id="password" name="password" type="password" autocomplete="current-password" maxlength="1024" required${hasUser ? " autofocus" : ""}${invalid}>
</div>
<div class="submit"><button class="btn btn-primary" type="submit">${escapeHtml(t.signIn.submit)}</button></div>${
    p.passkey === undefined ? "" : `\n${passkeyButton(t, p.passkey)}`
  }
</form>`
}

/** A page around a sign-in form: its title as heading, a lead (HTML), the form, a footer (HTML). */
export const signInPage = (
  p: Common,
  t: Catalogue,
  page: { readonly title: string; readonly lead: string; readonly form: string; readonly footer: string }
): string =>
  framed(p, t, {
    title: page.title,
    body: `<h1>${escapeHtml(page.title)}</h1>
<p class="lead">${page.lead}</p>
${page.form}`,
    footer: page.footer
  })

/**
 * One of the user's own pages (consents, account), framed: its heading and lead, what a form of it
 * has just done (`notice`, HTML), who is signed in, and Sign out (posted with `ticket`, the
 * form's hidden fields), then `body`, and the product's footer.
 */
export const ownPage = (
  p: Common,
  t: Catalogue,
  page: {
    readonly title: string
    readonly lead: string
    readonly notice: string | undefined
    readonly username: string
    readonly action: string
    readonly ticket: string
  },
  body: string
): string =>
  framed(p, t, {
    title: page.title,
    body: `<h1>${escapeHtml(page.title)}</h1>
<p class="lead">${escapeHtml(page.lead)}</p>
${
  page.notice === undefined
    ? ""
    : `<div class="notice" role="status">${doneIcon}<span>${page.notice}</span></div>\n`
}<div class="account"><span>${rich(t.consents.signedInAs(page.username))}</span><form class="inline" method="post" action="${escapeHtml(page.action)}">${page.ticket}${hidden("action", "signout")}<button class="btn btn-link" type="submit">${escapeHtml(t.consents.signOut)}</button></form></div>
${body}`,
    footer: rich(t.frame.securedBy(p.productName))
  })
