import { defineConfig } from "vitest/config"

/**
 * Every core test again inside an edge runtime VM (`@edge-runtime/vm`: Web APIs and no
 * Node globals), to prove the core needs nothing of Node: the grants, `Http.route`'s
 * endpoints (Http, Introspection, Fuzz, ReadmeExample), the interaction and the memory
 * store they all run on. The storage contract on that store runs in the edge VM from
 * @latchkey/storage-testkit (which depends on the core), with this package's edge check.
 */
export default defineConfig({
  ssr: { resolve: { conditions: ["@latchkey/source"] } },
  test: {
    environment: "edge-runtime",
    // Run each file in the VM's own context; the default pool only copies the VM's
    // globals onto Node's, where Node's own stay visible.
    pool: "vmForks",
    // Fails outside the edge VM, so a run that silently fell back to Node fails.
    include: ["test/edge/*.edge.ts", "test/**/*.test.ts"],
    // The VM's btoa and Web Crypto are slower than Node's: the property tests need longer.
    testTimeout: 30_000,
    reporters: ["default", "json"],
    outputFile: { json: "build/vitest-edge-report.json" }
  }
})
