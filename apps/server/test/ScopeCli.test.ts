/**
 * The scope catalogue from the management CLI (`scope create|update|list|delete`), audited with
 * the actor `cli`, checking what an application registers once it has scopes; and the seed from
 * LATCHKEY_SCOPE_DESCRIPTIONS when the server starts, which adds what the catalogue lacks and
 * never changes what it has.
 */
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { cliInProcess, freePort, spawnServer, tempDir } from "./helpers.js"

const temps: Array<() => void> = []
afterEach(() => {
  for (const cleanup of temps.splice(0)) cleanup()
})

const database = (): string => {
  const tmp = tempDir()
  temps.push(tmp.cleanup)
  return join(tmp.dir, "latchkey.sqlite")
}

const json = async (db: string, args: ReadonlyArray<string>): Promise<unknown> => {
  const r = await cliInProcess(db, [...args, "--json"])
  assert.strictEqual(r.code, 0, r.stderr)
  return JSON.parse(r.stdout)
}

describe("scope create, update, list, delete", () => {
  it("keeps the catalogue, each change audited by the cli; a second scope of a name and bad values change nothing", async () => {
    const db = database()
    const made = (await json(db, [
      "scope",
      "create",
      "orders:read",
      "--description",
      "en=Read your orders",
      "--description",
      "zh-CN=读取你的订单",
      "--developer-requestable"
    ])) as Record<string, unknown>
    assert.deepInclude(made, {
      name: "orders:read",
      descriptions: { en: "Read your orders", "zh-CN": "读取你的订单" },
      developer_requestable: true,
      needs_review: true
    })
    const again = await cliInProcess(db, ["scope", "create", "orders:read", "--description", "en=Other"])
    assert.strictEqual(again.code, 1)
    assert.include(again.stderr, 'the scope catalogue has a scope "orders:read" already')
    for (const args of [
      ["scope", "create", "orders:write"],
      ["scope", "create", "orders:write", "--description", "Read"],
      ["scope", "update", "orders:read", "--needs-review", "--no-needs-review"]
    ]) {
      assert.strictEqual((await cliInProcess(db, args)).code, 2, args.join(" "))
    }
    const bad = await cliInProcess(db, ["scope", "create", "two words", "--description", "en=Read"])
    assert.strictEqual(bad.code, 1)
    assert.include(bad.stderr, "a scope name must be one scope token")
    const updated = (await json(db, [
      "scope",
      "update",
      "orders:read",
      "--no-needs-review",
      "--description",
      "en=Orders"
    ])) as Record<string, unknown>
    assert.deepInclude(updated, {
      descriptions: { en: "Orders" },
      developer_requestable: true,
      needs_review: false
    })
    const table = await cliInProcess(db, ["scope", "list"])
    assert.match(
      table.stdout,
      /^SCOPE +DEVELOPERS +REVIEW +DESCRIPTIONS\norders:read +yes +no +en: "Orders"\n$/
    )
    const deleted = await json(db, ["scope", "delete", "orders:read"])
    assert.deepStrictEqual(deleted, { name: "orders:read", deleted: true })
    assert.strictEqual((await cliInProcess(db, ["scope", "delete", "orders:read"])).code, 1)
    assert.strictEqual((await cliInProcess(db, ["scope", "list"])).stdout, "No scopes in the catalogue.\n")
    const events = (await json(db, ["audit", "tail"])) as Array<{
      type: string
      actor: string
      detail: string
    }>
    assert.deepStrictEqual(
      events.filter((e) => e.type.startsWith("scope_")).map((e) => [e.type, e.actor, e.detail]),
      [
        ["scope_created", "cli", "scope orders:read"],
        ["scope_updated", "cli", "scope orders:read: changed descriptions, needs_review"],
        ["scope_deleted", "cli", "scope orders:read"]
      ]
    )
  })

  it("app create and app update --scope: any scope while the catalogue is empty, only its own (and OpenID's) once it has one", async () => {
    const db = database()
    const app = (scope: string) =>
      cliInProcess(db, [
        "app",
        "create",
        "--name",
        "Shop",
        "--redirect-uri",
        "https://shop.example/cb",
        "--scope",
        scope
      ])
    assert.strictEqual((await app("anything")).code, 0)
    await json(db, ["scope", "create", "orders:read", "--description", "en=Read your orders"])
    const refused = await app("openid,orders:read,orders:write")
    assert.strictEqual(refused.code, 1)
    assert.include(refused.stderr, 'scope "orders:write" is not in the scope catalogue')
    const created = (await json(db, [
      "app",
      "create",
      "--name",
      "Shop",
      "--redirect-uri",
      "https://shop.example/cb",
      "--scope",
      "openid,orders:read"
    ])) as { app_key: string }
    const update = await cliInProcess(db, ["app", "update", created.app_key, "--scope", "anything"])
    assert.strictEqual(update.code, 1)
    assert.include(update.stderr, 'scope "anything" is not in the scope catalogue')
  })
})

describe("LATCHKEY_SCOPE_DESCRIPTIONS seeds the catalogue at start", () => {
  it("adds each scope the catalogue lacks (a single text as en), audited by settings; an entry there is kept", async () => {
    const db = database()
    await json(db, [
      "scope",
      "create",
      "profile",
      "--description",
      "en=Your profile, as the operator wrote it"
    ])
    const port = await freePort()
    const server = await spawnServer({
      LATCHKEY_DB: db,
      PORT: String(port),
      LATCHKEY_SCOPE_DESCRIPTIONS: JSON.stringify({
        profile: "Replaced? Never",
        notes: "Read your notes",
        photos: { en: "See your photos", "zh-CN": "查看你的照片" },
        "not a token": "Skipped"
      })
    })
    try {
      const seeded = server
        .lines()
        .find((l) => l.msg === "scope catalogue seeded from LATCHKEY_SCOPE_DESCRIPTIONS")
      assert.deepStrictEqual((seeded as { scopes?: unknown } | undefined)?.scopes, ["notes", "photos"])
      assert.isTrue(server.lines().some((l) => l.msg?.includes("scope not added to the catalogue") === true))
      const metadata = await fetch(`http://127.0.0.1:${port}/.well-known/openid-configuration`)
      const supported = ((await metadata.json()) as { scopes_supported: Array<string> }).scopes_supported
      assert.deepStrictEqual(supported, ["openid", "profile", "email", "notes", "photos"])
    } finally {
      await server.stop()
    }
    const listed = (await json(db, ["scope", "list"])) as Array<{ name: string; descriptions: unknown }>
    assert.deepStrictEqual(
      listed.map((s) => [s.name, s.descriptions]),
      [
        ["notes", { en: "Read your notes" }],
        ["photos", { en: "See your photos", "zh-CN": "查看你的照片" }],
        ["profile", { en: "Your profile, as the operator wrote it" }]
      ]
    )
    const events = (await json(db, ["audit", "tail", "--type", "scope_created"])) as Array<{
      actor: string
      detail: string
    }>
    assert.deepStrictEqual(
      events.map((e) => [e.actor, e.detail]),
      [
        ["cli", "scope profile"],
        ["settings", "scope notes: seeded"],
        ["settings", "scope photos: seeded"]
      ]
    )
  })
})
