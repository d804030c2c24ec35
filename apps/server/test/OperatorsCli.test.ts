import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { cliInProcess, tempDir } from "./helpers.js"

const tmp = tempDir()
afterAll(() => tmp.cleanup())

/** The CLI in this process, over a database of the test's own. */
const cliOn = (dbPath: string) => (args: ReadonlyArray<string>, input?: string) =>
  cliInProcess(dbPath, args, {}, input)

interface Listed {
  readonly name: string
  readonly role: string
  readonly created_at: string
  readonly last_sign_in_at: string | null
}

const events = async (cli: ReturnType<typeof cliOn>, type: string) =>
  JSON.parse((await cli(["audit", "tail", "--type", type, "--json"])).stdout) as Array<{
    readonly detail: string
    readonly actor: string
  }>

describe("operator commands", () => {
  it("operator create reads the password from stdin only, and the account is listed without its hash", async () => {
    const cli = cliOn(join(tmp.dir, "create.sqlite"))
    const created = await cli(
      ["operator", "create", "ada", "--role=operator", "--password-stdin"],
      "a long operator password\n"
    )
    assert.strictEqual(created.code, 0, created.stderr)
    assert.include(created.stdout, 'Created operator "ada" with the role operator')
    assert.notInclude(created.stdout + created.stderr, "a long operator password")
    // a password on the command line is a usage error, and so is no role
    assert.strictEqual(
      (await cli(["operator", "create", "bob", "--role=viewer", "--password", "x".repeat(20)])).code,
      2
    )
    assert.strictEqual((await cli(["operator", "create", "bob", "--password-stdin"], "x".repeat(20))).code, 2)
    const listed = JSON.parse((await cli(["operator", "list", "--json"])).stdout) as Array<Listed>
    assert.deepStrictEqual(
      listed.map((o) => [o.name, o.role, o.last_sign_in_at]),
      [["ada", "operator", null]]
    )
    assert.notInclude(JSON.stringify(listed), "scrypt")
    const table = await cli(["operator", "list"])
    assert.match(table.stdout, /^NAME +ROLE +CREATED +LAST SIGN-IN\nada +operator /)
  })

  it("operator create refuses a taken name, a bad role, a bad name and a short password, creating nothing", async () => {
    const cli = cliOn(join(tmp.dir, "refused.sqlite"))
    const password = "a long operator password"
    assert.strictEqual(
      (await cli(["operator", "create", "ada", "--role=admin", "--password-stdin"], password)).code,
      0
    )
    const taken = await cli(["operator", "create", "ada", "--role=viewer", "--password-stdin"], password)
    assert.strictEqual(taken.code, 1)
    assert.include(taken.stderr, 'an operator named "ada" exists')
    const role = await cli(["operator", "create", "bob", "--role=root", "--password-stdin"], password)
    assert.strictEqual(role.code, 1)
    assert.include(role.stderr, "role must be admin, operator or viewer")
    const name = await cli(["operator", "create", "Bob Smith", "--role=viewer", "--password-stdin"], password)
    assert.strictEqual(name.code, 1)
    assert.include(name.stderr, "an operator name is 1 to 64 characters")
    const short = await cli(["operator", "create", "bob", "--role=viewer", "--password-stdin"], "short")
    assert.strictEqual(short.code, 1)
    const listed = JSON.parse((await cli(["operator", "list", "--json"])).stdout) as Array<Listed>
    assert.deepStrictEqual(
      listed.map((o) => [o.name, o.role]),
      [["ada", "admin"]]
    )
    assert.lengthOf(await events(cli, "operator_created"), 1)
  })

  it("set-role, passwd and delete change the account, each audited with the CLI as actor and no password", async () => {
    const cli = cliOn(join(tmp.dir, "changes.sqlite"))
    await cli(["operator", "create", "ada", "--role=viewer", "--password-stdin"], "a long operator password")
    const role = await cli(["operator", "set-role", "ada", "--role=admin", "--json"])
    assert.strictEqual(role.code, 0, role.stderr)
    assert.strictEqual((JSON.parse(role.stdout) as Listed).role, "admin")
    const passwd = await cli(["operator", "passwd", "ada", "--password-stdin"], "another long password\n")
    assert.strictEqual(passwd.code, 0, passwd.stderr)
    assert.include(passwd.stdout, "their console sessions were ended")
    assert.strictEqual((await cli(["operator", "passwd", "ada"], "another long password")).code, 2)
    const deleted = await cli(["operator", "delete", "ada"])
    assert.strictEqual(deleted.code, 0, deleted.stderr)
    const again = await cli(["operator", "delete", "ada"])
    assert.strictEqual(again.code, 1)
    assert.include(again.stderr, 'no operator named "ada"')
    assert.strictEqual((await cli(["operator", "set-role", "nobody", "--role=admin"])).code, 1)
    assert.strictEqual((await cli(["operator", "list"])).stdout, "No operators.\n")
    const trail = [
      ...(await events(cli, "operator_created")),
      ...(await events(cli, "operator_updated")),
      ...(await events(cli, "operator_deleted"))
    ]
    assert.deepStrictEqual(
      trail.map((e) => e.detail),
      [
        "operator ada; role viewer",
        "operator ada; role viewer -> admin",
        "operator ada; password set; sessions ended",
        "operator ada"
      ]
    )
    assert.isTrue(trail.every((e) => e.actor === "cli"))
    assert.notInclude(JSON.stringify(trail), "long")
  })
})
