#!/usr/bin/env node
/**
 * The `latchkey` command of the published package. Alone, or as `latchkey serve`, it starts the
 * server (`main.ts`, configured by the environment like `pnpm start`); followed by any other
 * command it runs the management CLI (`cli.ts`): `latchkey app list`, `latchkey help`.
 */
const [first] = process.argv.slice(2)
if (first === undefined || first === "serve") {
  // The workers of LATCHKEY_WORKERS run this file again with the same arguments: none.
  if (first === "serve") process.argv.splice(2, 1)
  await import("./main.js")
} else {
  await import("./cli.js")
}
