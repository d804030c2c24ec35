// Wall-clock check (`pnpm lint:clock`, part of `pnpm test`): no test asserts elapsed wall-clock
// time. On a loaded machine any such bound fails by load alone, so a test counts what it means to
// prove (hashes, store calls, digests, connections) and timings belong in `pnpm bench`.
// It parses each test file with the TypeScript compiler API and reports every assertion
// (`assert.*(…)`, `expect(…)…`) whose arguments read elapsed time: a clock read minus a value
// (`Date.now() - start`, `performance.now() - t0`, `process.hrtime.bigint() - t`), a name assigned
// from one, a `.ms` property, a name starting with `elapsed`; and every call of `median(…)`.
// A clock read alone (`Date.now() + 3600_000`, an expiry's bound) and waits that only stop a test
// from hanging (a `while` condition, a `setTimeout`) are not assertions and pass.
//
// Usage: node scripts/wall-clock-check.mjs [root ...]   (roots default to apps packages tests
// bench examples, relative to the working directory). Exit code 1 on a violation; there is no
// allowlist.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative, sep } from "node:path"
import ts from "typescript"

/** Folders never walked. */
const skipped = new Set(["node_modules", "dist", "build", ".turbo"])

/** The test files under `root`: *.test.{ts,mts,js,mjs}. */
const testFiles = (root) => {
  const out = []
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) {
        if (!skipped.has(name)) walk(path)
      } else if (/\.test\.(ts|mts|js|mjs)$/.test(name)) out.push(path)
    }
  }
  walk(root)
  return out
}

/** `Date.now()`, `performance.now()`, `process.hrtime()` or `process.hrtime.bigint()`. */
const isClockRead = (node) => {
  if (!ts.isCallExpression(node)) return false
  const callee = node.expression.getText()
  return /^(Date\.now|performance\.now|process\.hrtime(\.bigint)?)$/.test(callee)
}

/** A clock read minus something that is not a number literal: elapsed time. */
const isElapsed = (node) =>
  ts.isBinaryExpression(node) &&
  node.operatorToken.kind === ts.SyntaxKind.MinusToken &&
  isClockRead(node.left) &&
  !ts.isNumericLiteral(node.right)

/** Whether `node` or anything in it satisfies `test`. */
const contains = (node, test) =>
  test(node) || (ts.forEachChild(node, (child) => contains(child, test)) ?? false)

/** The names assigned an elapsed time anywhere in the file (`const took = Date.now() - t`, `{ closedAfterMs: … }`). */
const elapsedNames = (file) => {
  const names = new Set()
  const visit = (node) => {
    const assigned =
      (ts.isVariableDeclaration(node) || ts.isPropertyAssignment(node)) && node.initializer !== undefined
        ? [node.name, node.initializer]
        : ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken
          ? [node.left, node.right]
          : undefined
    if (assigned !== undefined && ts.isIdentifier(assigned[0]) && contains(assigned[1], isElapsed)) {
      names.add(assigned[0].text)
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return names
}

/** An assertion call: `assert.x(…)`, `expect(…)` or a matcher chained on `expect(…)`. */
const isAssertion = (node) =>
  ts.isCallExpression(node) && /^(assert\.\w+|expect)\b/.test(node.expression.getText())

const isMedianCall = (node) =>
  ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "median"

/** Whether an assertion's arguments read elapsed wall-clock time. */
const readsElapsed = (node, names) =>
  node.arguments.some((argument) =>
    contains(
      argument,
      (n) =>
        isElapsed(n) ||
        isMedianCall(n) ||
        (ts.isPropertyAccessExpression(n) && n.name.text === "ms") ||
        (ts.isIdentifier(n) && (names.has(n.text) || /^elapsed/i.test(n.text)))
    )
  )

/** The violations of one file, as `path:line: text`. */
const check = (path, cwd) => {
  const source = readFileSync(path, "utf8")
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true)
  const names = elapsedNames(file)
  const out = []
  const where = (node) =>
    `${relative(cwd, path).split(sep).join("/")}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`
  const short = (node) => node.getText().replace(/\s+/g, " ").slice(0, 100)
  const visit = (node) => {
    if (isAssertion(node) && readsElapsed(node, names)) {
      out.push(`${where(node)}: ${short(node)} asserts elapsed wall-clock time`)
      return
    }
    if (isMedianCall(node)) {
      out.push(`${where(node)}: ${short(node)} compares timings`)
      return
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return out
}

const cwd = process.cwd()
const given = process.argv.slice(2)
const missing = given.filter((r) => !existsSync(join(cwd, r)))
if (missing.length > 0) {
  console.error(`no such folder: ${missing.join(", ")}`)
  process.exit(2)
}
const roots =
  given.length > 0
    ? given
    : ["apps", "packages", "tests", "bench", "examples"].filter((r) => existsSync(join(cwd, r)))
const files = roots.flatMap((r) => testFiles(join(cwd, r)))
const violations = files.flatMap((f) => check(f, cwd))
for (const v of violations) console.log(v)
console.log(`${files.length} test files, ${violations.length} wall-clock assertions`)
process.exitCode = violations.length === 0 ? 0 : 1
