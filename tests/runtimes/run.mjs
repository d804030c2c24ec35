// Runs vitest (the config next to this file) under Bun, then under Deno, both from this
// package's node_modules; each writes build/vitest-<runtime>-report.json. Fails if either fails.
import { spawnSync } from "node:child_process"
import { rmSync } from "node:fs"
import { fileURLToPath } from "node:url"

const here = fileURLToPath(new URL(".", import.meta.url))
const bin = (name) => fileURLToPath(new URL(`node_modules/.bin/${name}`, import.meta.url))
const vitest = fileURLToPath(new URL("node_modules/vitest/vitest.mjs", import.meta.url))
const args = ["run", "--config", "vitest.config.ts"]

const runtimes = {
  bun: [bin("bun"), ["--bun", vitest, ...args]],
  // deno: Deno's node compatibility; -A for the forks pool's child processes and the files it reads
  deno: [bin("deno"), ["run", "-A", "--cached-only", vitest, ...args]]
}

let failed = false
for (const [runtime, [command, argv]] of Object.entries(runtimes)) {
  rmSync(new URL(`build/vitest-${runtime}-report.json`, import.meta.url), { force: true })
  console.log(`\n=== vitest under ${runtime} ===`)
  const started = Date.now()
  const r = spawnSync(command, argv, {
    cwd: here,
    stdio: "inherit",
    // a bound against a hang, not a measure: the suite takes minutes under Bun or Deno on a loaded machine
    timeout: 600_000,
    killSignal: "SIGKILL",
    env: { ...process.env, LATCHKEY_RUNTIME: runtime, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" }
  })
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  if (r.status !== 0) {
    failed = true
    console.error(
      `vitest under ${runtime} failed (${r.error ?? r.signal ?? `exit ${r.status}`}) in ${seconds} s`
    )
  } else console.log(`vitest under ${runtime}: passed in ${seconds} s`)
}
process.exit(failed ? 1 : 0)
