/**
 * The account page of a signed-in user (published in `Pages`): its sections in the order the core
 * gives them, each rendered by its entry of `sectionHtml` (a new section of the core is one more
 * entry), every form with the page's good-once ticket, and Sign out.
 */
import type { Interaction } from "@latchkey/core"
import { Option } from "effect"
import { enrolmentHtml, recoveryCodesHtml } from "./internal/enrolment.js"
import { alertIcon, type Common, escapeHtml, hidden, ownPage, rich } from "./internal/html.js"
import * as PasskeyScripts from "./internal/passkeys.js"
import type { Catalogue } from "./locales/Catalogue.js"
import { en } from "./locales/en.js"

/** What the account page shows. */
export interface AccountPage extends Common {
  readonly username: string
  /** The page's sections, in order (`Interaction.AccountSection`). */
  readonly sections: ReadonlyArray<Interaction.AccountSection>
  /** What a form of the page has just done. */
  readonly notice?: Interaction.AccountNotice
  /** Where every form of the page posts. */
  readonly action: string
  readonly txn: string
  readonly csrf: string
}

type SectionOf<T extends Interaction.AccountSection["_tag"]> = Extract<
  Interaction.AccountSection,
  { readonly _tag: T }
>

/** The hidden fields of the page's ticket, in each of its forms. */
const ticketFields = (p: AccountPage): string => `${hidden("txn", p.txn)}${hidden("csrf_token", p.csrf)}`

/** A form of the page: its ticket, its `action`, and its fields and button. */
const pageForm = (p: AccountPage, action: string, inner: string): string =>
  `<form method="post" action="${escapeHtml(p.action)}">${ticketFields(p)}${hidden("action", action)}${inner}</form>`

/** One password field of the password form. */
const passwordField = (
  id: string,
  label: string,
  autocomplete: string,
  invalid: boolean,
  hint?: string
): string => {
  const described = [...(invalid ? ["password-error"] : []), ...(hint !== undefined ? [`${id}-hint`] : [])]
  return `<div class="field">
<label for="${id}">${escapeHtml(label)}</label>
<input class="input" id="${id}" name="${id}" type="password" autocomplete="${autocomplete}" maxlength="1024" required${
    invalid ? ` aria-invalid="true"` : ""
  }${described.length > 0 ? ` aria-describedby="${described.join(" ")}"` : ""}>${
    hint !== undefined ? `\n<p class="hint" id="${id}-hint">${escapeHtml(hint)}</p>` : ""
  }
</div>`
}

/** Change the password: the current one, the new one twice. */
const passwordSection = (p: AccountPage, t: Catalogue, s: SectionOf<"Password">): string => {
  const texts = t.account.password
  const invalid = Option.isSome(s.problem)
  return `<section class="section" aria-labelledby="password-heading">
<h2 id="password-heading">${escapeHtml(texts.heading)}</h2>
${
  Option.isSome(s.problem)
    ? `<div class="alert" role="alert" id="password-error">${alertIcon}<span>${escapeHtml(texts.problems[s.problem.value])}</span></div>\n`
    : ""
}${pageForm(
  p,
  "password",
  `
${passwordField("current_password", texts.current, "current-password", invalid)}
${passwordField("new_password", texts.next, "new-password", invalid, texts.rules)}
${passwordField("confirm_password", texts.confirm, "new-password", invalid)}
<p class="fine">${escapeHtml(texts.note)}</p>
<div class="submit"><button class="btn btn-primary" type="submit">${escapeHtml(texts.submit)}</button></div>
`
)}
</section>`
}

/** The recorded trusted devices, each with Forget; whether this browser is one, and Forget all other browsers. */
const trustedDevices = (p: AccountPage, t: Catalogue, s: SectionOf<"Sessions">): string => {
  const texts = t.account.devices
  const items = s.devices
    .map((device, i) => {
      const id = `device-${i}`
      return `<li class="app">
<p id="${id}"><strong>${escapeHtml(texts.label(device.browser, device.system))}</strong>${
        device.current ? `<span class="badge">${escapeHtml(texts.thisBrowser)}</span>` : ""
      }</p>
<p class="app-meta">${escapeHtml(texts.trustedSince(t.dateTime(device.trustedAt)))} · ${escapeHtml(texts.lastSignIn(t.dateTime(device.lastSignInAt)))}</p>
${pageForm(
  p,
  "forget_device",
  `${hidden("device", device.handle)}<button class="btn btn-secondary" type="submit" aria-describedby="${id}">${escapeHtml(texts.forgetOne)}</button>`
)}
</li>`
    })
    .join("\n")
  return `<h3 id="devices-heading">${escapeHtml(texts.heading)}</h3>
<p class="lead">${escapeHtml(texts.lead)}</p>${s.devices.length > 0 ? `\n<ul class="devices">\n${items}\n</ul>` : ""}
<p><strong>${escapeHtml(s.trusted ? texts.trusted : texts.notTrusted)}</strong></p>
${pageForm(p, "forget_devices", `<button class="btn btn-secondary" type="submit">${escapeHtml(texts.forget)}</button>`)}`
}

/** One text field of the section's forms. */
const codeField = (id: string, label: string, hint?: string): string =>
  `<div class="field">
<label for="${id}">${escapeHtml(label)}</label>
<input class="input" id="${id}" name="${id === "totp-code" ? "code" : "proof"}" type="${id === "totp-code" ? "text" : "password"}" autocomplete="${id === "totp-code" ? "one-time-code" : "current-password"}" maxlength="1024" required${
    hint !== undefined ? ` aria-describedby="${id}-hint"` : ""
  }>${hint !== undefined ? `\n<p class="hint" id="${id}-hint">${escapeHtml(hint)}</p>` : ""}
</div>`

/** The authenticator app: add one; the pending one's secret, QR code and confirmation; remove it or make new recovery codes. */
const authenticatorSection = (p: AccountPage, t: Catalogue, s: SectionOf<"Authenticator">): string => {
  const texts = t.account.authenticator
  const button = (label: string, kind = "btn-primary") =>
    `<div class="submit"><button class="btn ${kind}" type="submit">${escapeHtml(label)}</button></div>`
  const problem = Option.isSome(s.problem)
    ? `<div class="alert" role="alert">${alertIcon}<span>${escapeHtml(texts.problems[s.problem.value])}</span></div>\n`
    : ""
  const codes = Option.isSome(s.recoveryCodes) ? `${recoveryCodesHtml(t, s.recoveryCodes.value)}\n` : ""
  const body = Option.isSome(s.enrolment)
    ? `${enrolmentHtml(t, s.enrolment.value)}
${pageForm(p, "totp_confirm", `\n${codeField("totp-code", texts.code)}\n${button(texts.confirm)}\n`)}
${pageForm(p, "totp_enrol", button(texts.startOver, "btn-secondary"))}`
    : s.state === "confirmed"
      ? `<p class="lead">${escapeHtml(texts.on(s.recoveryCodesLeft))}</p>
<form method="post" action="${escapeHtml(p.action)}">${ticketFields(p)}
${codeField("totp-proof", texts.proof, texts.proofHint)}
<div class="actions"><button class="btn btn-primary" type="submit" name="action" value="totp_recovery">${escapeHtml(texts.newCodes)}</button><button class="btn btn-secondary" type="submit" name="action" value="totp_remove">${escapeHtml(texts.remove)}</button></div>
</form>`
      : `<p class="lead">${escapeHtml(texts.lead)}</p>
${pageForm(p, "totp_enrol", button(texts.add))}`
  return `<section class="section" aria-labelledby="authenticator-heading">
<h2 id="authenticator-heading">${escapeHtml(texts.heading)}</h2>
${problem}${codes}${body}
</section>`
}

/** The signed-in sessions, this one marked, each other one with Sign out; Sign out everywhere else. */
const sessionsSection = (p: AccountPage, t: Catalogue, s: SectionOf<"Sessions">): string => {
  const texts = t.account.sessions
  const items = s.sessions
    .map((session, i) => {
      const id = `session-${i}`
      const signedIn = session.signedInAt === null ? "" : texts.signedInOn(t.dateTime(session.signedInAt))
      return `<li class="app">
<p id="${id}"><strong>${escapeHtml(signedIn)}</strong>${
        session.current ? `<span class="badge">${escapeHtml(texts.thisDevice)}</span>` : ""
      }</p>
<p class="app-meta">${escapeHtml(texts.until(t.dateTime(session.expiresAt)))}</p>${
        session.current
          ? ""
          : `\n${pageForm(
              p,
              "end_session",
              `${hidden("session", session.handle)}<button class="btn btn-secondary" type="submit" aria-describedby="${id}">${escapeHtml(texts.signOut)}</button>`
            )}`
      }
</li>`
    })
    .join("\n")
  const others = s.sessions.some((session) => !session.current)
  return `<section class="section" aria-labelledby="sessions-heading">
<h2 id="sessions-heading">${escapeHtml(texts.heading)}</h2>
<p class="lead">${escapeHtml(texts.lead)}</p>
<ul class="sessions">
${items}
</ul>${
    others
      ? `\n${pageForm(p, "end_others", `<button class="btn btn-secondary" type="submit">${escapeHtml(texts.signOutOthers)}</button>`)}`
      : ""
  }
${trustedDevices(p, t, s)}
</section>`
}

/** The applications the user authorised: a link to the consents page. */
const applicationsSection = (_: AccountPage, t: Catalogue, s: SectionOf<"Applications">): string => {
  const texts = t.account.applications
  return `<section class="section" aria-labelledby="applications-heading">
<h2 id="applications-heading">${escapeHtml(texts.heading)}</h2>
<p class="lead">${escapeHtml(texts.lead)}</p>
<p><a href="${escapeHtml(s.href)}">${escapeHtml(texts.link)}</a></p>
</section>`
}

/** The user's passkeys, each with Rename and Remove; Add (shown by the page's script where the browser has WebAuthn). */
const passkeysSection = (p: AccountPage, t: Catalogue, s: SectionOf<"Passkeys">): string => {
  const texts = t.account.passkeys
  const items = s.passkeys
    .map((passkey, i) => {
      const id = `passkey-${i}`
      const used =
        passkey.lastUsedAt === null ? texts.neverUsed : texts.lastUsedOn(t.dateTime(passkey.lastUsedAt))
      const credential = hidden("credential_id", passkey.credentialId)
      return `<li class="app">
<p id="${id}"><strong>${escapeHtml(passkey.name)}</strong><span class="badge">${escapeHtml(passkey.synced ? texts.synced : texts.thisDevice)}</span></p>
<p class="app-meta">${escapeHtml(texts.createdOn(t.dateTime(passkey.createdAt)))} · ${escapeHtml(used)}</p>
${pageForm(
  p,
  "rename_passkey",
  `${credential}<div class="field"><label for="${id}-name">${escapeHtml(texts.name)}</label><input class="input" id="${id}-name" name="name" type="text" maxlength="64" required value="${escapeHtml(passkey.name)}" aria-describedby="${id}"></div><button class="btn btn-secondary" type="submit" aria-describedby="${id}">${escapeHtml(texts.rename)}</button>`
)}
${pageForm(p, "remove_passkey", `${credential}<button class="btn btn-secondary" type="submit" aria-describedby="${id}">${escapeHtml(texts.remove)}</button>`)}
</li>`
    })
    .join("\n")
  return `<section class="section" aria-labelledby="passkeys-heading">
<h2 id="passkeys-heading">${escapeHtml(texts.heading)}</h2>
<p class="lead">${escapeHtml(texts.lead)}</p>
${s.passkeys.length === 0 ? `<p class="empty">${escapeHtml(texts.empty)}</p>` : `<ul class="sessions">\n${items}\n</ul>`}
<form id="passkey-add" data-endpoint="${escapeHtml(s.endpoint)}" hidden>
<div class="field"><label for="passkey-add-name">${escapeHtml(texts.name)}</label><input class="input" id="passkey-add-name" name="passkey_name" type="text" maxlength="64" autocomplete="off"></div>
<div class="submit"><button class="btn btn-primary" type="submit">${escapeHtml(texts.add)}</button></div>
<p class="hint" id="passkey-add-error" role="alert" hidden>${escapeHtml(texts.addFailed)}</p>
</form>
<script>${PasskeyScripts.accountScript}</script>
</section>`
}

/** How each kind of section is written: a section the core adds needs its entry here (the type requires it). */
const sectionHtml: {
  readonly [T in Interaction.AccountSection["_tag"]]: (
    p: AccountPage,
    t: Catalogue,
    s: SectionOf<T>
  ) => string
} = {
  Password: passwordSection,
  Authenticator: authenticatorSection,
  Sessions: sessionsSection,
  Applications: applicationsSection,
  Passkeys: passkeysSection
}

const section = (p: AccountPage, t: Catalogue, s: Interaction.AccountSection): string =>
  (sectionHtml[s._tag] as (p: AccountPage, t: Catalogue, s: Interaction.AccountSection) => string)(p, t, s)

/** The account page: who is signed in (and Sign out), what a form has just done, then each section. */
export const account = (p: AccountPage): string => {
  const t = p.catalogue ?? en
  return ownPage(
    p,
    t,
    {
      title: t.account.title,
      lead: t.account.lead(p.productName),
      notice: p.notice === undefined ? undefined : escapeHtml(t.account.notices[p.notice]),
      username: p.username,
      action: p.action,
      ticket: ticketFields(p)
    },
    p.sections.map((s) => section(p, t, s)).join("\n")
  )
}
