/**
 * The one Chromium launcher of the browser tests: Debian's Chromium (the tests are skipped
 * without it), headless with the flags every test uses, optionally with `localhost` mapped to the
 * 127.0.0.1 listeners (WebAuthn needs a domain for its RP ID), and a page with a virtual platform
 * authenticator (DevTools protocol `WebAuthn`) for the passkey tests.
 */
import { existsSync } from "node:fs"
import { type Browser, type BrowserContext, type CDPSession, chromium, type Page } from "playwright-core"

/** Debian's Chromium. */
const executablePath = "/usr/bin/chromium"

/** Whether this machine has it: the browser tests are skipped without it. */
export const haveChromium = existsSync(executablePath)

/** How to launch it: with `localhost` resolving to 127.0.0.1 (a passkey server's issuer), and a launch timeout. */
export interface LaunchOptions {
  readonly localhost?: boolean
  readonly timeout?: number
}

/** Headless Chromium. */
export const launchChromium = (options: LaunchOptions = {}): Promise<Browser> =>
  chromium.launch({
    executablePath,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      ...(options.localhost === true ? ["--host-resolver-rules=MAP localhost 127.0.0.1"] : [])
    ],
    ...(options.timeout === undefined ? {} : { timeout: options.timeout })
  })

/** A page with its virtual authenticator, and the DevTools session that drives it. */
export interface AuthenticatorPage {
  readonly page: Page
  readonly cdp: CDPSession
  readonly authenticatorId: string
}

/**
 * A new page of `context` with a virtual platform authenticator (resident keys, user
 * verification; its passkeys backup eligible, as synced ones are, when `synced`).
 */
export const withAuthenticator = async (
  context: BrowserContext,
  synced = false
): Promise<AuthenticatorPage> => {
  const page = await context.newPage()
  const cdp = await context.newCDPSession(page)
  await cdp.send("WebAuthn.enable")
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
      defaultBackupEligibility: synced
    }
  })
  return { page, cdp, authenticatorId }
}
