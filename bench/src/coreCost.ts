/**
 * The core's own cost of a request (servers/core-cost.mjs): the core's endpoints on its in-memory
 * stores in one process, no HTTP and no database, pinned to the server CPU like the servers.
 * Against durable-floor's CPU per request (its whole request), it bounds what any Latchkey
 * server built on this core can reach. Besides the CPU: the Effect operations a request runs,
 * and the bytes it allocates.
 */
import { join } from "node:path"
import type { Knobs } from "./knobs.js"
import { benchRoot } from "./paths.js"
import { collect, spawnGroup } from "./proc.js"

/**
 * The heap's used size at the start and end of a pass of `requests` requests, and before and
 * after each garbage collection in between (`[before, after]`, from v8.GCProfiler).
 */
export interface Allocation {
  readonly requests: number
  readonly heapUsedStart: number
  readonly heapUsedEnd: number
  readonly gcs: ReadonlyArray<readonly [before: number, after: number]>
}

/**
 * Bytes allocated per request: what the heap grew by, plus what each collection freed (its used
 * size before less after), over the requests.
 */
export const allocatedPerRequest = (a: Allocation): number =>
  (a.heapUsedEnd - a.heapUsedStart + a.gcs.reduce((freed, [before, after]) => freed + before - after, 0)) /
  a.requests

/** What servers/core-cost.mjs prints for an endpoint it measures in full. */
interface Printed {
  readonly requests: number
  readonly cpuUsPerRequest: number
  readonly wallUsPerRequest: number
  readonly opsPerRequest: number
  readonly allocation: Allocation
}

/** CPU and wall time, Effect operations and bytes allocated per request of one endpoint. */
export interface Cost {
  readonly requests: number
  readonly cpuUsPerRequest: number
  readonly wallUsPerRequest: number
  /** The operations the fibers' run loop evaluates for a request (servers/core-cost.mjs's supervisor). */
  readonly opsPerRequest: number
  readonly bytesPerRequest: number
}

/** The Effect operations per request of the endpoints measured for their operations only. */
interface OpsOnly {
  readonly authorizationCode: number
  readonly refreshToken: number
  readonly revocation: number
  readonly userinfo: number
}

/** What servers/core-cost.mjs measured, or why it could not. */
export type CoreCost =
  | {
      readonly conns: number
      readonly clientCredentials: Cost
      readonly introspection: Cost
      readonly opsPerRequest: OpsOnly
    }
  | { readonly error: string }

const cost = ({ allocation, ...rest }: Printed): Cost => ({
  ...rest,
  bytesPerRequest: allocatedPerRequest(allocation)
})

/** servers/core-cost.mjs's line, with the bytes per request worked out. */
export const fromPrinted = (line: string): CoreCost => {
  const printed = JSON.parse(line) as {
    conns: number
    clientCredentials: Printed
    introspection: Printed
    opsPerRequest: OpsOnly
  }
  return {
    conns: printed.conns,
    clientCredentials: cost(printed.clientCredentials),
    introspection: cost(printed.introspection),
    opsPerRequest: printed.opsPerRequest
  }
}

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
    return fromPrinted(line)
  } catch {
    return { error: `core-cost printed no result: ${line.slice(0, 200)}` }
  }
}
