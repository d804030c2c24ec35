/**
 * The operator console as the core answers it: the role rules, the sign-in (success, one answer for
 * every failure, the throttle), the CSRF and cross-site refusals, session expiry on the test clock,
 * and the applications view with its secret rotation.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as Console from "../src/admin/Console.js"
import * as Operator from "../src/model/Operator.js"
import type * as Audit from "../src/security/Audit.js"
import * as ConsoleSession from "../src/security/ConsoleSession.js"
import { ApplicationStore } from "../src/storage/ApplicationStore.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import { Audited } from "./adminApi.js"
import { newApp } from "./fixtures.js"

const own = "http://127.0.0.1:9001"
const password = "a long operator password"

/** A browser of the console: the cookie it keeps, and its requests. */
const browser = (address = "192.0.2.7") => {
  let cookie: string | undefined
  const send = (method: string, path: string, body = "", extra: Record<string, string> = {}, query = "") =>
    Effect.map(
      Console.handle({
        method,
        path,
        query,
        headers: {
          ...(cookie === undefined ? {} : { cookie }),
          ...(method === "POST" ? { "content-type": "application/x-www-form-urlencoded", origin: own } : {}),
          ...extra
        },
        body,
        remoteAddress: address,
        requestId: "req-console",
        ownOrigin: own
      }),
      (answer) => {
        const set = answer.headers["set-cookie"]
        if (set !== undefined) {
          const value = set.slice(0, set.indexOf(";"))
          cookie = value.endsWith("=") ? undefined : value
        }
        return answer
      }
    )
  return { send, cookie: () => cookie }
}

type Browser = ReturnType<typeof browser>

const viewOf = (answer: Console.ConsoleAnswer) => Option.getOrThrow(answer.view)

/** The CSRF token of the page `answer` shows. */
const csrfOf = (answer: Console.ConsoleAnswer): string => {
  const view = viewOf(answer)
  if (view._tag === "SignIn") return view.csrf
  if (view._tag === "Apps") return view.signedIn.csrf
  throw new Error(`no form on ${view._tag}`)
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

/** Open the sign-in form and post it. */
const signIn = (b: Browser, username: string, pass = password) =>
  Effect.gen(function* () {
    const page = yield* b.send("GET", "/console/sign-in")
    return yield* b.send(
      "POST",
      "/console/sign-in",
      form({ csrf_token: csrfOf(page), username, password: pass })
    )
  })

const events = (type: Audit.EventType) =>
  Effect.map(
    Effect.flatMap(AuditStore, (s) => s.tail({ limit: 1000 })),
    (all) => all.filter((e) => e.type === type)
  )

const digestOf = (appKey: string) =>
  Effect.map(
    Effect.flatMap(ApplicationStore, (s) => s.find(appKey)),
    (o) => Option.getOrThrow(o).secretDigest
  )

const withOperator = (name: string, role: Operator.Role) => Admin.createOperator(name, role, password)

describe("Operator.may: the one table of the console's permissions", () => {
  it("a viewer reads; an operator also manages applications, users and consents; an admin everything", () => {
    const actions = Operator.Action.literals
    assert.deepStrictEqual(
      actions.filter((a) => Operator.may("viewer", a)),
      ["read"]
    )
    assert.deepStrictEqual(
      actions.filter((a) => Operator.may("operator", a)),
      ["read", "manage_applications", "manage_users", "manage_consents"]
    )
    assert.deepStrictEqual(
      actions.filter((a) => Operator.may("admin", a)),
      [...actions]
    )
  })

  it("each role may do everything the role below it may", () => {
    for (const action of Operator.Action.literals) {
      if (Operator.may("viewer", action)) assert.isTrue(Operator.may("operator", action), action)
      if (Operator.may("operator", action)) assert.isTrue(Operator.may("admin", action), action)
    }
  })
})

describe("console sign-in", () => {
  it.effect("the right password starts a session under a new id and leads to the applications", () =>
    Effect.gen(function* () {
      yield* withOperator("ada", "operator")
      yield* newApp({ name: "Listed App" })
      const b = browser()
      const form = yield* b.send("GET", "/console/sign-in")
      assert.strictEqual(form.status, 200)
      const visitor = b.cookie()
      assert.isDefined(visitor)
      const answer = yield* signIn(b, "ada")
      assert.strictEqual(answer.status, 303)
      assert.strictEqual(answer.headers.location, "/console/apps")
      assert.notStrictEqual(b.cookie(), visitor, "a new id at sign-in")
      const setCookie = answer.headers["set-cookie"] ?? ""
      assert.include(setCookie, "HttpOnly; SameSite=Strict")
      assert.include(setCookie, "Path=/console;")
      assert.include(setCookie, "Secure", "the issuer is https")
      const apps = viewOf(yield* b.send("GET", "/console/apps"))
      assert.strictEqual(apps._tag, "Apps")
      if (apps._tag !== "Apps") return
      assert.deepStrictEqual(apps.signedIn.operator, "ada")
      assert.include(
        apps.apps.map((a) => a.name),
        "Listed App"
      )
      const signedIn = yield* events("console_signin_succeeded")
      assert.deepStrictEqual(
        signedIn.map((e) => [e.actor, e.detail, e.address]),
        [["operator:ada", "operator ada", "192.0.2.7"]]
      )
      const stored = Option.getOrThrow(yield* Admin.findOperator("ada").pipe(Effect.option))
      assert.isNotNull(stored.lastSignInAt)
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("a wrong password and an unknown name get the same answer, and no session", () =>
    Effect.gen(function* () {
      yield* withOperator("ada", "viewer")
      const wrong = yield* signIn(browser(), "ada", "not the password at all")
      const unknown = yield* signIn(browser(), "nobody", password)
      for (const answer of [wrong, unknown]) {
        assert.strictEqual(answer.status, 400)
        const view = viewOf(answer)
        assert.strictEqual(view._tag, "SignIn")
        if (view._tag === "SignIn") assert.deepStrictEqual(view.problem, Option.some("bad_credentials"))
      }
      const b = browser()
      yield* signIn(b, "ada", "still not the password")
      assert.strictEqual((yield* b.send("GET", "/console/apps")).headers.location, "/console/sign-in")
      const failed = yield* events("console_signin_failed")
      assert.deepStrictEqual(
        failed.map((e) => e.detail),
        ["operator ada", null, "operator ada"]
      )
      assert.notInclude(JSON.stringify(failed), "not the password")
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("six wrong passwords from one address lock that address out, not the operator elsewhere", () =>
    Effect.gen(function* () {
      yield* withOperator("ada", "admin")
      const outsider = browser("198.51.100.9")
      // five free failures; the sixth is counted and starts the lockout
      for (let i = 0; i < 6; i++)
        assert.strictEqual((yield* signIn(outsider, "ada", `wrong guess ${i}`)).status, 400)
      const locked = yield* signIn(outsider, "ada")
      assert.strictEqual(locked.status, 429, "even the right password while locked")
      assert.isDefined(locked.headers["retry-after"])
      assert.strictEqual((yield* events("console_signin_throttled")).length, 1)
      const owner = yield* signIn(browser("192.0.2.7"), "ada")
      assert.strictEqual(owner.status, 303, "the operator's own address is not locked")
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("a sign-in form without its token, with another browser's, or from another site is 403", () =>
    Effect.gen(function* () {
      yield* withOperator("ada", "admin")
      const b = browser()
      const page = yield* b.send("GET", "/console/sign-in")
      const other = browser()
      const theirs = csrfOf(yield* other.send("GET", "/console/sign-in"))
      const posts = [
        form({ username: "ada", password }),
        form({ csrf_token: theirs, username: "ada", password })
      ]
      for (const body of posts)
        assert.strictEqual((yield* b.send("POST", "/console/sign-in", body)).status, 403)
      const good = form({ csrf_token: csrfOf(page), username: "ada", password })
      const crossSite = yield* b.send("POST", "/console/sign-in", good, { origin: "https://evil.example" })
      assert.strictEqual(crossSite.status, 403)
      const fetchMeta = yield* b.send("POST", "/console/sign-in", good, { "sec-fetch-site": "cross-site" })
      assert.strictEqual(fetchMeta.status, 403)
      assert.strictEqual((yield* events("console_signin_succeeded")).length, 0)
      assert.strictEqual((yield* events("console_signin_failed")).length, 0)
      assert.strictEqual((yield* b.send("POST", "/console/sign-in", good)).status, 303)
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("a session ends at its lifetime by the clock, and at sign-out", () =>
    Effect.gen(function* () {
      yield* withOperator("ada", "viewer")
      const b = browser()
      yield* signIn(b, "ada")
      yield* TestClock.adjust(`${ConsoleSession.sessionTtl - 1} seconds`)
      assert.strictEqual((yield* b.send("GET", "/console/apps")).status, 200)
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* b.send("GET", "/console/apps")).headers.location, "/console/sign-in")
      const c = browser()
      yield* signIn(c, "ada")
      const apps = yield* c.send("GET", "/console/apps")
      const out = yield* c.send("POST", "/console/sign-out", form({ csrf_token: csrfOf(apps) }))
      assert.strictEqual(out.status, 303)
      assert.isUndefined(c.cookie(), "the cookie is removed")
      assert.strictEqual((yield* events("console_signed_out"))[0]?.actor, "operator:ada")
    }).pipe(Effect.provide(Audited()))
  )
})

describe("console applications", () => {
  it.effect("search by name or App Key, case-insensitive", () =>
    Effect.gen(function* () {
      yield* withOperator("ada", "viewer")
      const { app } = yield* newApp({ name: "Billing Portal" })
      yield* newApp({ name: "Other" })
      const b = browser()
      yield* signIn(b, "ada")
      const names = (query: string) =>
        Effect.map(b.send("GET", "/console/apps", "", {}, query), (a) => {
          const v = viewOf(a)
          return v._tag === "Apps" ? v.apps.map((x) => x.name) : []
        })
      assert.deepStrictEqual(yield* names("q=billing"), ["Billing Portal"])
      assert.deepStrictEqual(yield* names(`q=${app.appKey.slice(2, 12).toUpperCase()}`), ["Billing Portal"])
      assert.deepStrictEqual(yield* names("q=nothing-like-this"), [])
    }).pipe(Effect.provide(Audited()))
  )

  it.effect("a viewer has no rotate action, and a forged rotation is 403 with nothing changed", () =>
    Effect.gen(function* () {
      yield* withOperator("vic", "viewer")
      const { app } = yield* newApp()
      const before = yield* digestOf(app.appKey)
      const b = browser()
      yield* signIn(b, "vic")
      const page = yield* b.send("GET", "/console/apps")
      const view = viewOf(page)
      assert.isTrue(view._tag === "Apps" && !view.canRotate)
      const forged = yield* b.send(
        "POST",
        "/console/apps/rotate-secret",
        form({ csrf_token: csrfOf(page), app_key: app.appKey })
      )
      assert.strictEqual(forged.status, 403)
      assert.strictEqual(yield* digestOf(app.appKey), before)
      assert.strictEqual((yield* events("secret_rotated")).length, 0)
    }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "an operator rotates with the admin operation: the new secret shown once, audited as theirs",
    () =>
      Effect.gen(function* () {
        yield* withOperator("ola", "operator")
        const { app } = yield* newApp({ name: "Rotated App" })
        const before = yield* digestOf(app.appKey)
        const b = browser()
        yield* signIn(b, "ola")
        const page = yield* b.send("GET", "/console/apps")
        const body = form({ csrf_token: csrfOf(page), app_key: app.appKey })
        const noToken = yield* b.send("POST", "/console/apps/rotate-secret", form({ app_key: app.appKey }))
        assert.strictEqual(noToken.status, 403)
        assert.strictEqual(yield* digestOf(app.appKey), before)
        const answer = yield* b.send("POST", "/console/apps/rotate-secret", body)
        assert.strictEqual(answer.status, 200)
        const view = viewOf(answer)
        if (view._tag !== "Apps") return assert.fail(view._tag)
        const shown = Option.getOrThrow(view.rotated)
        assert.strictEqual(shown.appKey, app.appKey)
        assert.notStrictEqual(yield* digestOf(app.appKey), before)
        const again = viewOf(yield* b.send("GET", "/console/apps"))
        assert.isTrue(again._tag === "Apps" && Option.isNone(again.rotated), "shown once")
        const rotated = yield* events("secret_rotated")
        assert.deepStrictEqual(
          rotated.map((e) => [e.actor, e.appKey]),
          [["operator:ola", app.appKey]]
        )
        assert.notInclude(JSON.stringify(rotated), shown.appSecret)
        const unknown = yield* b.send(
          "POST",
          "/console/apps/rotate-secret",
          form({ csrf_token: csrfOf(page), app_key: "nope" })
        )
        assert.strictEqual(unknown.status, 404)
      }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "signed out, a page sends to the sign-in form and a post is 403; other paths are 404, wrong methods 405",
    () =>
      Effect.gen(function* () {
        const b = browser()
        assert.strictEqual((yield* b.send("GET", "/console/apps")).headers.location, "/console/sign-in")
        assert.strictEqual((yield* b.send("GET", "/console")).headers.location, "/console/apps")
        assert.strictEqual(
          (yield* b.send("POST", "/console/apps/rotate-secret", form({ app_key: "x" }))).status,
          403
        )
        assert.strictEqual((yield* b.send("GET", "/console/nothing")).status, 404)
        const wrong = yield* b.send("DELETE", "/console/apps")
        assert.strictEqual(wrong.status, 405)
        assert.strictEqual(wrong.headers.allow, "GET, HEAD")
        assert.strictEqual(wrong.headers["cache-control"], "no-store")
      }).pipe(Effect.provide(Audited()))
  )
})
