#!/usr/bin/env node
// `pnpm pack:published [destination]`: packs every published workspace package (each whose
// package.json is not "private") into `destination` (default build/tarballs), the way `pnpm publish`
// packs it: prepack builds it, publishConfig is applied and workspace: ranges become versions.
// `pnpm -r pack` alone would pack the private packages too (examples, bench, tests).
import { execFileSync } from "node:child_process"
import { mkdirSync } from "node:fs"
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
// A relative destination starts where the command was run (pnpm runs scripts at the root).
// biome-ignore lint/suspicious/noUndeclaredEnvVars: a script run by hand, not a turbo task
const here = process.env.INIT_CWD ?? process.cwd()
const destination = resolve(here, process.argv[2] ?? resolve(root, "build/tarballs"))

/** Every workspace package whose manifest is not private. */
const published = JSON.parse(
  execFileSync("pnpm", ["ls", "-r", "--depth", "-1", "--json"], { cwd: root, encoding: "utf8" })
)
  .filter((p) => p.private !== true)
  .map((p) => p.name)

mkdirSync(destination, { recursive: true })
execFileSync(
  "pnpm",
  ["-r", ...published.flatMap((name) => ["--filter", name]), "pack", "--pack-destination", destination],
  { cwd: root, stdio: "inherit" }
)
