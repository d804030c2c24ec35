/**
 * WCAG 2.1 AA audit of every page in Chromium: axe-core (tags wcag2a, wcag2aa, wcag21a,
 * wcag21aa) over the sign-in page (also with an error), the consent page, the consents page
 * signed out, signed in and after a withdrawal, error pages with and without a way back,
 * the end session endpoint's question and signed-out page, and the account page signed out,
 * signed in (passkeys on, with a passkey added on the page by a virtual authenticator) and with
 * its password form refused, in both layouts and both languages. Axe's
 * source is injected into the page, which the
 * pages' CSP forbids: only these audit contexts bypass it. Keyboard focus is checked too:
 * every control gets a visible focus indicator, in top-to-bottom reading order.
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Browser, Page } from "playwright-core"
import { type Callback, startCallback } from "./browserFlows.js"
import { haveChromium, launchChromium, withAuthenticator } from "./chromium.js"
import { createApp, createUser, freePort, type ServerProcess, spawnServer, tempDir } from "./helpers.js"

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

const tmp = tempDir()
const db = join(tmp.dir, "accessibility.sqlite")
const password = "accessibility password"
let server: ServerProcess
let browser: Browser
let callback: Callback
let appKey: string

const combinations = [
  { layout: "PC", lang: "en", viewport: { width: 1280, height: 860 }, isMobile: false },
  { layout: "PC", lang: "zh-CN", viewport: { width: 1280, height: 860 }, isMobile: false },
  { layout: "Mobile", lang: "en", viewport: { width: 390, height: 844 }, isMobile: true },
  { layout: "Mobile", lang: "zh-CN", viewport: { width: 390, height: 844 }, isMobile: true }
] as const

const userOf = (c: (typeof combinations)[number]) => `a11y-${c.layout}-${c.lang}`.toLowerCase()

beforeAll(async () => {
  callback = await startCallback()
  const app = await createApp(db, [
    "--name",
    "Acme Notes",
    "--redirect-uri",
    `${callback.base}/cb`,
    "--scope",
    "profile,email,notes.read",
    "--grant-types",
    "authorization_code,refresh_token"
  ])
  appKey = app.app_key
  for (const c of combinations) await createUser(db, userOf(c), password, {}, true)
  const port = await freePort()
  server = await spawnServer({
    LATCHKEY_DB: db,
    PORT: String(port),
    // Passkeys on: WebAuthn needs a domain, so the issuer is localhost, mapped to the 127.0.0.1 listener
    LATCHKEY_ISSUER: `http://localhost:${port}`,
    LATCHKEY_PASSKEYS: "on",
    LATCHKEY_SCOPE_DESCRIPTIONS: JSON.stringify({
      profile: { en: "See your name and profile picture", "zh-CN": "查看你的姓名和头像" },
      email: { en: "See your email address", "zh-CN": "查看你的电子邮件地址" },
      "notes.read": "Read your notes"
    })
  })
  browser = await launchChromium({ localhost: true })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await callback?.close()
  tmp.cleanup()
})

interface Violation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<string>; readonly failureSummary?: string }>
}

/** Run axe on the page with the WCAG 2.1 A and AA rules; returns the violations. */
const audit = async (page: Page): Promise<ReadonlyArray<Violation>> => {
  await page.addScriptTag({ content: axeSource })
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (...args: Array<unknown>) => Promise<unknown> } }).axe
    const result = (await axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
      resultTypes: ["violations"]
    })) as { violations: Array<Violation> }
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary ?? "" }))
    }))
  })
}

/**
 * Tab through the page from the top: every focusable control is reached, shows a visible focus
 * indicator (an outline of at least 2px), and comes no higher on the screen than the one before.
 */
const focusWalk = async (page: Page): Promise<ReadonlyArray<string>> => {
  const expected = await page.evaluate(
    () =>
      document.querySelectorAll(
        "a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]:not([tabindex='-1'])"
      ).length
  )
  // Start from the top of the page (the sign-in page autofocuses a field)
  await page.evaluate(() => {
    const top = document.querySelector("header") as HTMLElement
    top.tabIndex = -1
    top.focus()
    top.removeAttribute("tabindex")
  })
  const seen: Array<{ name: string; top: number; left: number; outline: string }> = []
  for (let i = 0; i < expected; i++) {
    await page.keyboard.press("Tab")
    seen.push(
      await page.evaluate(() => {
        const el = document.activeElement as HTMLElement
        const style = getComputedStyle(el)
        const box = el.getBoundingClientRect()
        return {
          name: `${el.tagName.toLowerCase()}:${(el.textContent ?? "").trim() || el.getAttribute("name") || ""}`,
          top: box.top + window.scrollY,
          left: box.left + window.scrollX,
          outline: `${style.outlineStyle} ${style.outlineWidth}`
        }
      })
    )
  }
  const problems: Array<string> = []
  const names = new Set(seen.map((s) => s.name))
  if (names.size !== expected) problems.push(`reached ${names.size} of ${expected} controls: ${[...names]}`)
  seen.forEach((s, i) => {
    const [style, width] = s.outline.split(" ")
    if (style === "none" || Number.parseFloat(width ?? "0") < 2)
      problems.push(`${s.name}: no visible focus (${s.outline})`)
    const before = seen[i - 1]
    if (before !== undefined) {
      const sameRow = Math.abs(s.top - before.top) < 8
      if (sameRow ? s.left < before.left : s.top < before.top)
        problems.push(`${s.name} comes before ${before.name} on screen`)
    }
  })
  return problems
}

describe.skipIf(!haveChromium)("accessibility (axe-core, WCAG 2.1 AA)", () => {
  for (const c of combinations) {
    it(`every page, ${c.layout} layout, ${c.lang}`, async () => {
      const context = await browser.newContext({
        viewport: c.viewport,
        isMobile: c.isMobile,
        deviceScaleFactor: c.isMobile ? 2 : 1,
        bypassCSP: true
      })
      const base = server.base
      const view = `client_type=${c.layout}&ui_locales=${encodeURIComponent(c.lang)}`
      const authorize = (extra: Record<string, string>) =>
        `${base}/oauth2/oauth2/authorize?${new URLSearchParams({
          response_type: "code",
          client_id: appKey,
          redirect_uri: `${callback.base}/cb`,
          state: "a11y",
          client_type: c.layout,
          ui_locales: c.lang,
          ...extra
        })}`
      const report: Array<string> = []
      const check = async (page: Page, name: string, keyboard = true) => {
        const lang = await page.getAttribute("html", "lang")
        if (lang !== c.lang) report.push(`${name}: lang="${lang}"`)
        const layout = await page.getAttribute("body", "class")
        if (layout !== `layout-${c.layout.toLowerCase()}`) report.push(`${name}: body class ${layout}`)
        for (const v of await audit(page)) {
          report.push(
            `${name}: ${v.id} (${v.impact}) ${v.help}\n${v.nodes.map((n) => `  ${n.target.join(" ")}: ${n.failureSummary}`).join("\n")}`
          )
        }
        if (keyboard) for (const p of await focusWalk(page)) report.push(`${name}: ${p}`)
      }
      try {
        const { page } = await withAuthenticator(context)
        await page.goto(`${base}/oauth2/oauth2/consents?${view}`)
        await check(page, "consents, signed out")
        await page.goto(`${base}/oauth2/oauth2/account?${view}`)
        await check(page, "account, signed out")
        await page.goto(`${base}/oauth2/oauth2/login?${view}`)
        await check(page, "error 405 (no way back)")
        await page.goto(authorize({ client_id: "unknown-app" }))
        await check(page, "error 400 (unknown application)")
        await page.goto(authorize({}))
        await check(page, "sign-in")
        await page.locator("#username").fill(userOf(c))
        await page.locator("#password").fill("not the password")
        await Promise.all([page.waitForLoadState("load"), page.locator("button[type=submit]").click()])
        await page.locator("#form-error").waitFor()
        await check(page, "sign-in with an error")
        await page.locator("#password").fill(password)
        await page.locator("button[type=submit]").click()
        await page.locator("button[value=allow]").waitFor()
        await check(page, "consent")
        await Promise.all([
          page.waitForURL(`${callback.base}/cb?**`),
          page.locator("button[value=allow]").click()
        ])
        await page.goto(`${base}/oauth2/oauth2/consents?${view}`)
        await page.locator("h2#app-0").waitFor()
        await check(page, "consents, signed in")
        await Promise.all([
          page.waitForURL(`${base}/oauth2/oauth2/consents?**withdrawn=**`),
          page.locator("button[aria-describedby=app-0]").click()
        ])
        await page.locator("[role=status]").waitFor()
        await check(page, "consents, after a withdrawal")
        // a form that is no longer good: the error page links back to the consents page
        await page.locator("input[name=txn]").evaluateAll((inputs) => {
          for (const i of inputs) (i as HTMLInputElement).value = "expired"
        })
        await Promise.all([page.waitForLoadState("load"), page.locator("form.inline button").click()])
        await page.locator("a.btn").waitFor()
        await check(page, "error 403 (a way back)")
        await page.goto(`${base}/oauth2/oauth2/account?${view}`)
        await page.locator("#password-heading").waitFor()
        await check(page, "account, no passkey")
        await page.locator("#passkey-add-name").fill("Laptop")
        await Promise.all([
          page.waitForEvent("load"),
          page.locator("#passkey-add button[type=submit]").click()
        ])
        await page.locator("#passkey-0").waitFor()
        await check(page, "account")
        await page.locator("#current_password").fill("not the password")
        await page.locator("#new_password").fill("a new passphrase")
        await page.locator("#confirm_password").fill("a new passphrase")
        await Promise.all([
          page.waitForLoadState("load"),
          page.locator("form:has(input[name=action][value=password]) button[type=submit]").click()
        ])
        await page.locator("#password-error").waitFor()
        await check(page, "account, password refused")
        await page.goto(`${base}/oauth2/oauth2/logout?client_id=${appKey}&${view}`)
        await page.locator("form button[type=submit]").waitFor()
        await check(page, "logout question")
        await Promise.all([page.waitForLoadState("load"), page.locator("form button[type=submit]").click()])
        await page.locator("h1").waitFor()
        await check(page, "signed out")
      } finally {
        await context.close()
      }
      assert.deepStrictEqual(report, [], report.join("\n"))
    }, 60_000)
  }
})
