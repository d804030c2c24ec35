// The import layers of the workspace, checked by dependency-cruiser (`pnpm lint:layers`, part of
// `pnpm test`). Paths are relative to the repository root; a workspace package is followed through
// its `@latchkey/source` export condition to its src/ file, so a rule on `^packages/X/` also
// catches `import ... from "@latchkey/X"`. A name that does not resolve (a package that is not a
// dependency) stays a bare name: the rules match `@latchkey/X` as well.

/** The core's subsystem folders under packages/core/src. */
const core = "^packages/core/src/"

/** A storage adapter, by path or by package name. */
const adapter = "(^packages/|@latchkey/)(storage-sqlite|storage-postgres)(/|$)"

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    // --- packages ---
    {
      name: "core-no-node",
      comment:
        "The core runs unchanged in Node, an edge VM, Bun and Deno: it imports no node: module (nor a bare Node built-in).",
      severity: "error",
      from: { path: core },
      to: { dependencyTypes: ["core"] }
    },
    {
      name: "core-only-effect",
      comment:
        "The core's runtime dependencies are effect and jose (JOSE over Web Crypto): no other npm package, nor a name that resolves to nothing.",
      severity: "error",
      from: { path: core },
      to: {
        dependencyTypes: [
          "npm",
          "npm-dev",
          "npm-peer",
          "npm-optional",
          "npm-bundled",
          "npm-no-pkg",
          "npm-unknown",
          "unknown"
        ],
        pathNot: "node_modules/(effect|jose)/"
      }
    },
    {
      name: "core-no-workspace-package",
      comment:
        "The core depends on no adapter, binding or app: they depend on it. It imports nothing outside packages/core.",
      severity: "error",
      from: { path: core },
      to: { path: "^packages/(?!core/)|^apps/|^@latchkey/" }
    },
    {
      name: "adapters-independent",
      comment: "One storage adapter never imports another: each stands on the core's ports alone.",
      severity: "error",
      from: { path: "^packages/(storage-sqlite|storage-postgres)/" },
      to: { path: adapter, pathNot: "(^packages/|@latchkey/)$1(/|$)" }
    },
    {
      name: "bindings-no-storage",
      comment:
        "An HTTP binding (express, node, fetch) takes its stores as a Layer; it imports no storage adapter.",
      severity: "error",
      from: { path: "^packages/(express|node|fetch)/" },
      to: { path: adapter }
    },
    {
      name: "packages-not-apps",
      comment: "The published packages never import the reference server (apps/): it is built on them.",
      severity: "error",
      from: { path: "^packages/" },
      to: { path: "^apps/|^@latchkey/server(/|$)" }
    },
    {
      name: "core-public-entry-only",
      comment:
        'Outside packages/core, the core is imported only as "@latchkey/core" (its index.ts), never by a deep path.',
      severity: "error",
      from: { path: "^(packages/(?!core/)|apps/|examples/|tests/|bench/)" },
      to: { path: "^packages/core/", pathNot: "^packages/core/src/index\\.ts$" }
    },

    {
      name: "no-cycles",
      comment:
        "No module imports itself through others at run time: a cycle makes load order decide what is defined, and blurs which module is below which. A type-only import is erased and closes no cycle.",
      severity: "error",
      from: { path: "^(packages|apps)/" },
      to: { circular: true, dependencyTypesNot: ["type-only"], viaOnly: { dependencyTypesNot: ["type-only"] } }
    },

    // --- folders inside the core (what holds today; docs/contributing.md has the graph) ---
    {
      name: "core-services-leaf",
      comment: "services/ (clock, digest, randomness, hashing ports) imports no other core folder.",
      severity: "error",
      from: { path: `${core}services/` },
      to: { path: core, pathNot: `${core}services/` }
    },
    {
      name: "core-model-below",
      comment:
        "model/ (the values: tokens, codes, scopes, applications, users, config) imports only services/. " +
        "The one exception: model/OpenId.ts reads the OpenIdStore port for its signing secret.",
      severity: "error",
      from: { path: `${core}model/` },
      to: {
        path: core,
        pathNot: [`${core}model/`, `${core}services/`, `${core}storage/OpenIdStore\\.ts$`]
      }
    },
    {
      name: "core-storage-ports",
      comment:
        "storage/ (the store ports and the memory stores) imports no protocol or front-end folder: not oauth/, http/, interaction/ or admin/.",
      severity: "error",
      from: { path: `${core}storage/` },
      to: { path: `${core}(oauth|http|interaction|admin)/` }
    },
    {
      name: "core-signing-below-protocol",
      comment:
        "signing/ (the signing keys, JWT signing and verification) imports no protocol or front-end folder: not oauth/, openid/, http/, interaction/ or admin/.",
      severity: "error",
      from: { path: `${core}signing/` },
      to: { path: `${core}(oauth|openid|http|interaction|admin|security)/` }
    },
    {
      name: "core-security-below-front",
      comment:
        "security/ (accounts, sessions, throttling, audit) imports no front-end folder: not http/, interaction/ or admin/.",
      severity: "error",
      from: { path: `${core}security/` },
      to: { path: `${core}(http|interaction|admin)/` }
    },
    {
      name: "core-openid-below-protocol",
      comment:
        "openid/ (ID token claims, userinfo claims, the OpenID fields of the discovery document) imports only model/, services/, storage/ and signing/: " +
        "oauth/ (the grants mint ID tokens, Metadata builds the discovery document) and http/ (the userinfo and JWKS endpoints) import it, so it imports neither and the folder graph stays acyclic.",
      severity: "error",
      from: { path: `${core}openid/` },
      to: { path: core, pathNot: `${core}(openid|model|services|storage|signing)/` }
    },
    {
      name: "core-oauth-below-pages",
      comment: "oauth/ (grants, requests, bearer, introspection) imports neither interaction/ nor admin/.",
      severity: "error",
      from: { path: `${core}oauth/` },
      to: { path: `${core}(interaction|admin)/` }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // The scanned folders' own node_modules/ (links) and build output are skipped; a package they
    // import still shows, at its resolved path under the root node_modules/.
    exclude: { path: "^((packages|apps|examples|tests)/[^/]+/|bench/)(node_modules|dist|build|\\.turbo)/" },
    // `import type` counts too: a type from node: in the core is still a Node dependency.
    tsPreCompilationDeps: true,
    combinedDependencies: false,
    enhancedResolveOptions: {
      conditionNames: ["@latchkey/source", "import", "types", "node", "default"],
      exportsFields: ["exports"],
      mainFields: ["module", "main", "types"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs", ".d.ts"]
    },
    reporterOptions: {
      archi: { collapsePattern: "^packages/core/src/[^/]+|^(packages|apps)/[^/]+" }
    }
  }
}
