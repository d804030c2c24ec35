// Sums the vitest JSON reports of every package into one closing line: "tests: N passed, N failed".
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

let passed = 0
let failed = 0
let skipped = 0
for (const group of ["packages", "apps", "examples", "tests"]) {
  if (!existsSync(group)) continue
  for (const name of readdirSync(group)) {
    // the package's run, and the same tests in another runtime where it has one (edge; Bun and
    // Deno in tests/runtimes)
    for (const [file, label] of [
      ["vitest-report.json", ""],
      ["vitest-edge-report.json", " (edge runtime)"],
      ["vitest-bun-report.json", " (Bun)"],
      ["vitest-deno-report.json", " (Deno)"]
    ]) {
      const report = join(group, name, "build", file)
      if (!existsSync(report)) continue
      const r = JSON.parse(readFileSync(report, "utf8"))
      passed += r.numPassedTests ?? 0
      failed += r.numFailedTests ?? 0
      skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0)
      console.log(`${group}/${name}${label}: ${r.numPassedTests} passed, ${r.numFailedTests} failed`)
    }
  }
}
console.log(`tests: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`)
process.exit(failed > 0 || passed === 0 ? 1 : 0)
