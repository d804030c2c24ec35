// node bench/tail/where.mjs <packets.tsv> <request-times.json> <server port>
// Where the requests of a run waited, from the packets on the loopback interface
// (tshark -T fields -e frame.time_epoch -e tcp.srcport -e tcp.dstport -e tcp.len) and the
// server's own times (request-times.cjs): for each request, from its packet's arrival to Node's
// `request` (waiting in the socket while the event loop was busy), from `request` to the
// response's `finish` (inside the server), and from its arrival to its response's packet.
import { readFileSync } from "node:fs"

const [packetsFile, timesFile, portArg] = process.argv.slice(2)
if (packetsFile === undefined || timesFile === undefined || portArg === undefined) {
  process.stderr.write("usage: node where.mjs <packets.tsv> <request-times.json> <server port>\n")
  process.exit(2)
}
const port = Number(portArg)
const packets = readFileSync(packetsFile, "utf8")
  .trim()
  .split("\n")
  .map((line) => line.split("\t").map(Number))
  .map(([t, src, dst, len]) => ({ us: t * 1e6, src, dst, len }))
  .filter((p) => p.len > 0)

// Per client port: the first data packet of each request, and each response's first packet
const arrivals = new Map()
const responses = new Map()
const last = new Map()
for (const p of packets) {
  if (p.dst === port) {
    if (last.get(p.src) !== "request") arrivals.set(p.src, [...(arrivals.get(p.src) ?? []), p.us])
    last.set(p.src, "request")
  } else if (p.src === port) {
    responses.set(p.dst, [...(responses.get(p.dst) ?? []), p.us])
    last.set(p.dst, "response")
  }
}
const { times, cpuMs } = JSON.parse(readFileSync(timesFile, "utf8"))
const starts = new Map()
const finishes = new Map()
for (let i = 0; i < times.length; i += 2) {
  const into = times[i] >= 0 ? starts : finishes
  into.set(times[i + 1], [...(into.get(times[i + 1]) ?? []), Math.abs(times[i])])
}

const queued = []
const served = []
const total = []
for (const [client, arrived] of arrivals) {
  const started = starts.get(client) ?? []
  const finished = finishes.get(client) ?? []
  const answered = responses.get(client) ?? []
  let j = 0
  for (let i = 0; i < arrived.length; i++) {
    // The server's `request` of this arrival: the first at or after it (clocks agree within a ms)
    while (j < started.length && started[j] < arrived[i] - 1000) j++
    if (j >= started.length) break
    queued.push((started[j] - arrived[i]) / 1000)
    if (finished[j] !== undefined) served.push((finished[j] - started[j]) / 1000)
    if (answered[i] !== undefined) total.push((answered[i] - arrived[i]) / 1000)
    j++
  }
}
const at = (xs, q) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))]?.toFixed(1) ?? "–"
const line = (name, xs) =>
  `${name.padEnd(40)} n ${String(xs.length).padStart(7)}  p50 ${at(xs, 0.5)}  p90 ${at(xs, 0.9)}  p99 ${at(xs, 0.99)}  max ${at(xs, 1)} ms`
console.log(line("arrival → `request` (in the socket)", queued))
console.log(line("`request` → `finish` (in the server)", served))
console.log(line("arrival → response packet (the wire)", total))
const main = cpuMs.filter((t) => t.main).reduce((n, t) => n + t.ms, 0)
const others = cpuMs.filter((t) => !t.main && t.ms > 0).map((t) => t.ms)
console.log(`CPU: main thread ${main} ms; other threads ${others.join(", ")} ms`)
