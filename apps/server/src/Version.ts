/**
 * The version of this server: the `version` of its package.json, read once at start (the file is
 * beside `src/` and `dist/` alike).
 */
import { readFileSync } from "node:fs"

/** The server's version (`version` of apps/server/package.json). */
export const version: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version
