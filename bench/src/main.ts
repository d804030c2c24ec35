/**
 * `pnpm bench`: run the benchmark with the knobs of the environment, print the markdown
 * report, and write the raw results to bench/results/<timestamp>.json.
 * Exit 1 when a run was invalid (or, with STRICT=1, when a target is missed).
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as CoreCost from "./coreCost.js"
import { runBench } from "./harness.js"
import * as Knobs from "./knobs.js"
import { benchRoot } from "./paths.js"
import * as Postgres from "./postgres.js"
import { killAll } from "./proc.js"
import * as Report from "./report.js"
import * as Targets from "./targets.js"

let interrupted = false
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    interrupted = true
    killAll()
    // The servers are gone: drop latchkey-postgres' databases (bounded), then leave
    void Postgres.dropAll(10_000, true).then(
      (left) => {
        if (left.length > 0)
          process.stderr.write(`could not drop PostgreSQL database(s) ${left.join(", ")}\n`)
        process.exit(130)
      },
      () => process.exit(130)
    )
  })
}

const knobs = Knobs.read()
const measured = await runBench(knobs, { keep: process.env.KEEP === "1" })
// Interrupted: the runs ended by the signal are no results (the handler exits once the databases are dropped)
if (interrupted) await new Promise(() => {})
const result = knobs.coreCost
  ? { ...measured, coreCost: await CoreCost.measure(knobs, measured.pinned) }
  : measured
const table = Report.rows(result)
const ratios = Targets.ratios(result, table)
const informational = Targets.informational(result, table)
process.stdout.write(`\n${Report.markdown(result)}`)
const dir = knobs.resultsDir ?? join(benchRoot, "results")
mkdirSync(dir, { recursive: true })
const file = join(dir, `${result.startedAt.replace(/[:.]/g, "-")}.json`)
writeFileSync(file, `${JSON.stringify({ ...result, rows: table, ratios, informational }, null, 2)}\n`)
process.stdout.write(`\nRaw results: ${file}\n`)
const invalid = table.some((r) => !r.ok)
const missed = ratios.some((r) => r.pass === false)
process.exitCode = invalid || (knobs.strict && missed) ? 1 : 0
