/**
 * A password change on the account page through the core's pages (`Interaction.handle`) over a
 * storage layer, for an adapter's tests: what the change costs the database, and that it ended
 * the user's other session and kept this one in the write that stored the new password.
 */
import { Accounts, Audit, AuditStore, Interaction, type StorageError, type Stores } from "@latchkey/core"
import { Effect, Layer } from "effect"
import { formOf, pageBrowser, pageServices } from "./internal/pages.js"

const path = Interaction.accountPath

const ticketOf = (view: Interaction.View): Record<string, string> => {
  if (view._tag !== "ConsentsSignIn" && view._tag !== "Account") throw new Error(`no form on ${view._tag}`)
  return { txn: view.ticket.txn, csrf_token: view.ticket.csrf }
}

const expect = (ok: boolean, what: string) => (ok ? Effect.void : Effect.fail(new Error(what)))

/** A browser signed in on the account page as `username`. */
const signedIn = (username: string, password: string) =>
  Effect.gen(function* () {
    const browser = pageBrowser()
    const page = yield* browser(path, "GET", "")
    const r = yield* browser(
      path,
      "POST",
      "",
      formOf({ ...ticketOf(page), action: "signin", username, password })
    )
    yield* expect(r._tag === "Redirect", `the account page's sign-in answered ${r._tag}`)
    return browser
  })

/**
 * Sign a new user in from two browsers over `storage` (with its audit store as the audit log),
 * change the password in the first on the account page, and answer what `counter()` (a running
 * count the caller keeps, e.g. of COMMIT statements) grew by during the change. Fails unless the
 * change answered its redirect, the second browser is signed out, the first still signed in with
 * its one session listed, and `password_changed` was stored with the actor `user`.
 */
export const accountPasswordChange = <E>(
  storage: Layer.Layer<Stores.Stores | AuditStore.AuditStore, E>,
  counter: () => number
): Effect.Effect<number, E | StorageError.StorageError | Error> =>
  Effect.gen(function* () {
    const username = `user-${crypto.randomUUID()}`
    const user = yield* Accounts.createUser(username, "correct horse battery")
    const here = yield* signedIn(username, "correct horse battery")
    const there = yield* signedIn(username, "correct horse battery")
    const page = yield* here(path, "GET", "")
    const fields = { current_password: "correct horse battery", new_password: "a new passphrase" }
    const before = counter()
    const changed = yield* here(
      path,
      "POST",
      "",
      formOf({ ...ticketOf(page), action: "password", ...fields, confirm_password: fields.new_password })
    )
    const commits = counter() - before
    yield* expect(changed._tag === "Redirect", `the password change answered ${JSON.stringify(changed)}`)
    const theirs = yield* there(path, "GET", "")
    yield* expect(theirs._tag === "ConsentsSignIn", `the other browser is still signed in (${theirs._tag})`)
    const mine = yield* here(path, "GET", "")
    const sessions = mine._tag === "Account" ? mine.sections.find((s) => s._tag === "Sessions") : undefined
    yield* expect(
      sessions?._tag === "Sessions" &&
        sessions.sessions.length === 1 &&
        sessions.sessions[0]?.current === true,
      `this browser's page is ${JSON.stringify(mine)}`
    )
    const trail = yield* Effect.flatMap(AuditStore.AuditStore, (audit) => audit.tail({ limit: 1000 }))
    const event = trail.find((e) => e.userId === user.userId && e.type === "password_changed")
    yield* expect(event?.actor === "user", `password_changed is ${JSON.stringify(event)}`)
    return commits
  }).pipe(Effect.provide(Layer.mergeAll(storage, Layer.provide(Audit.layer, storage), pageServices)))
