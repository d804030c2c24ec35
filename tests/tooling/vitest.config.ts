import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // each case starts a tool (dependency-cruiser, knip, API Extractor) in a child process
    testTimeout: 120_000,
    reporters: ["default", "json"],
    outputFile: { json: "build/vitest-report.json" }
  }
})
