import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

/**
 * The core's tests, the storage contract on the memory store and the fetch binding with its
 * example, run by `run.mjs` with vitest
 * itself running under Bun (`bun --bun`) and under Deno (`deno run -A`): the forks pool starts
 * its workers with the same runtime, which `test/runtime.test.ts` checks.
 */
const runtime = process.env.LATCHKEY_RUNTIME ?? "unknown"

export default defineConfig({
  // the repository, so the files run in place and resolve their own imports
  root: fileURLToPath(new URL("../..", import.meta.url)),
  // not the root's node_modules/.vite
  cacheDir: fileURLToPath(new URL("node_modules/.vite", import.meta.url)),
  // the workspace packages (@latchkey/*) as their TypeScript sources, as in their own runs
  ssr: { resolve: { conditions: ["@latchkey/source"] } },
  test: {
    include: [
      "tests/runtimes/test/*.test.ts",
      // every core test: the grants, Http.route's endpoints (Http, Introspection, Fuzz,
      // ReadmeExample, OpenApi...), the interaction, the memory store they run on
      "packages/core/test/**/*.test.ts",
      // the storage contract on the in-memory store
      "packages/storage-testkit/test/Memory.test.ts",
      // the fetch binding and its example: a token through Request/Response in each runtime
      "packages/fetch/test/**/*.test.ts",
      "examples/fetch-token/*.test.ts"
    ],
    pool: "forks",
    // the property tests are slower in Deno's node compatibility layer than in Node
    testTimeout: 30_000,
    reporters: ["default", "json"],
    outputFile: { json: fileURLToPath(new URL(`build/vitest-${runtime}-report.json`, import.meta.url)) }
  }
})
