/**
 * The CLI of application review and ownership (docs/platform.md): `app approve|reject|suspend|
 * reinstate` and `app owner add|remove|list`, audited with the actor `cli`.
 */
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Commands from "../src/Commands.js"
import { cliInProcess, tempDir } from "./helpers.js"

const tmp = tempDir()
const db = join(tmp.dir, "review.sqlite")
afterAll(() => tmp.cleanup())

const cli = (args: ReadonlyArray<string>) => cliInProcess(db, args)

const json = async <A = Record<string, unknown>>(args: ReadonlyArray<string>): Promise<A> => {
  const r = await cli(args)
  assert.strictEqual(r.code, 0, r.stderr)
  return JSON.parse(r.stdout) as A
}

const newApp = async (): Promise<string> =>
  (
    await json<{ app_key: string }>([
      "app",
      "create",
      "--name",
      "Reviewed",
      "--redirect-uri",
      "https://app.example/cb",
      "--json"
    ])
  ).app_key

describe("app suspend, reinstate, approve, reject", () => {
  it("suspend needs --reason and keeps it; reinstate makes it active; app show tells a status only when not active", async () => {
    const appKey = await newApp()
    const before = await cli(["app", "show", appKey])
    assert.notInclude(before.stdout, "Status:")
    assert.deepInclude(await json<Record<string, unknown>>(["app", "show", appKey, "--json"]), {
      status: "active",
      status_reason: null
    })
    const noReason = await cli(["app", "suspend", appKey])
    assert.strictEqual(noReason.code, 1)
    assert.include(noReason.stderr, "suspend needs a reason")
    const suspended = await json(["app", "suspend", appKey, "--reason=abuse reported", "--json"])
    assert.deepInclude(suspended, { status: "suspended", status_reason: "abuse reported" })
    const shown = await cli(["app", "show", appKey])
    assert.include(shown.stdout, '  Status:        suspended ("abuse reported")')
    const reinstated = await cli(["app", "reinstate", appKey])
    assert.strictEqual(reinstated.code, 0, reinstated.stderr)
    assert.include(
      reinstated.stdout,
      `Reinstated; it is active (nothing revoked comes back): application ${appKey}`
    )
    const audit = await json<Array<{ type: string; actor: string; detail: string }>>([
      "audit",
      "tail",
      "--app",
      appKey,
      "--json"
    ])
    assert.deepStrictEqual(
      audit.filter((e) => e.type !== "application_created").map((e) => [e.type, e.actor, e.detail]),
      [
        ["application_suspended", "cli", 'active -> suspended: "abuse reported"'],
        ["application_reinstated", "cli", "suspended -> active"]
      ]
    )
  })

  it("a move the status does not allow exits 1 naming the status and changes nothing; an unknown App Key exits 1", async () => {
    const appKey = await newApp()
    for (const args of [
      ["app", "approve", appKey],
      ["app", "reject", appKey, "--reason=late"],
      ["app", "reinstate", appKey]
    ]) {
      const r = await cli(args)
      assert.strictEqual(r.code, 1, args.join(" "))
      assert.include(r.stderr, "an application that is active")
    }
    const extra = await cli(["app", "approve", appKey, "--reason=why"])
    assert.strictEqual(extra.code, 1)
    assert.include(extra.stderr, "approve takes no reason")
    assert.strictEqual((await cli(["app", "approve", "no-such-app"])).code, 1)
    assert.strictEqual((await cli(["app", "approve"])).code, 2)
    assert.deepInclude(await json<Record<string, unknown>>(["app", "show", appKey, "--json"]), {
      status: "active"
    })
  })
})

describe("app owner", () => {
  it("adds, lists and removes co-owners by username or id; a second add changes nothing", async () => {
    const appKey = await newApp()
    const user = await json<{ user_id: string; username: string }>([
      "user",
      "create",
      "--username",
      "dev-owner",
      "--password",
      "correct horse battery",
      "--json"
    ])
    assert.deepStrictEqual(await json(["app", "owner", "list", appKey, "--json"]), {
      app_key: appKey,
      owners: []
    })
    const added = await cli(["app", "owner", "add", appKey, "dev-owner"])
    assert.strictEqual(added.code, 0, added.stderr)
    assert.include(added.stdout, `"dev-owner" (id ${user.user_id}) now owns application ${appKey}`)
    assert.deepInclude(
      await json<Record<string, unknown>>(["app", "owner", "add", appKey, user.user_id, "--json"]),
      {
        owner: true,
        changed: false
      }
    )
    assert.deepStrictEqual(await json(["app", "owner", "list", appKey, "--json"]), {
      app_key: appKey,
      owners: [user.user_id]
    })
    assert.deepInclude(
      await json<Record<string, unknown>>(["app", "owner", "remove", appKey, "dev-owner", "--json"]),
      {
        owner: false,
        changed: true
      }
    )
    const again = await cli(["app", "owner", "remove", appKey, "dev-owner"])
    assert.strictEqual(again.code, 1)
    assert.include(again.stderr, "does not own")
    assert.strictEqual((await cli(["app", "owner", "add", appKey])).code, 2)
    assert.strictEqual((await cli(["app", "owner", "steal", appKey, "dev-owner"])).code, 2)
  })

  it("the usage lists the commands", () => {
    for (const command of [
      "app approve <app-key>",
      "app reject <app-key> --reason=<text>",
      "app suspend <app-key> --reason=<text>",
      "app reinstate <app-key>",
      "app owner add|remove <app-key> <username-or-user-id>"
    ])
      assert.include(Commands.usage, command)
  })
})
