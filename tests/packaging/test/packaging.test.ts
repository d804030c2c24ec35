// Packs every published package the way `pnpm publish` does, lints the tarballs (publint, attw),
// installs them with plain npm into a project outside the workspace, issues a token with them and
// type-checks a consumer file against them; the reference server, installed from its tarball too,
// starts with its `latchkey` command and runs a CLI command. Each package's README install line,
// read from the README itself, is run with pnpm and with npm in a fresh directory, the tarballs
// standing in for the registry's @latchkey/* names, and the installed package is then used.
import { execFile, spawn } from "node:child_process"
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, "../../..")
const fixtures = resolve(here, "../fixture")
const require = createRequire(import.meta.url)
const bin = (name: string) => resolve(here, "../node_modules/.bin", name)

const published = [
  "core",
  "express",
  "fetch",
  "node",
  "storage-postgres",
  "storage-sqlite",
  "storage-testkit"
] as const

/** The reference server: published for its `latchkey` command, not as a library (no exports). */
const server = "server"

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

// Children see neither this vitest's worker state nor colours (their output is matched).
const env = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("VITEST") && k !== "FORCE_COLOR")
  ),
  NO_COLOR: "1",
  CI: "true"
}

/** Runs a command with a time bound (killed past it) and never rejects: the exit code is the result. */
const run = (command: string, args: ReadonlyArray<string>, cwd: string, timeout = 120_000) =>
  new Promise<Run>((done) => {
    execFile(
      command,
      args,
      {
        cwd,
        timeout,
        killSignal: "SIGKILL",
        maxBuffer: 64 * 1024 * 1024,
        env
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        done({
          code,
          stdout,
          stderr: error?.killed ? `${stderr}\n(killed after ${timeout} ms)` : stderr
        })
      }
    )
  })

const explain = (r: Run) => `exit ${r.code}\n${r.stdout}\n${r.stderr}`

let work = ""
let tarballs = ""
let consumer = ""
const tarball = (pkg: string) => join(tarballs, `latchkey-${pkg}-0.1.0.tgz`)
const withServer = [...published, server]
const vendored = () => join(work, "vendor", "better-sqlite3")

/**
 * better-sqlite3 compiles from source (minutes): installs reuse the workspace's built copy,
 * vendored once without its install script, instead of building it again.
 */
const vendorSqlite = () => {
  if (existsSync(vendored())) return
  const sqlite = dirname(
    createRequire(join(root, "packages/storage-sqlite/package.json")).resolve("better-sqlite3/package.json")
  )
  for (const part of ["lib", "LICENSE", "build/Release/better_sqlite3.node"]) {
    cpSync(join(sqlite, part), join(vendored(), part), { recursive: true })
  }
  const manifest = JSON.parse(readFileSync(join(sqlite, "package.json"), "utf8"))
  manifest.scripts = {}
  manifest.dependencies = { bindings: manifest.dependencies.bindings }
  writeFileSync(join(vendored(), "package.json"), JSON.stringify(manifest, null, 2))
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "latchkey-packaging-"))
  tarballs = join(work, "tarballs")
  consumer = join(work, "consumer")
  mkdirSync(tarballs)
  mkdirSync(consumer)
  // The documented command (`pnpm pack:published`): pnpm pack of every package that is not private,
  // which runs each prepack (the build), swaps publishConfig.exports in, rewrites workspace: ranges.
  const pack = await run(process.execPath, [join(root, "scripts/pack.mjs"), tarballs], root, 240_000)
  expect(pack.code, explain(pack)).toBe(0)
  expect(readdirSync(tarballs).sort()).toEqual(withServer.map((p) => `latchkey-${p}-0.1.0.tgz`).sort())
}, 300_000)

afterAll(() => {
  if (work !== "") rmSync(work, { recursive: true, force: true })
})

describe("the packed tarballs", () => {
  it.each(published)("publint passes on @latchkey/%s", async (pkg) => {
    const r = await run(bin("publint"), ["run", tarball(pkg), "--strict", "--level", "suggestion"], work)
    expect(r.code, explain(r)).toBe(0)
    expect(r.stdout, explain(r)).toContain("All good!")
  })

  it.each(published)("attw (esm-only) passes on @latchkey/%s", async (pkg) => {
    // Every public module behind the "./*" pattern, which attw does not expand by itself: the
    // sources in every folder but those the package's exports close (`"./x/internal/*": null`).
    const { exports } = JSON.parse(readFileSync(join(root, "packages", pkg, "package.json"), "utf8")) as {
      readonly exports: Record<string, unknown>
    }
    const closed = Object.keys(exports)
      .filter((key) => exports[key] === null)
      .map((key) => key.slice("./".length, -"*".length))
    const modules = (readdirSync(join(root, "packages", pkg, "src"), { recursive: true }) as Array<string>)
      .map((f) => f.split(sep).join("/"))
      .filter((f) => f.endsWith(".ts") && f !== "index.ts" && !closed.some((c) => f.startsWith(c)))
      .map((f) => `./${f.slice(0, -".ts".length)}`)
    const entrypoints = modules.length === 0 ? [] : ["--include-entrypoints", ...modules]
    const r = await run(
      bin("attw"),
      [tarball(pkg), "--profile", "esm-only", "--format", "ascii", "--no-color", ...entrypoints],
      work
    )
    expect(r.code, explain(r)).toBe(0)
  })

  it.each(published)("@latchkey/%s contains LICENSE, README.md and what its exports name", async (pkg) => {
    const r = await run("tar", ["-tzf", tarball(pkg)], work)
    expect(r.code, explain(r)).toBe(0)
    const files = r.stdout.split("\n")
    for (const f of ["LICENSE", "README.md", "package.json", "dist/index.js", "dist/index.d.ts"]) {
      expect(files).toContain(`package/${f}`)
    }
    const manifest = await run("tar", ["-xzOf", tarball(pkg), "package/package.json"], work)
    const json = JSON.parse(manifest.stdout)
    expect(JSON.stringify(json)).not.toContain("workspace:")
    expect(JSON.stringify(json.exports)).not.toContain("@latchkey/source")
  })
})

describe("the reference server's tarball", () => {
  it("passes publint and holds LICENSE, README.md and the latchkey command", async () => {
    const lint = await run(
      bin("publint"),
      ["run", tarball(server), "--strict", "--level", "suggestion"],
      work
    )
    expect(lint.code, explain(lint)).toBe(0)
    const r = await run("tar", ["-tzf", tarball(server)], work)
    const files = r.stdout.split("\n")
    for (const f of ["LICENSE", "README.md", "package.json", "dist/bin.js", "dist/main.js", "dist/cli.js"]) {
      expect(files).toContain(`package/${f}`)
    }
    const manifest = JSON.parse(
      (await run("tar", ["-xzOf", tarball(server), "package/package.json"], work)).stdout
    )
    expect(manifest.bin).toEqual({ latchkey: "dist/bin.js" })
    expect(manifest.private).toBeUndefined()
    expect(JSON.stringify(manifest)).not.toContain("workspace:")
    const binJs = await run("tar", ["-xzOf", tarball(server), "package/dist/bin.js"], work)
    expect(binJs.stdout.startsWith("#!/usr/bin/env node\n")).toBe(true)
  })
})

/** The environment of the installed server and CLI: none of this machine's Latchkey settings. */
const serverEnv = (db: string): NodeJS.ProcessEnv =>
  Object.fromEntries(
    Object.entries({ ...env, LATCHKEY_DB: db, PORT: "0", HOST: "127.0.0.1" }).filter(
      ([k]) => k === "LATCHKEY_DB" || !(k.startsWith("LATCHKEY_") || k === "DATABASE_URL" || k === "INIT_CWD")
    )
  )

interface Started {
  readonly port: number
  readonly stop: () => Promise<number | string | null>
  readonly output: () => string
}

/**
 * Starts the installed `latchkey` command with `args` and resolves once it logs the port it
 * listens on; rejects if it exits first or logs nothing of the kind within 30 s (then killed).
 * `stop` sends SIGTERM and resolves with the exit code, or "killed" when it is still running 15 s later.
 */
const startServer = (args: ReadonlyArray<string>, db: string) =>
  new Promise<Started>((resolve, reject) => {
    const child = spawn(join(consumer, "node_modules/.bin/latchkey"), args, {
      cwd: consumer,
      env: serverEnv(db),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)))
    const stop = async () => {
      child.kill("SIGTERM")
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<string>((done) => {
        timer = setTimeout(() => {
          child.kill("SIGKILL")
          done("killed")
        }, 15_000)
      })
      const code = await Promise.race([exited, late])
      clearTimeout(timer)
      return code
    }
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`no listening line within 30 s\n${out}`))
    }, 30_000)
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d
      const port = /"port":(\d+),[^\n]*"msg":"listening/.exec(out)?.[1]
      if (port === undefined) return
      clearTimeout(timer)
      resolve({ port: Number(port), stop, output: () => out })
    })
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      out += d
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`exited with ${code} before listening\n${out}`))
    })
  })

describe("installed with npm outside the workspace", () => {
  beforeAll(async () => {
    vendorSqlite()
    const version = (name: string, from = "packages/express/package.json") =>
      JSON.parse(readFileSync(createRequire(join(root, from)).resolve(`${name}/package.json`), "utf8"))
        .version
    const ours = Object.fromEntries(withServer.map((p) => [`@latchkey/${p}`, `file:${tarball(p)}`]))
    writeFileSync(
      join(consumer, "package.json"),
      JSON.stringify(
        {
          name: "latchkey-packaging-consumer",
          private: true,
          type: "module",
          dependencies: {
            ...ours,
            "better-sqlite3": `file:${vendored()}`,
            effect: version("effect"),
            express: version("express"),
            pg: version("pg", "packages/storage-postgres/package.json")
          },
          devDependencies: {
            "@types/express": version("@types/express"),
            "@types/node": require("@types/node/package.json").version
          },
          // the dependencies between our packages (^0.1.0) resolve to the tarballs, never to the registry
          overrides: Object.fromEntries(
            [...Object.keys(ours), "better-sqlite3"].map((name) => [name, `$${name}`])
          )
        },
        null,
        2
      )
    )
    const install = await run(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
      consumer,
      240_000
    )
    expect(install.code, explain(install)).toBe(0)
  }, 300_000)

  it("issues a client_credentials token through core, storage-sqlite and express", async () => {
    cpSync(join(fixtures, "issue-token.mjs"), join(consumer, "issue-token.mjs"))
    const r = await run(process.execPath, ["issue-token.mjs"], consumer, 60_000)
    expect(r.code, explain(r)).toBe(0)
    const last = r.stdout.trim().split("\n").at(-1) ?? ""
    const { status, body } = JSON.parse(last)
    expect(status).toBe(200)
    expect(body).toMatchObject({ token_type: "Bearer", expires_in: expect.any(Number), scope: "profile" })
    expect(body.access_token).toMatch(/^[A-Za-z0-9_-]{20,}$/)
  })

  // storage-testkit's entry point needs a running vitest (next test); its Fixtures do not.
  it.each(published.map((p) => (p === "storage-testkit" ? `${p}/Fixtures` : p)))(
    "plain node imports @latchkey/%s",
    async (pkg) => {
      const r = await run(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `const m = await import("@latchkey/${pkg}"); if (Object.keys(m).length === 0) process.exit(3)`
        ],
        consumer,
        60_000
      )
      expect(r.code, explain(r)).toBe(0)
    }
  )

  it("storage-testkit's contract passes on storage-sqlite under the consumer's own vitest", async () => {
    cpSync(join(fixtures, "contract.test.mjs"), join(consumer, "contract.test.mjs"))
    const r = await run(
      join(consumer, "node_modules/.bin/vitest"),
      ["run", "contract.test.mjs", "--reporter=dot"],
      consumer,
      150_000
    )
    expect(r.code, explain(r)).toBe(0)
    expect(r.stdout, explain(r)).toMatch(/Tests\s+\d+ passed/)
  })

  it("a consumer file type-checks with tsc --noEmit", async () => {
    cpSync(join(fixtures, "consumer.ts"), join(consumer, "consumer.ts"))
    writeFileSync(
      join(consumer, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          exactOptionalPropertyTypes: true,
          skipLibCheck: false,
          noEmit: true,
          types: ["node"]
        },
        files: ["consumer.ts"]
      })
    )
    const r = await run(
      process.execPath,
      [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.json"],
      consumer
    )
    expect(r.code, explain(r)).toBe(0)
  })

  it.each([[[]], [["serve"]]])(
    "latchkey %j starts the server: /healthz answers 200, SIGTERM stops it with exit code 0",
    async (args) => {
      const started = await startServer(args, join(work, `server-${args.length}.sqlite`))
      try {
        const res = await fetch(`http://127.0.0.1:${started.port}/healthz`, {
          signal: AbortSignal.timeout(10_000)
        })
        expect(res.status, started.output()).toBe(200)
        expect(await res.json()).toEqual({ status: "ok" })
      } finally {
        expect(await started.stop(), started.output()).toBe(0)
      }
    }
  )

  it("latchkey <command> runs the management CLI: app create, then app list --json", async () => {
    const db = join(work, "cli.sqlite")
    const latchkey = join(consumer, "node_modules/.bin/latchkey")
    const cli = (args: ReadonlyArray<string>) =>
      new Promise<Run>((done) => {
        execFile(
          latchkey,
          args,
          { cwd: consumer, env: serverEnv(db), timeout: 60_000, killSignal: "SIGKILL" },
          (error, stdout, stderr) =>
            done({
              code: error === null ? 0 : typeof error.code === "number" ? error.code : 1,
              stdout,
              stderr
            })
        )
      })
    const created = await cli([
      "app",
      "create",
      "--name",
      "demo",
      "--redirect-uri",
      "http://127.0.0.1:9000/cb",
      "--json"
    ])
    expect(created.code, explain(created)).toBe(0)
    const { app_key } = JSON.parse(created.stdout) as { app_key: string }
    const listed = await cli(["app", "list", "--json"])
    expect(listed.code, explain(listed)).toBe(0)
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ app_key, name: "demo" })])
  })
})

/** The `pnpm add` commands of a README's Install section (its first fenced block), each as its arguments. */
const installLines = (readme: string): ReadonlyArray<ReadonlyArray<string>> => {
  const section = readme.split(/^## Install$/m)[1]?.split(/^## /m)[0] ?? ""
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(section)?.[1] ?? ""
  return block
    .split("\n")
    .map((line) => line.replace(/#.*$/, "").trim().split(/\s+/))
    .filter((words) => words[0] === "pnpm" && words[1] === "add")
    .map((words) => words.slice(2))
}

/** A package spec's name: `effect@^3.22` → `effect`, `@latchkey/core` → `@latchkey/core`. */
const specName = (spec: string) => spec.replace(/^(@?[^@]+)@.*$/, "$1")

const readmeOf = (pkg: string) => readFileSync(join(root, "packages", pkg, "README.md"), "utf8")

describe("each package's README install line", () => {
  it.each(published)("@latchkey/%s's names every peer dependency with its supported range", (pkg) => {
    const lines = installLines(readmeOf(pkg))
    expect(lines.length, `no \`pnpm add\` in the Install section of ${pkg}'s README`).toBeGreaterThan(0)
    const specs = lines.flat().filter((word) => !word.startsWith("-"))
    const { peerDependencies = {} } = JSON.parse(
      readFileSync(join(root, "packages", pkg, "package.json"), "utf8")
    ) as { readonly peerDependencies?: Record<string, string> }
    for (const peer of Object.keys(peerDependencies)) {
      const spec = specs.find((s) => specName(s) === peer)
      expect(spec, `${pkg}'s install line omits its peer ${peer}`).toBeDefined()
      // without a range the registry's latest major is installed (effect 4 breaks @latchkey/core)
      if (!peer.startsWith("@latchkey/"))
        expect(spec, `${pkg}'s install line names no range for ${peer}`).toMatch(/.@./)
    }
  })

  describe.each(["pnpm", "npm"] as const)("run with %s in a fresh directory", (manager) => {
    it.each(published)("installs @latchkey/%s with the tarballs, which then loads and runs", async (pkg) => {
      vendorSqlite()
      const dir = mkdtempSync(join(work, `readme-${manager}-${pkg}-`))
      // every @latchkey/* name, asked for or depended on, resolves to its tarball, never to the
      // registry; npm wants an override of a direct dependency spelled as that dependency is
      const local = (path: string) => `file:${relative(dir, path)}`
      const ours = Object.fromEntries(withServer.map((p) => [`@latchkey/${p}`, local(tarball(p))]))
      const overrides = { ...ours, "better-sqlite3": local(vendored()) }
      writeFileSync(
        join(dir, "package.json"),
        JSON.stringify({
          name: "readme-install",
          private: true,
          type: "module",
          overrides,
          pnpm: { overrides }
        })
      )
      for (const words of installLines(readmeOf(pkg))) {
        const args = words.map((w) =>
          w.startsWith("@latchkey/") ? tarball(w.slice("@latchkey/".length)) : w
        )
        const install =
          manager === "pnpm"
            ? await run(
                "pnpm",
                ["add", ...args, "--ignore-scripts", "--prefer-offline", "--reporter=silent"],
                dir,
                240_000
              )
            : await run(
                "npm",
                [
                  "install",
                  ...args.map((a) => (a === "-D" ? "--save-dev" : a)),
                  "--ignore-scripts",
                  "--prefer-offline",
                  "--no-audit",
                  "--no-fund",
                  "--loglevel=error"
                ],
                dir,
                240_000
              )
        expect(install.code, `${manager} add ${words.join(" ")}\n${explain(install)}`).toBe(0)
      }
      // storage-testkit's entry point needs a running vitest; its Fixtures do not
      const entry = pkg === "storage-testkit" ? `@latchkey/${pkg}/Fixtures` : `@latchkey/${pkg}`
      const use = [
        `import { Effect } from "effect"`,
        `import { Scope } from "@latchkey/core"`,
        `const m = await import(${JSON.stringify(entry)})`,
        `if (Object.keys(m).length === 0) process.exit(3)`,
        `console.log(Effect.runSync(Effect.map(Scope.parse("profile email"), Scope.format)))`
      ].join("\n")
      const r = await run(process.execPath, ["--input-type=module", "-e", use], dir, 60_000)
      expect(r.code, explain(r)).toBe(0)
      expect(r.stdout.trim()).toBe("email,profile")
    })
  })
})
