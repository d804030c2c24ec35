import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // packs, lints and installs with npm: minutes on a loaded machine; every child process is bounded too
    testTimeout: 180_000,
    hookTimeout: 360_000,
    reporters: ["default", "json"],
    outputFile: { json: "build/vitest-report.json" }
  }
})
