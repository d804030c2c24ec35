import { defineConfig } from "vitest/config"

/**
 * The storage contract on the core's memory store again inside an edge runtime VM
 * (`@edge-runtime/vm`: Web APIs and no Node globals), so the contract and the store it
 * checks are shown to need nothing of Node.
 */
export default defineConfig({
  ssr: { resolve: { conditions: ["@latchkey/source"] } },
  test: {
    environment: "edge-runtime",
    // Each file in the VM's own context; the default pool only copies the VM's globals onto Node's.
    pool: "vmForks",
    // The core's edge check fails outside the edge VM, so a run that silently fell back to Node fails.
    include: ["test/Memory.test.ts", "../core/test/edge/*.edge.ts"],
    testTimeout: 30_000,
    reporters: ["default", "json"],
    outputFile: { json: "build/vitest-edge-report.json" }
  }
})
