import { defineConfig } from "vitest/config"

export default defineConfig({
  // Resolve the workspace packages (@latchkey/*) to their TypeScript sources, not to a
  // possibly stale dist: the "@latchkey/source" export condition of their package.json.
  ssr: { resolve: { conditions: ["@latchkey/source"] } },
  test: {
    include: ["test/**/*.test.ts"],
    // A PGlite instance takes seconds to start, and the real database tests build several layers.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default", "json"],
    outputFile: { json: "build/vitest-report.json" }
  }
})
