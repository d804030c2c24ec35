// Throwaway trees for the checks to run on, and a way to run a root tool in one of them.
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll } from "vitest"

/** The repository root. */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..")

/** A command of the root's node_modules/.bin. */
export const bin = (name: string): string => join(root, "node_modules", ".bin", name)

/** How a child process ended. */
export interface Run {
  readonly code: number
  readonly output: string
}

// Children see neither this vitest's worker state nor colours (their output is matched).
const env = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("VITEST") && k !== "FORCE_COLOR")
  ),
  NO_COLOR: "1"
}

/** Run a command in `cwd`; its exit code and its stdout and stderr together. */
export const run = (command: string, args: ReadonlyArray<string>, cwd: string): Promise<Run> =>
  new Promise((done) => {
    execFile(
      command,
      [...args],
      { cwd, env, timeout: 100_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        done({ code, output: `${stdout}${stderr}` })
      }
    )
  })

const made: Array<string> = []
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** A new directory holding `files` (path relative to it → content); removed after the file's tests. */
export const tree = (files: Readonly<Record<string, string>>): string => {
  const dir = mkdtempSync(join(tmpdir(), "latchkey-tooling-"))
  made.push(dir)
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), content)
  }
  return dir
}
