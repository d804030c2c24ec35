// Preload (`node --require bench/tail/request-times.cjs …`): when each request reached the
// server (Node emitted `request`) and when its response finished, in wall-clock µs, with the
// client's port; and, at exit, the CPU each thread of the process used. Written as JSON to
// $REQUEST_TIMES (default ./request-times.json) when the process exits. See bench/README.md,
// "Where requests wait".
const http = require("node:http")
const fs = require("node:fs")

const origin = performance.timeOrigin * 1000
const now = () => origin + performance.now() * 1000
// [µs, port] pairs: a positive time for a request, its negative for the finish of its response
const times = []
const emit = http.Server.prototype.emit
http.Server.prototype.emit = function (event, ...args) {
  if (event === "request") {
    const [req, res] = args
    const port = req.socket.remotePort
    times.push(now(), port)
    res.once("finish", () => times.push(-now(), port))
  }
  return emit.call(this, event, ...args)
}

/** CPU ticks (user + system, 100 a second) of each thread, from /proc. */
const threads = () =>
  fs.readdirSync(`/proc/${process.pid}/task`).map((tid) => {
    const stat = fs.readFileSync(`/proc/${process.pid}/task/${tid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return { tid, ticks: Number(fields[11]) + Number(fields[12]) }
  })
const start = threads()
process.on("exit", () => {
  const cpuMs = threads().map((t) => ({
    tid: t.tid,
    main: t.tid === String(process.pid),
    ms: (t.ticks - (start.find((s) => s.tid === t.tid)?.ticks ?? 0)) * 10
  }))
  fs.writeFileSync(process.env.REQUEST_TIMES ?? "request-times.json", JSON.stringify({ times, cpuMs }))
})
