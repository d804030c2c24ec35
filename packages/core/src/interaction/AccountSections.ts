/**
 * The account page's sections, built from the stores in the order the page shows them: the
 * password form, passkeys (when on), the authenticator app, the signed-in sessions and the trusted
 * devices, and the applications. `AccountPage` renders the page from them and runs its forms.
 */
import { Effect, Option } from "effect"
import * as Paths from "../http/Paths.js"
import { Config } from "../model/Config.js"
import type * as Session from "../security/Session.js"
import { hmac } from "../services/Digest.js"
import { nowSeconds } from "../services/internal/time.js"
import { WebAuthn } from "../services/WebAuthn.js"
import type { DeviceStore } from "../storage/DeviceStore.js"
import type { FactorStore } from "../storage/FactorStore.js"
import { PasskeyStore } from "../storage/PasskeyStore.js"
import { SessionStore } from "../storage/SessionStore.js"
import type { StorageError } from "../storage/StorageError.js"
import type { UserStore } from "../storage/UserStore.js"
import { deviceHere, listedDevices } from "./AccountDevices.js"
import { type AuthenticatorShown, authenticatorSection } from "./Authenticator.js"
import { consentsHref, type OwnPageFrame } from "./Page.js"
import type { AccountSection, PageRequest, PasswordProblem, SignedInSession } from "./View.js"

/** The handle the page lists a session with: never its id nor the digest the store keys it by. */
export const handleOf = (idHash: string) =>
  Effect.flatMap(Config, ({ serverKey }) => hmac(`${serverKey}\u0000latchkey-session-handle`, idHash))

/** What a section of the page is built from: the request, its frame, the signed-in session, the password form's problem. */
export interface SectionContext {
  readonly req: PageRequest
  readonly frame: OwnPageFrame
  readonly session: Session.Session
  readonly problem: Option.Option<PasswordProblem>
  /** What the Authenticator section shows this once. */
  readonly shown: AuthenticatorShown
}

/** The user's live sessions and recorded trusted devices, this browser's marked, and whether this browser is a trusted device of theirs. */
const sessionsSection = ({ req, session }: SectionContext) =>
  Effect.gen(function* () {
    const now = yield* nowSeconds
    const stored = yield* Effect.flatMap(SessionStore, (s) => s.listOf(session.userId as string, now))
    const sessions: Array<SignedInSession> = []
    for (const s of stored) {
      sessions.push({
        handle: yield* handleOf(s.idHash),
        signedInAt: s.authenticatedAt,
        expiresAt: s.expiresAt,
        current: s.idHash === session.idHash
      })
    }
    const here = yield* deviceHere(req, session.userId as string)
    const devices = yield* listedDevices(session.userId as string, here)
    return { _tag: "Sessions", sessions, devices, trusted: Option.isSome(here) } satisfies AccountSection
  })

/** Whether the server has passkeys (a `WebAuthn` service): the passkeys section and forms are there only then. */
export const passkeysOn = Effect.map(Effect.serviceOption(WebAuthn), Option.isSome)

/** The user's passkeys (none: passkeys are off, no section). */
const passkeysSection = ({ req, session }: SectionContext) =>
  Effect.gen(function* () {
    if (!(yield* passkeysOn)) return Option.none<AccountSection>()
    const stored = yield* Effect.flatMap(PasskeyStore, (s) => s.listByUser(session.userId as string))
    return Option.some<AccountSection>({
      _tag: "Passkeys",
      endpoint: req.basePath + Paths.passkeys.account,
      passkeys: stored.map((p) => ({
        credentialId: p.credentialId,
        name: p.name,
        createdAt: p.createdAt,
        lastUsedAt: p.lastUsedAt,
        synced: p.deviceType === "multiDevice"
      }))
    })
  })

/** What a builder of the sections reads from the stores. */
type SectionStores = SessionStore | Config | PasskeyStore | UserStore | FactorStore | DeviceStore

/**
 * The sections of the page, in the order it shows them: a new section (passkeys, an
 * authenticator app) is one more builder here; a builder answers none for a section not shown.
 */
export const sections: ReadonlyArray<
  (ctx: SectionContext) => Effect.Effect<Option.Option<AccountSection>, StorageError, SectionStores>
> = [
  ({ problem }) => Effect.succeed(Option.some({ _tag: "Password", problem })),
  passkeysSection,
  ({ session, shown }) => Effect.map(authenticatorSection(session, shown), Option.some),
  (ctx) => Effect.map(sessionsSection(ctx), Option.some),
  ({ req, frame }) =>
    Effect.succeed(
      Option.some({ _tag: "Applications", href: consentsHref(req, frame.layout, frame.uiLocales) })
    )
]
