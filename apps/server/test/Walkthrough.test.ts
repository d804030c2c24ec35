import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import {
  freePort,
  repoRoot,
  runProcess,
  type ServerProcess,
  serverDir,
  spawnServer,
  tempDir
} from "./helpers.js"

const tmp = tempDir()
const db = join(tmp.dir, "walk.sqlite")
let server: ServerProcess

beforeAll(async () => {
  const port = await freePort()
  server = await spawnServer({ LATCHKEY_DB: db, PORT: String(port) })
}, 30_000)
afterAll(async () => {
  await server.stop()
  tmp.cleanup()
})

describe("the README walk-through", () => {
  it("runs as written (all but the browser-only steps)", async () => {
    const readme = readFileSync(join(serverDir, "README.md"), "utf8")
    const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string)
    const script = [
      "set -eu",
      // the published package's command, as a user who installed it runs it
      `latchkey() { node ${JSON.stringify(join(serverDir, "dist", "bin.js"))} "$@"; }`,
      ...blocks.slice(1).filter((b) => !b.includes("paste-the-code-here") && !b.includes("pnpm start"))
    ]
      .join("\n")
      .replaceAll("http://localhost:8080", `http://localhost:${server.port}`)
    const r = await runProcess("bash", ["-c", script], {
      cwd: repoRoot,
      env: { LATCHKEY_DB: db },
      timeoutMs: 90_000
    })
    assert.strictEqual(r.code, 0, r.stderr)
    assert.include(r.stdout, '"token_type":"Bearer"')
    assert.include(r.stdout, '"open_id":"device-42"')
    assert.include(r.stdout, '"active":true')
    assert.include(r.stdout, '{"active":false}')
    assert.match(r.stdout, /http:\/\/127\.0\.0\.1:9000\/cb\?code=[^&]+&state=abc&iss=/)
    assert.include(r.stdout, '"error":"unsupported_grant_type"')
  })

  it("the root README's quick start asks for a token on the port PORT names", async () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
    const quickStart = readme.slice(
      readme.indexOf("## Quick start"),
      readme.indexOf("\n## ", readme.indexOf("## Quick start") + 1)
    )
    const blocks = [...quickStart.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string)
    assert.strictEqual(blocks.length, 2)
    assert.include(blocks[0], "pnpm start")
    const r = await runProcess("bash", ["-c", ["set -eu", blocks[1]].join("\n")], {
      cwd: repoRoot,
      env: { LATCHKEY_DB: db, PORT: String(server.port) },
      timeoutMs: 60_000
    })
    assert.strictEqual(r.code, 0, r.stderr)
    assert.match(r.stdout, /"token_type":"Bearer"/)
  })
})
