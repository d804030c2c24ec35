/**
 * `pnpm --filter @latchkey/bench readme`: write the README's tables of targets and
 * informational ratios from their declarations in targets.ts.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { benchRoot } from "./paths.js"
import * as Targets from "./targets.js"

const file = join(benchRoot, "README.md")
writeFileSync(file, Targets.withTables(readFileSync(file, "utf8")))
