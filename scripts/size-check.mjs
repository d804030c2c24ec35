// Size check (`pnpm lint:size`, part of `pnpm test`): no source file over 500 lines and no
// function over 80 lines in the sources of the packages and apps (packages/*/src, apps/*/src).
// It parses each file with the TypeScript compiler API, so a function is what the compiler says
// it is (declarations, methods, accessors, function expressions and arrow functions).
//
// Usage: node scripts/size-check.mjs [--no-allowlist] [root ...]   (roots default to
// packages/*/src apps/*/src, relative to the working directory). Exit code 1 on a violation not in
// the allowlist below, or on an allowlist entry that no longer matches a violation (so the list
// only shrinks). --no-allowlist checks without it (tests/tooling runs it so on its fixtures).
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative, sep } from "node:path"
import ts from "typescript"

/** The most lines a source file may have. */
export const maxFileLines = 500
/** The most lines a function may span, from its first token to its closing brace. */
export const maxFunctionLines = 80

/**
 * Files (`path`) or functions (`path:name`, an anonymous function named after the declaration it
 * sits in) allowed over the limits: none. Do not add one: split the file or function instead. An
 * entry that matches nothing fails the check.
 */
export const allowlist = new Set([])

/** The source files under the roots: .ts files, no declaration files. */
const sourceFiles = (root) => {
  const out = []
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (/\.(ts|tsx|mts|cts)$/.test(name) && !/\.d\.[mc]?ts$/.test(name)) out.push(path)
    }
  }
  walk(root)
  return out
}

/** The roots by default: every src/ of packages/* and apps/*. */
const defaultRoots = () =>
  ["packages", "apps"].flatMap((group) => {
    let names = []
    try {
      names = readdirSync(group)
    } catch {
      return []
    }
    return names
      .map((name) => join(group, name, "src"))
      .filter((dir) => {
        try {
          return statSync(dir).isDirectory()
        } catch {
          return false
        }
      })
  })

/** The name a declaration gives the function it holds, if it gives one. */
const declaredName = (node) => {
  const name = node.name
  if (name === undefined) return undefined
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name)) return name.text
  return name.getText()
}

/** A function's name: its own, or that of the nearest named declaration around it. */
const functionName = (node) => {
  for (let current = node; current !== undefined; current = current.parent) {
    if (ts.isSourceFile(current)) break
    if (ts.isConstructorDeclaration(current)) return "constructor"
    const named =
      ts.isFunctionDeclaration(current) ||
      ts.isFunctionExpression(current) ||
      ts.isMethodDeclaration(current) ||
      ts.isGetAccessorDeclaration(current) ||
      ts.isSetAccessorDeclaration(current) ||
      ts.isVariableDeclaration(current) ||
      ts.isPropertyAssignment(current) ||
      ts.isPropertyDeclaration(current) ||
      ts.isClassDeclaration(current)
    const name = named ? declaredName(current) : undefined
    if (name !== undefined) return name
  }
  return "<anonymous>"
}

const isFunction = (node) =>
  ts.isFunctionDeclaration(node) ||
  ts.isFunctionExpression(node) ||
  ts.isArrowFunction(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node)

/** The violations of one file: `{ key, message }`, key being what the allowlist names. */
export const checkFile = (path, text) => {
  const file = path.split(sep).join("/")
  const violations = []
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0)
  if (lines > maxFileLines) {
    violations.push({ key: file, message: `${file}: ${lines} lines (at most ${maxFileLines})` })
  }
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const visit = (node) => {
    if (isFunction(node) && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line
      const span = end - start + 1
      if (span > maxFunctionLines) {
        const name = functionName(node)
        violations.push({
          key: `${file}:${name}`,
          message: `${file}:${start + 1}: function ${name} spans ${span} lines (at most ${maxFunctionLines})`
        })
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return violations
}

/** Every violation under the roots, and which of them the allowlist does not cover. */
export const check = (roots, allowed = allowlist) => {
  const violations = roots.flatMap((root) =>
    sourceFiles(root).flatMap((path) => checkFile(relative(process.cwd(), path), readFileSync(path, "utf8")))
  )
  const fresh = violations.filter((v) => !allowed.has(v.key))
  const seen = new Set(violations.map((v) => v.key))
  const stale = [...allowed].filter((key) => !seen.has(key))
  return { violations, fresh, stale }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2)
  const roots = args.filter((a) => a !== "--no-allowlist")
  const allowed = args.includes("--no-allowlist") ? new Set() : allowlist
  const { violations, fresh, stale } = check(roots.length > 0 ? roots : defaultRoots(), allowed)
  for (const v of fresh) console.error(`size: ${v.message}`)
  for (const key of stale)
    console.error(`size: ${key} is in the allowlist but within the limits now: remove it`)
  const allowedCount = violations.length - fresh.length
  console.log(
    `size: ${roots.length > 0 ? roots.length : "default"} roots, ${fresh.length} new violations, ${allowedCount} allowed (scripts/size-check.mjs), ${stale.length} stale allowlist entries`
  )
  process.exit(fresh.length > 0 || stale.length > 0 ? 1 : 0)
}
