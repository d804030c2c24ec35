// Dead-export check (`pnpm lint:dead`, part of `pnpm test`): knip, configured in knip.json, lists
// the files, exports, types and namespace members no code of the workspace uses (tests, bench
// and examples included). This script runs it and fails on any finding not in the allowlist
// below, or on an allowlist entry knip no longer reports (so the list only shrinks).
//
// Usage: node scripts/dead-exports.mjs [--no-allowlist]   (in the directory knip should check;
// the repository root in CI). --no-allowlist checks without the allowlist (tests/tooling runs it
// so on its fixtures).
import { spawnSync } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/**
 * Findings allowed, as `path: name`: none. Do not add one: delete the export, or tag it
 * `@public` in its doc comment when it is published on purpose.
 */
export const allowlist = new Set([])

/** The issue types of knip's JSON report that name something unused. */
const kinds = ["files", "exports", "types", "nsExports", "nsTypes", "enumMembers", "duplicates"]

/** Every finding of a knip JSON report, as `{ key, kind }`. */
export const findings = (report) =>
  report.issues.flatMap((issue) =>
    kinds.flatMap((kind) =>
      (issue[kind] ?? []).map((item) => {
        const name = Array.isArray(item) ? item.map((i) => i.name).join(" = ") : item.name
        return { key: kind === "files" ? issue.file : `${issue.file}: ${name}`, kind }
      })
    )
  )

/** Run knip in the working directory and read its JSON report. */
const runKnip = () => {
  const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "node_modules", ".bin", "knip")
  const run = spawnSync(bin, ["--reporter", "json", "--no-exit-code", "--no-progress"], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024
  })
  if (run.status !== 0 || run.stdout.trim() === "") {
    process.stderr.write(run.stderr)
    throw new Error(`knip exited with ${run.status}`)
  }
  return JSON.parse(run.stdout)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const allowed = process.argv.includes("--no-allowlist") ? new Set() : allowlist
  const all = findings(runKnip())
  const fresh = all.filter((f) => !allowed.has(f.key))
  const seen = new Set(all.map((f) => f.key))
  const stale = [...allowed].filter((key) => !seen.has(key))
  for (const f of fresh) console.error(`dead: ${f.key} (${f.kind}): unused anywhere in the workspace`)
  for (const key of stale)
    console.error(`dead: ${key} is in the allowlist but knip no longer reports it: remove it`)
  console.log(
    `dead: ${fresh.length} new findings, ${all.length - fresh.length} allowed (scripts/dead-exports.mjs), ${stale.length} stale allowlist entries`
  )
  process.exit(fresh.length > 0 || stale.length > 0 ? 1 : 0)
}
