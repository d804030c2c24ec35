// The API report of one published package (`pnpm api:check` / `pnpm api:update` in its folder;
// `pnpm api:update` at the root runs it in each). It emits the package's declarations afresh into
// build/api/dts (a full, non-incremental emit: the order TypeScript prints an inferred union in
// depends on what it checked first, so an incremental build's dist/ can differ from a clean one),
// then runs API Extractor on them with the package's api-extractor.json. Without --local it fails
// when the surface differs from etc/<package>.api.md; with --local it rewrites that file.
import { spawnSync } from "node:child_process"
import { rmSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const bin = (name) => join(dirname(fileURLToPath(import.meta.url)), "..", "node_modules", ".bin", name)

/** Run a command in the package folder; exit with its code when it fails. */
const step = (command, args) => {
  const result = spawnSync(command, args, { stdio: "inherit" })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

const out = "build/api/dts"
rmSync(out, { recursive: true, force: true })
step(bin("tsc"), [
  "-p",
  "tsconfig.src.json",
  "--composite",
  "false",
  "--incremental",
  "false",
  "--tsBuildInfoFile",
  "null",
  "--declarationMap",
  "false",
  "--sourceMap",
  "false",
  "--emitDeclarationOnly",
  "--outDir",
  out
])
step(bin("api-extractor"), ["run", ...(process.argv.includes("--local") ? ["--local"] : [])])
