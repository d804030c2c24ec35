/**
 * The shape of a message catalogue: every text the pages show, in one language. A catalogue
 * is typed as `Catalogue`, so one that lacks a text (or gives a text the wrong parameters)
 * does not compile. Texts are plain: the pages escape every part, so a catalogue cannot
 * inject markup; the parts it wants emphasised it marks with `strong`.
 */
import type { Claims, Console, Interaction, Operator } from "@latchkey/core"

/** A part of a text shown in bold. */
export interface Strong {
  readonly strong: string
}

/** A text with emphasised parts: plain strings and `strong` parts, each escaped when rendered. */
export type Rich = ReadonlyArray<string | Strong>

/** Mark a part of a text to be shown in bold. */
export const strong = (text: string): Strong => ({ strong: text })

/** The codes of the error pages. */
export type Reason = Interaction.Problem["reason"]

/** The title and explanation of one kind of error page. */
export interface ProblemText<R extends Reason> {
  /** The page's heading, in plain words. */
  readonly title: string
  /** What happened and what the reader can do, given what the page knows (e.g. the seconds to wait). */
  readonly explain: (problem: Interaction.Problem & { readonly reason: R }, productName: string) => string
}

/** Every text of the pages in one language. */
export interface Catalogue {
  /** The BCP 47 tag of the language, as written in `<html lang>`. */
  readonly lang: string
  /** A date (epoch seconds), as the consents page shows when an application was allowed. */
  readonly date: (epochSeconds: number) => string
  /** A date and time (epoch seconds, shown in UTC), as the account page shows a session's sign-in. */
  readonly dateTime: (epochSeconds: number) => string
  readonly frame: {
    /** The footer of pages that do not send the reader anywhere. */
    readonly securedBy: (productName: string) => Rich
  }
  readonly signIn: {
    /** The page title and heading. */
    readonly title: string
    readonly lead: (appName: string) => Rich
    readonly username: string
    readonly password: string
    readonly submit: string
    readonly footer: (redirectHost: string) => Rich
    /** The button of a passkey sign-in, when the server has passkeys. */
    readonly passkey: string
    /** The line under it when a passkey sign-in did not succeed. */
    readonly passkeyFailed: string
    /** The message above the form when the sign-in failed. */
    readonly problems: { readonly [P in Interaction.SignInProblem]: string }
  }
  /** The second step of a sign-in: a code of the authenticator app, or a recovery code. */
  readonly factor: {
    /** The page title and heading. */
    readonly title: string
    /** What the page asks, for the application asking (absent on the own pages). */
    readonly lead: (appName: string | undefined) => Rich
    readonly signedInAs: (username: string) => Rich
    readonly code: string
    /** Under the field: a recovery code goes in the same field. */
    readonly hint: string
    readonly submit: string
    /** The message above the form when the code was not right. */
    readonly problems: { readonly [P in Interaction.FactorProblem]: string }
  }
  /**
   * The authorize flow's page adding an authenticator app, for a user without a second factor whose
   * application needs two (the QR code, secret and code field are the account page's texts).
   */
  readonly enrol: {
    /** The page title and heading. */
    readonly title: string
    /** Why: the application requires a second step at sign-in. */
    readonly lead: (appName: string) => Rich
    readonly submit: string
    /** With passkeys on: a passkey can be added on the account page instead (before its link). */
    readonly passkey: string
    /** The account page's link text. */
    readonly accountLink: string
    /** The page after a right code: its title and heading. */
    readonly doneTitle: string
    /** What the app now does, and where Continue leads. */
    readonly doneLead: (appName: string) => Rich
    /** The link to the application's request again. */
    readonly continue: string
  }
  readonly consent: {
    readonly title: (appName: string) => string
    readonly heading: (appName: string, productName: string) => Rich
    readonly signedInAs: (username: string) => Rich
    readonly notYou: string
    readonly willAllow: (appName: string) => string
    /** The only line when no scope is asked for. */
    readonly identityOnly: (productName: string) => string
    /** What each OpenID scope the server understands allows, unless the server describes it itself. */
    readonly openIdScopes: { readonly [S in Claims.SupportedScope]: string }
    /** What a scope allows when the server has no description of it. */
    readonly scopeFallback: (scope: string) => string
    readonly allow: string
    readonly deny: string
    readonly trust: (appName: string, productName: string) => string
    /** The link to the consents page. */
    readonly manage: string
    readonly footer: (redirectHost: string) => Rich
  }
  readonly consents: {
    /** The page title and heading when signed in. */
    readonly title: string
    readonly lead: (productName: string) => string
    readonly signedInAs: (username: string) => Rich
    readonly signOut: string
    readonly empty: string
    readonly allowedOn: (date: string) => string
    /** The label of an application's list of scopes. */
    readonly scopesOf: (appName: string) => string
    readonly withdraw: string
    readonly withdrawNote: string
    /** The confirmation after a withdrawal. */
    readonly withdrawn: (appName: string) => Rich
    /** The heading of the sign-in form when nobody is signed in. */
    readonly signInTitle: string
    readonly signInLead: (productName: string) => string
  }
  readonly logout: {
    /** The confirmation page's title and heading. */
    readonly title: string
    /** Who asks: the application's name, when the request named a registered one. */
    readonly lead: (appName: string | undefined, productName: string) => Rich
    readonly signedInAs: (username: string) => Rich
    readonly confirm: string
    /** The signed-out page's title and heading. */
    readonly signedOutTitle: string
    readonly signedOutLead: (productName: string) => string
  }
  readonly account: {
    /** The page title and heading when signed in. */
    readonly title: string
    readonly lead: (productName: string) => string
    /** The confirmation after a form of the page did its work. */
    readonly notices: { readonly [N in Interaction.AccountNotice]: string }
    readonly password: {
      readonly heading: string
      readonly current: string
      readonly next: string
      readonly confirm: string
      /** What a new password must be. */
      readonly rules: string
      readonly submit: string
      /** What changing it does besides. */
      readonly note: string
      /** The message above the form when the change was refused. */
      readonly problems: { readonly [P in Interaction.PasswordProblem]: string }
    }
    readonly sessions: {
      readonly heading: string
      readonly lead: string
      /** The mark of the session of the browser showing the page. */
      readonly thisDevice: string
      readonly signedInOn: (dateTime: string) => string
      readonly until: (dateTime: string) => string
      readonly signOut: string
      readonly signOutOthers: string
    }
    readonly authenticator: {
      readonly heading: string
      /** What the app is for, before one is added. */
      readonly lead: string
      readonly add: string
      /** How to add the pending app: scan the QR code or type the secret, then enter a code. */
      readonly scan: string
      /** The label of the QR code image. */
      readonly qrLabel: string
      readonly secret: string
      readonly uri: string
      readonly code: string
      readonly confirm: string
      /** The button that makes a new secret for the pending app. */
      readonly startOver: string
      /** The line of a confirmed app, with how many recovery codes are left. */
      readonly on: (recoveryCodesLeft: number) => string
      /** The label of the field proving the user before a change. */
      readonly proof: string
      readonly proofHint: string
      readonly remove: string
      readonly newCodes: string
      /** The heading of the recovery codes just made. */
      readonly codesHeading: string
      /** What to do with them: shown this once. */
      readonly codesNote: string
      readonly problems: { readonly [P in Interaction.AuthenticatorProblem]: string }
    }
    readonly applications: {
      readonly heading: string
      readonly lead: string
      /** The link to the consents page. */
      readonly link: string
    }
    /** The user's passkeys (passkeys on). */
    readonly passkeys: {
      readonly heading: string
      readonly lead: string
      /** The line when the user has none. */
      readonly empty: string
      readonly createdOn: (dateTime: string) => string
      readonly lastUsedOn: (dateTime: string) => string
      readonly neverUsed: string
      /** The mark of a passkey that may be synced to the user's other devices. */
      readonly synced: string
      /** The mark of a passkey bound to one authenticator. */
      readonly thisDevice: string
      /** The label of a passkey's new name, and of the name of one being added. */
      readonly name: string
      readonly rename: string
      readonly remove: string
      readonly add: string
      /** The line under Add when the browser's ceremony did not succeed. */
      readonly addFailed: string
    }
    /** The trusted devices, each with Forget; whether this browser is one, and forgetting the others. */
    readonly devices: {
      readonly heading: string
      readonly lead: string
      readonly trusted: string
      readonly notTrusted: string
      readonly forget: string
      /** A device's name from its label's browser and system (each null when not recognised). */
      readonly label: (browser: string | null, system: string | null) => string
      readonly trustedSince: (dateTime: string) => string
      readonly lastSignIn: (dateTime: string) => string
      /** The mark of this browser's own device. */
      readonly thisBrowser: string
      /** The button that forgets one device. */
      readonly forgetOne: string
    }
    /** The heading of the sign-in form when nobody is signed in. */
    readonly signInTitle: string
    readonly signInLead: (productName: string) => string
  }
  /** The operator console on the admin listener. */
  readonly console: {
    /** The sign-in page's title and heading, and its lead. */
    readonly signInTitle: string
    readonly signInLead: string
    readonly name: string
    readonly password: string
    readonly submit: string
    /** Why a sign-in was refused; `throttled` with the seconds to wait. */
    readonly signInProblems: { readonly [P in Console.SignInProblem]: (seconds: number) => string }
    /** The applications view's title and heading, and its lead. */
    readonly appsTitle: string
    readonly appsLead: string
    /** Who is signed in, with their role's name. */
    readonly signedInAs: (name: string, role: string) => Rich
    readonly roles: { readonly [R in Operator.Role]: string }
    readonly signOut: string
    readonly search: string
    readonly searchSubmit: string
    /** When no application matches the search (or there is none). */
    readonly noApps: string
    readonly appKey: string
    /** The mark of an application without an App Secret. */
    readonly publicClient: string
    readonly created: (date: string) => string
    /** The button that gives an application a new App Secret, and the line under it. */
    readonly rotate: string
    readonly rotateHint: string
    /** The notice above the new secret, shown once. */
    readonly rotated: (appName: string) => Rich
    readonly newSecret: string
    /** The link from an error page back to the applications. */
    readonly back: string
    /** The error pages: title and explanation. */
    readonly problems: {
      readonly [R in Console.ProblemReason]: { readonly title: string; readonly explain: string }
    }
  }
  readonly error: {
    readonly errorCode: string
    /** The label of the value received that the page names (the unregistered `redirect_uri`). */
    readonly received: string
    /** The summary of the technical description, shown folded. */
    readonly details: string
    /** The way back when there is no safe link. */
    readonly closeWindow: string
    /** The link back to the request, to try again. */
    readonly tryAgain: string
    /** The link back to the consents page. */
    readonly backToConsents: string
    /** The link back to the account page. */
    readonly backToAccount: string
    readonly problems: { readonly [R in Reason]: ProblemText<R> }
  }
}
