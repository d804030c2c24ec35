// The import-layer rules of .dependency-cruiser.cjs (`pnpm lint:layers`): a tree that keeps them
// passes, and each rule fails a tree that breaks it with one import.
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { bin, root, run, tree } from "./fixture.js"

/** A workspace in miniature whose imports keep every rule. */
const clean: Record<string, string> = {
  "packages/core/src/index.ts": 'export * as Token from "./model/Token.js"\n',
  "packages/core/src/services/Digest.ts": "export const sha256 = (s: string): string => s\n",
  "packages/core/src/model/Token.ts":
    'import { sha256 } from "../services/Digest.js"\nexport const id = sha256("t")\n',
  "packages/core/src/storage/TokenStore.ts":
    'import { id } from "../model/Token.js"\nexport const key = id\n',
  "packages/core/src/security/Session.ts":
    'import { key } from "../storage/TokenStore.js"\nexport const s = key\n',
  "packages/core/src/oauth/Grant.ts": 'import { s } from "../security/Session.js"\nexport const g = s\n',
  "packages/core/src/http/Http.ts": 'import { g } from "../oauth/Grant.js"\nexport const h = g\n',
  "packages/core/src/admin/Admin.ts": 'import { h } from "../http/Http.js"\nexport const a = h\n',
  "packages/core/src/interaction/Interaction.ts":
    'import { a } from "../admin/Admin.js"\nexport const i = a\n',
  "packages/storage-sqlite/src/index.ts":
    'import { Token } from "../../core/src/index.js"\nexport const t = Token\n',
  "packages/storage-postgres/src/index.ts":
    'import { Token } from "../../core/src/index.js"\nexport const t = Token\n',
  "packages/express/src/index.ts":
    'import { Token } from "../../core/src/index.js"\nexport const t = Token\n',
  "apps/server/src/main.ts":
    'import { t } from "../../../packages/storage-sqlite/src/index.js"\nimport { t as e } from "../../../packages/express/src/index.js"\nexport const m = [t, e]\n'
}

/** One import that breaks a rule: the rule's name, the file, what it imports. */
const breaks: ReadonlyArray<readonly [rule: string, file: string, from: string]> = [
  ["core-no-node", "packages/core/src/model/Bad.ts", "node:fs"],
  ["core-only-effect", "packages/core/src/oauth/Bad.ts", "left-pad"],
  ["core-no-workspace-package", "packages/core/src/http/Bad.ts", "../../../express/src/index.js"],
  ["core-no-workspace-package", "packages/core/src/http/Bad2.ts", "../../../../apps/server/src/main.js"],
  ["adapters-independent", "packages/storage-sqlite/src/Bad.ts", "../../storage-postgres/src/index.js"],
  ["bindings-no-storage", "packages/express/src/Bad.ts", "../../storage-sqlite/src/index.js"],
  ["packages-not-apps", "packages/storage-postgres/src/Bad.ts", "../../../apps/server/src/main.js"],
  ["core-public-entry-only", "apps/server/src/Bad.ts", "../../../packages/core/src/model/Token.js"],
  ["core-services-leaf", "packages/core/src/services/Bad.ts", "../model/Token.js"],
  ["core-model-below", "packages/core/src/model/Bad.ts", "../storage/TokenStore.js"],
  ["core-model-below", "packages/core/src/model/Bad2.ts", "../http/Http.js"],
  ["core-storage-ports", "packages/core/src/storage/Bad.ts", "../http/Http.js"],
  ["core-storage-ports", "packages/core/src/storage/Bad2.ts", "../admin/Admin.js"],
  ["core-security-below-front", "packages/core/src/security/Bad.ts", "../interaction/Interaction.js"],
  ["core-oauth-below-pages", "packages/core/src/oauth/Bad.ts", "../admin/Admin.js"],
  ["core-openid-below-protocol", "packages/core/src/openid/Bad.ts", "../oauth/Grant.js"],
  ["core-openid-below-protocol", "packages/core/src/openid/Bad2.ts", "../http/Http.js"],
  ["core-openid-below-protocol", "packages/core/src/openid/Bad3.ts", "../security/Session.js"],
  ["core-signing-below-protocol", "packages/core/src/signing/Bad.ts", "../oauth/Grant.js"],
  ["core-signing-below-protocol", "packages/core/src/signing/Bad2.ts", "../security/Session.js"],
  ["no-cycles", "packages/core/src/oauth/Bad.ts", "./Bad.js"]
]

const cruise = (dir: string) =>
  run(bin("depcruise"), ["packages", "apps", "--config", join(root, ".dependency-cruiser.cjs")], dir)

describe("dependency-cruiser's layer rules", () => {
  it("pass a tree that keeps them", async () => {
    const result = await cruise(tree(clean))
    expect(result.output).toContain("no dependency violations found")
    expect(result.code).toBe(0)
  })

  it.each(breaks)("%s fails %s importing %s", async (rule, file, from) => {
    const result = await cruise(tree({ ...clean, [file]: `import "${from}"\n` }))
    expect(result.code).not.toBe(0)
    expect(result.output).toContain(`error ${rule}: ${file}`)
  })
})
