/**
 * The account page as its tests drive it: signing in on it, its sections, posting its forms with
 * the page's ticket, the notice after one, and the audit events recorded.
 */
import { Effect, Layer, Option } from "effect"
import type * as Interaction from "../src/interaction/Interaction.js"
import * as Audit from "../src/security/Audit.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import * as Memory from "../src/storage/Memory.js"
import { type Answer, Browser, ticketOf, view } from "./browser.js"

/** The audit log over a fresh memory audit store. */
export const Audited = () => Layer.provideMerge(Audit.layer, Memory.auditLayer)

/** Sign in with the password on the account page; returns the browser, signed in. */
export const signedIn = (username: string, password: string, b = new Browser()) =>
  Effect.gen(function* () {
    const page = yield* b.account()
    view(yield* b.post("account", { ...ticketOf(page), action: "signin", username, password }), "Redirect")
    return b
  })

/** One section of the account page `a` shows, by tag; none when the page has no such section. */
export const sectionOf = <T extends Interaction.AccountSection["_tag"]>(a: Answer, tag: T) =>
  Option.fromNullable(
    view(a, "Account").sections.find((s) => s._tag === tag) as
      | Extract<Interaction.AccountSection, { _tag: T }>
      | undefined
  )

/** Post a form of the page `b` shows now. */
export const postForm = (b: Browser, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  Effect.flatMap(b.account(), (page) => b.post("account", { ...ticketOf(page), ...fields }, headers))

/** Follow a 303 back to the page; its notice. */
export const noticeAfter = (b: Browser, a: Answer) =>
  Effect.gen(function* () {
    const r = view(a, "Redirect")
    const q = r.location.indexOf("?")
    return view(yield* b.account(q === -1 ? "" : r.location.slice(q + 1)), "Account").notice
  })

/** The audit events of `type` recorded so far. */
export const events = (type: Audit.EventType) =>
  Effect.flatMap(AuditStore, (s) =>
    Effect.map(s.tail({ limit: 100 }), (all) => all.filter((e) => e.type === type))
  )
