/**
 * The core's own cost of a request (servers/core-cost.mjs): the core's endpoints on its in-memory
 * stores in one process, no HTTP and no database, pinned to the server CPU like the servers.
 * Against durable-floor's CPU per request (its whole request), it bounds what any Latchkey
 * server built on this core can reach.
 */
import { join } from "node:path"
import type { Knobs } from "./knobs.js"
import { benchRoot } from "./paths.js"
import { collect, spawnGroup } from "./proc.js"

/** CPU and wall time per request of one endpoint. */
interface Cost {
  readonly requests: number
  readonly cpuUsPerRequest: number
  readonly wallUsPerRequest: number
}

/** What servers/core-cost.mjs measured, or why it could not. */
export type CoreCost =
  | { readonly conns: number; readonly clientCredentials: Cost; readonly introspection: Cost }
  | { readonly error: string }

/** Run servers/core-cost.mjs once (`rounds` rounds of each endpoint, default 400), pinned to the server CPU when `pinned`. */
export const measure = async (knobs: Knobs, pinned: boolean, rounds = 400): Promise<CoreCost> => {
  const child = spawnGroup({
    command: ["node", join(benchRoot, "servers", "core-cost.mjs")],
    cwd: benchRoot,
    env: { ...process.env, CONNS: String(knobs.conns), CORE_ROUNDS: String(rounds) },
    cpu: pinned ? knobs.serverCpu : null,
    stdout: "pipe",
    stderr: "pipe"
  })
  const out = await collect(child, 300_000)
  const line = out.stdout.trim().split("\n").pop() ?? ""
  if (out.code !== 0 || out.timedOut)
    return { error: `core-cost exited ${out.code}: ${out.stderr.slice(0, 300)}` }
  try {
    return JSON.parse(line) as CoreCost
  } catch {
    return { error: `core-cost printed no result: ${line.slice(0, 200)}` }
  }
}
