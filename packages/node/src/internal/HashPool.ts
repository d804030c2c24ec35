/**
 * Password hashing on dedicated worker threads at the lowest CPU priority, so a
 * flood of sign-in attempts (each a memory-hard scrypt) cannot take CPU time from
 * the event loop that serves every other request, nor queue in the libuv thread
 * pool that file and DNS work share.
 */
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"

/** scrypt parameters, as `node:crypto` takes them. */
export interface ScryptOptions {
  readonly N: number
  readonly r: number
  readonly p: number
  readonly maxmem: number
}

// The worker's whole program. It lowers its own thread's priority: on Linux the nice
// value is per thread, so the event loop keeps its own.
const program = `
const { parentPort } = require("node:worker_threads")
const { scryptSync } = require("node:crypto")
try { require("node:os").setPriority(19) } catch {}
parentPort.on("message", ({ id, password, salt, length, options }) => {
  try {
    const key = scryptSync(password, salt, length, options)
    parentPort.postMessage({ id, key })
  } catch (e) {
    parentPort.postMessage({ id, error: e instanceof Error ? e.message : String(e) })
  }
})
`

interface Pending {
  readonly resolve: (key: Buffer) => void
  readonly reject: (e: Error) => void
}

interface Slot {
  readonly worker: Worker
  readonly pending: Map<number, Pending>
}

/** How many hashing threads: two, or one on a single-core machine. */
export const size = Math.max(1, Math.min(2, availableParallelism()))

let slots: Array<Slot> | undefined
let next = 0

const spawn = (): Slot => {
  const worker = new Worker(program, { eval: true })
  const slot: Slot = { worker, pending: new Map() }
  worker.on("message", (m: { id: number; key?: Uint8Array; error?: string }) => {
    const job = slot.pending.get(m.id)
    if (job === undefined) return
    slot.pending.delete(m.id)
    if (slot.pending.size === 0) worker.unref()
    if (m.key !== undefined) job.resolve(Buffer.from(m.key))
    else job.reject(new Error(m.error ?? "scrypt failed"))
  })
  // A thread that fails or exits fails its pending hashes; a new one takes its place.
  const replace = (e: Error) => {
    for (const job of slot.pending.values()) job.reject(e)
    slot.pending.clear()
    const i = slots?.indexOf(slot) ?? -1
    if (slots !== undefined && i !== -1) slots[i] = spawn()
  }
  worker.on("error", replace)
  worker.on("exit", (code) => replace(new Error(`hashing thread exited with code ${code}`)))
  // Idle hashing threads never keep the process alive (listeners first: adding one refs the port).
  worker.unref()
  return slot
}

/** Derive an scrypt key on a hashing thread (the least busy one). */
export const scrypt = (
  password: string,
  salt: Buffer,
  length: number,
  options: ScryptOptions
): Promise<Buffer> => {
  slots ??= Array.from({ length: size }, spawn)
  let slot = slots[0] as Slot
  for (const s of slots) if (s.pending.size < slot.pending.size) slot = s
  const id = next++
  return new Promise<Buffer>((resolve, reject) => {
    slot.pending.set(id, { resolve, reject })
    slot.worker.ref()
    slot.worker.postMessage({ id, password, salt, length, options })
  })
}
