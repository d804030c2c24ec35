/**
 * What the compiled server loads: a library a feature needs is loaded only when the feature is
 * on, so a server without it does not carry the library's code in its memory. Every module the
 * server resolves is recorded by a resolve hook (node:module `register`) the test installs.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { spawnServer, tempDir } from "./helpers.js"

const tmp = tempDir()
afterAll(() => tmp.cleanup())

const hooks = join(tmp.dir, "hooks.mjs")
writeFileSync(
  hooks,
  `import { appendFileSync } from "node:fs"
let out
export const initialize = (data) => { out = data.out }
export const resolve = async (specifier, context, next) => {
  const resolved = await next(specifier, context)
  appendFileSync(out, resolved.url + "\\n")
  return resolved
}
`
)
const registering = join(tmp.dir, "register.mjs")
writeFileSync(
  registering,
  `import { register } from "node:module"
register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { out: process.env.LOADED_OUT } })
`
)

/** The module URLs the compiled server resolved by the time it listened, with `env` added. */
const loadedBy = async (name: string, env: Record<string, string>): Promise<Array<string>> => {
  const out = join(tmp.dir, `${name}.txt`)
  writeFileSync(out, "")
  const server = await spawnServer(
    { NODE_OPTIONS: "", LATCHKEY_DB: join(tmp.dir, `${name}.sqlite`), PORT: "0", LOADED_OUT: out, ...env },
    ["--import", pathToFileURL(registering).href, "dist/main.js"],
    // Every resolution goes through the hook's thread: a slow start on a loaded machine
    { timeoutMs: 60_000 }
  )
  await server.stop()
  return readFileSync(out, "utf8").split("\n")
}

const webAuthnLibrary = (urls: ReadonlyArray<string>) =>
  urls.some((u) => u.includes("/@simplewebauthn/server/"))
const postgresDriver = (urls: ReadonlyArray<string>) => urls.some((u) => /\/node_modules\/pg\//.test(u))

describe("the libraries the compiled server loads", () => {
  it("on SQLite without passkeys: neither the WebAuthn library nor the PostgreSQL driver", async () => {
    const urls = await loadedBy("plain", {})
    assert.isTrue(
      urls.some((u) => u.includes("/storage-sqlite/")),
      "the hook saw the server's own modules"
    )
    assert.isFalse(webAuthnLibrary(urls), "@simplewebauthn/server was loaded")
    assert.isFalse(postgresDriver(urls), "pg was loaded")
  }, 90_000)

  it("with passkeys on: the WebAuthn library", async () => {
    assert.isTrue(webAuthnLibrary(await loadedBy("passkeys", { LATCHKEY_PASSKEYS: "on" })))
  }, 90_000)
})
