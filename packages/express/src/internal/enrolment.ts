/**
 * What the account page's Authenticator section and the flow's enrolment page show alike: the
 * pending app's QR code, secret and setup link, and the recovery codes just made.
 */
import type { Interaction } from "@latchkey/core"
import { renderSVG } from "uqr"
import type { Catalogue } from "../locales/Catalogue.js"
import { escapeHtml } from "./html.js"

/** The QR code of an `otpauth://` URI, as inline SVG (the pages' CSP loads no image). */
const qrCode = (uri: string, label: string): string =>
  renderSVG(uri, { ecc: "M", border: 2 }).replace(
    "<svg ",
    `<svg class="qr" role="img" aria-label="${escapeHtml(label)}" `
  )

/** A pending app: how to add it, its QR code, its secret as text and its setup link. */
export const enrolmentHtml = (t: Catalogue, enrolment: Interaction.AuthenticatorEnrolment): string => {
  const texts = t.account.authenticator
  return `<p class="lead">${escapeHtml(texts.scan)}</p>
${qrCode(enrolment.uri, texts.qrLabel)}
<p>${escapeHtml(texts.secret)} <code class="code" id="totp-secret">${escapeHtml(enrolment.secret)}</code></p>
<p class="fine">${escapeHtml(texts.uri)} <code class="code" id="totp-uri">${escapeHtml(enrolment.uri)}</code></p>`
}

/** Recovery codes just made: their heading, what to do with them, and the codes. */
export const recoveryCodesHtml = (t: Catalogue, codes: ReadonlyArray<string>): string => {
  const texts = t.account.authenticator
  return `<h3>${escapeHtml(texts.codesHeading)}</h3>
<p class="lead">${escapeHtml(texts.codesNote)}</p>
<ul class="recovery-codes">${codes.map((c) => `<li><code class="code">${escapeHtml(c)}</code></li>`).join("")}</ul>`
}
