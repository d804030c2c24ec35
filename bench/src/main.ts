/**
 * `pnpm bench`: run the benchmark with the knobs of the environment, print the markdown
 * report, and write the raw results to bench/results/<timestamp>.json.
 * Exit 1 when a run was invalid (or, with STRICT=1, when a target is missed).
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { runBench } from "./harness.js"
import * as Knobs from "./knobs.js"
import { benchRoot } from "./paths.js"
import { killAll } from "./proc.js"
import * as Report from "./report.js"

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    killAll()
    process.exit(130)
  })
}

const knobs = Knobs.read()
const result = await runBench(knobs, { keep: process.env.KEEP === "1" })
const table = Report.rows(result)
const ratios = Report.ratios(result, table)
const informational = Report.informational(table)
process.stdout.write(`\n${Report.markdown(result)}`)
const dir = knobs.resultsDir ?? join(benchRoot, "results")
mkdirSync(dir, { recursive: true })
const file = join(dir, `${result.startedAt.replace(/[:.]/g, "-")}.json`)
writeFileSync(file, `${JSON.stringify({ ...result, rows: table, ratios, informational }, null, 2)}\n`)
process.stdout.write(`\nRaw results: ${file}\n`)
const invalid = table.some((r) => !r.ok)
const missed = ratios.some((r) => r.pass === false)
process.exitCode = invalid || (knobs.strict && missed) ? 1 : 0
