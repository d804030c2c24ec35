import { defineConfig } from "vitest/config"

export default defineConfig({
  // Resolve the workspace packages (@latchkey/*) to their TypeScript sources, not to a
  // possibly stale dist: the "@latchkey/source" export condition of their package.json.
  ssr: { resolve: { conditions: ["@latchkey/source"] } },
  test: {
    include: ["*.test.ts"],
    reporters: ["default", "json"],
    outputFile: { json: "build/vitest-report.json" }
  }
})
