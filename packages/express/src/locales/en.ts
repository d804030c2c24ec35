/**
 * The pages in English: the default language, and the one every other catalogue translates.
 */
import { type Catalogue, strong } from "./Catalogue.js"

const dates = new Intl.DateTimeFormat("en", { dateStyle: "long", timeZone: "UTC" })
const times = new Intl.DateTimeFormat("en", { dateStyle: "long", timeStyle: "short", timeZone: "UTC" })

const wait = (seconds: number): string =>
  seconds < 120 ? (seconds === 1 ? "1 second" : `${seconds} seconds`) : `${Math.ceil(seconds / 60)} minutes`

/** English. */
export const en: Catalogue = {
  lang: "en",
  date: (epochSeconds) => dates.format(new Date(epochSeconds * 1000)),
  dateTime: (epochSeconds) => `${times.format(new Date(epochSeconds * 1000))} UTC`,
  frame: {
    securedBy: (productName) => [`Secured by ${productName}`]
  },
  signIn: {
    title: "Sign in",
    lead: (appName) => ["to continue to ", strong(appName)],
    username: "Username",
    password: "Password",
    submit: "Sign in",
    footer: (redirectHost) => ["After you sign in you will return to ", strong(redirectHost), "."],
    passkey: "Sign in with a passkey",
    passkeyFailed: "Signing in with a passkey did not work. Try again, or use your password.",
    problems: {
      missing_fields: "Enter your username and password.",
      bad_credentials: "Username or password is incorrect."
    }
  },
  factor: {
    title: "Enter a code",
    lead: (appName) => [
      "Open your authenticator app and enter the code it shows",
      ...(appName === undefined ? [] : [" to continue to ", strong(appName)]),
      "."
    ],
    signedInAs: (username) => ["Signing in as ", strong(username)],
    code: "Code",
    hint: "The 6-digit code of your authenticator app, or one of your recovery codes.",
    submit: "Continue",
    problems: { bad_code: "That code is not right, or it was used already. Try the next code." }
  },
  enrol: {
    title: "Add an authenticator app",
    lead: (appName) => [strong(appName), " requires a second step at sign-in. Add an authenticator app."],
    submit: "Turn on",
    passkey: "You can add a passkey instead on your account page.",
    accountLink: "Go to your account",
    doneTitle: "Authenticator app added",
    doneLead: (appName) => [
      "From now on, signing in asks for a code of the app after your password. Keep your recovery codes, then continue to ",
      strong(appName),
      "."
    ],
    continue: "Continue"
  },
  consent: {
    title: (appName) => `Allow ${appName}?`,
    heading: (appName, productName) => [strong(appName), ` wants to access your ${productName} account`],
    signedInAs: (username) => ["Signed in as ", strong(username)],
    notYou: "Not you?",
    willAllow: (appName) => `This will allow ${appName} to:`,
    identityOnly: (productName) => `Know which ${productName} account you use`,
    openIdScopes: {
      openid: "Sign you in with your account",
      profile: "See your name and basic profile",
      email: "See your email address"
    },
    scopeFallback: (scope) => `Access to ${scope}`,
    allow: "Allow",
    deny: "Deny",
    trust: (appName, productName) =>
      `Make sure you trust ${appName}. ${productName} remembers your choice for this application.`,
    manage: "Manage the applications you have authorised",
    footer: (redirectHost) => ["Allow or Deny sends you back to ", strong(redirectHost), "."]
  },
  consents: {
    title: "Authorised applications",
    lead: (productName) =>
      `These applications can use your ${productName} account. Withdraw access from any you no longer use.`,
    signedInAs: (username) => ["Signed in as ", strong(username)],
    signOut: "Sign out",
    empty: "You have not authorised any application.",
    allowedOn: (date) => `Allowed on ${date}`,
    scopesOf: (appName) => `What ${appName} can do`,
    withdraw: "Withdraw access",
    withdrawNote:
      "Withdrawing access signs the application out at once; it has to ask for your permission again.",
    withdrawn: (appName) => [strong(appName), " can no longer access your account."],
    signInTitle: "Sign in to manage authorised applications",
    signInLead: (productName) =>
      `Sign in with your ${productName} account to see the applications you have allowed to use it.`
  },
  logout: {
    title: "Sign out?",
    lead: (appName, productName) =>
      appName === undefined
        ? [`Do you want to sign out of ${productName} in this browser?`]
        : [strong(appName), ` asks to sign you out of ${productName} in this browser.`],
    signedInAs: (username) => ["Signed in as ", strong(username)],
    confirm: "Sign out",
    signedOutTitle: "You have signed out",
    signedOutLead: (productName) =>
      `You are no longer signed in to ${productName} in this browser. You can close this window.`
  },
  account: {
    title: "Your account",
    lead: (productName) => `Manage how you sign in to ${productName} and where you are signed in.`,
    notices: {
      password_changed: "Your password has been changed. You were signed out everywhere else.",
      session_ended: "That session has been signed out.",
      others_ended: "You have been signed out everywhere else.",
      passkey_renamed: "The passkey has been renamed.",
      passkey_removed: "The passkey has been removed. It can no longer sign you in.",
      devices_forgotten: "No other browser is trusted any more.",
      device_forgotten: "That browser is not trusted any more.",
      authenticator_removed: "The authenticator app has been removed, with its recovery codes."
    },
    password: {
      heading: "Change password",
      current: "Current password",
      next: "New password",
      confirm: "Confirm new password",
      rules: "At least 8 characters.",
      submit: "Change password",
      note: "Changing your password signs you out on every other device. You stay signed in here.",
      problems: {
        missing_fields: "Fill in all three password fields.",
        bad_current: "Your current password is incorrect.",
        mismatch: "The new passwords do not match.",
        invalid_new: "The new password must be 8 to 1024 characters, without control characters."
      }
    },
    sessions: {
      heading: "Where you are signed in",
      lead: "Each browser you have signed in with. Sign out of any you do not recognise, then change your password.",
      thisDevice: "This device",
      signedInOn: (dateTime) => `Signed in ${dateTime}`,
      until: (dateTime) => `Active until ${dateTime} unless used`,
      signOut: "Sign out",
      signOutOthers: "Sign out everywhere else"
    },
    authenticator: {
      heading: "Authenticator app",
      lead: "Add an authenticator app: after your password, signing in will ask for a code it shows.",
      add: "Add an authenticator app",
      scan: "Scan this QR code with your authenticator app, or enter the secret by hand. Then enter the code the app shows.",
      qrLabel: "QR code of the authenticator app's secret",
      secret: "Secret",
      uri: "Setup link",
      code: "Code from the app",
      confirm: "Turn on",
      startOver: "Start again with a new secret",
      on: (left) =>
        `An authenticator app is on. ${left === 1 ? "1 recovery code is" : `${left} recovery codes are`} left.`,
      proof: "A code from the app, or your password",
      proofHint: "Needed to remove the app or to make new recovery codes.",
      remove: "Remove the app",
      newCodes: "New recovery codes",
      codesHeading: "Your recovery codes",
      codesNote:
        "Each code signs you in once instead of a code from the app. Keep them somewhere safe: they are shown only now. Any older codes no longer work.",
      problems: {
        bad_code: "That code is not right. Enter the code the app shows now.",
        bad_proof: "That code or password is not right. Nothing was changed."
      }
    },
    applications: {
      heading: "Authorised applications",
      lead: "See the applications you have allowed to use your account, and withdraw their access.",
      link: "Manage authorised applications"
    },
    passkeys: {
      heading: "Passkeys",
      lead: "Sign in with your fingerprint, face or device PIN instead of your password.",
      empty: "You have no passkeys yet.",
      createdOn: (dateTime) => `Added ${dateTime}`,
      lastUsedOn: (dateTime) => `Last used ${dateTime}`,
      neverUsed: "Not used yet",
      synced: "Synced",
      thisDevice: "This device only",
      name: "Name",
      rename: "Rename",
      remove: "Remove",
      add: "Add a passkey",
      addFailed: "The passkey was not added. Try again."
    },
    devices: {
      heading: "Trusted devices",
      lead: "A browser you signed in with your password is trusted: others' wrong guesses at your password never lock it out. A new password ends the trust of every browser.",
      trusted: "This browser is trusted.",
      notTrusted: "This browser is not trusted.",
      forget: "Forget all other browsers",
      label: (browser, system) =>
        browser === null
          ? system === null
            ? "A browser"
            : `A browser on ${system}`
          : system === null
            ? browser
            : `${browser} on ${system}`,
      trustedSince: (dateTime) => `Trusted since ${dateTime}`,
      lastSignIn: (dateTime) => `Last sign-in ${dateTime}`,
      thisBrowser: "This browser",
      forgetOne: "Forget"
    },
    signInTitle: "Sign in to manage your account",
    signInLead: (productName) =>
      `Sign in with your ${productName} account to change your password and see where you are signed in.`
  },
  console: {
    signInTitle: "Sign in to the console",
    signInLead: "For operators of this server, with the account an administrator created for you.",
    name: "Operator name",
    password: "Password",
    submit: "Sign in",
    signInProblems: {
      bad_credentials: () => "The operator name or password is incorrect.",
      throttled: (seconds) => `Too many failed attempts. Try again in ${seconds} seconds.`
    },
    appsTitle: "Applications",
    appsLead: "The applications registered with this server.",
    signedInAs: (name, role) => ["Signed in as ", strong(name), ` (${role})`],
    roles: { admin: "admin", operator: "operator", viewer: "viewer" },
    signOut: "Sign out",
    search: "Search by name or App Key",
    searchSubmit: "Search",
    noApps: "No application matches.",
    appKey: "App Key",
    publicClient: "Public client",
    created: (date) => `Created ${date}`,
    rotate: "Rotate secret",
    rotateHint: "The current App Secret stops working at once.",
    rotated: (appName) => [
      "The new App Secret of ",
      strong(appName),
      " is shown only this once. Copy it now."
    ],
    newSecret: "New App Secret",
    back: "Back to the applications",
    problems: {
      forbidden: {
        title: "Not allowed",
        explain:
          "Your role does not allow this, or the form was not sent from this console. Nothing has been changed."
      },
      not_found: {
        title: "Not found",
        explain: "There is no such page or application. Nothing has been changed."
      },
      bad_request: { title: "Bad request", explain: "The form could not be read. Nothing has been changed." },
      method_not_allowed: { title: "Not allowed", explain: "This page does not answer that method." },
      payload_too_large: { title: "Too large", explain: "The form is too large. Nothing has been changed." },
      unsupported_media_type: {
        title: "Not supported",
        explain: "The form was sent in a format this console does not read."
      },
      unavailable: {
        title: "Unavailable",
        explain: "The server cannot reach its database right now. Try again in a moment."
      }
    }
  },
  error: {
    errorCode: "Error code",
    received: "Address the application asked for (redirect_uri):",
    details: "Technical details",
    closeWindow: "Close this window and return to the application you came from.",
    tryAgain: "Try again",
    backToConsents: "Back to your authorised applications",
    backToAccount: "Back to your account",
    problems: {
      unknown_client: {
        title: "This application isn't recognised",
        explain: (_, productName) =>
          `The link that brought you here names an application that is not registered with ${productName}, or that has been removed. Nothing has been shared with it. If this keeps happening, contact the application's support.`
      },
      application_unavailable: {
        title: "This application isn't available",
        explain: (_, productName) =>
          `The application that sent you here can't sign you in with ${productName} at the moment: it is waiting for review, or it has been suspended. Nothing has been shared with it.`
      },
      bad_redirect_uri: {
        title: "This sign-in link can't be used",
        explain: (_, productName) =>
          `The application asked ${productName} to send you back to an address it has not registered, so we stopped here to protect your account. Nothing has been shared with it.`
      },
      bad_request: {
        title: "This sign-in link is broken",
        explain: (_, productName) =>
          `The link that brought you here is incomplete or damaged, so ${productName} can't tell what the application is asking for. Nothing has been shared.`
      },
      request_too_long: {
        title: "This sign-in link is too long",
        explain: (p, productName) =>
          `The link that brought you here is longer than ${p.limit} characters, which ${productName} does not accept. Nothing has been shared.`
      },
      form_expired: {
        title: "This form has expired",
        explain: () =>
          "The page was open too long, was already sent, or came from another site. For your safety it can't be used again. Nothing has been changed."
      },
      bad_form: {
        title: "This form couldn't be read",
        explain: () => "What your browser sent was not in the expected form. Nothing has been changed."
      },
      no_decision: {
        title: "Choose Allow or Deny",
        explain: () => "The form didn't say whether you allow the application. Nothing has been shared."
      },
      rate_limited: {
        title: "Too many attempts",
        explain: (p) =>
          `Signing in to this account is paused after several unsuccessful attempts. Wait ${wait(p.seconds)} and try again.`
      },
      unavailable: {
        title: "Temporarily unavailable",
        explain: (_, productName) =>
          `${productName} can't reach its storage at the moment. Nothing has been changed. Wait a moment and try again.`
      },
      server_error: {
        title: "Something went wrong on our side",
        explain: (_, productName) =>
          `${productName} ran into an unexpected problem and could not finish. Nothing has been shared. Try again later.`
      },
      not_found: {
        title: "Page not found",
        explain: () =>
          "There is no page at this address. Check the link, or go back to the application you came from."
      },
      bad_logout: {
        title: "This sign-out link can't be used",
        explain: (_, productName) =>
          `The application's request to sign you out could not be checked, or names an address it has not registered, so ${productName} did not sign you out or send you anywhere. Close this window and sign out from the application again.`
      },
      method_not_allowed: {
        title: "This page can't be opened like this",
        explain: (_, productName) =>
          `This address only answers forms sent from ${productName}'s own pages, for example after a page was reloaded or bookmarked. Start again from the application.`
      },
      passkey_refused: {
        title: "The passkey was not accepted",
        explain: () =>
          "The passkey could not be verified for this account. Nothing has been changed. Try again, or sign in with your password."
      },
      second_factor_needed: {
        title: "Set up a second factor first",
        explain: (_, productName) =>
          `This application needs a second factor. Set up an authenticator app (or a passkey) on your ${productName} account page, then come back.`
      },
      login_required: {
        title: "Sign in first",
        explain: () => "Managing passkeys needs you to be signed in. Nothing has been changed."
      }
    }
  }
}
