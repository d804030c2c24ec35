// The load generator when wrk is not installed: autocannon in its own process, with the
// same scenarios, checks and JSON summary as lua/*.lua (numbers are not comparable with
// wrk's). Configured by the same BENCH_* variables, plus BENCH_URL, BENCH_KIND,
// BENCH_CONNS, BENCH_DURATION (seconds) and BENCH_TIMEOUT (seconds).
import { closeSync, openSync, readSync } from "node:fs"
import autocannon from "autocannon"

const env = (name, fallback) => {
  const v = process.env[name]
  return v === undefined || v === "" ? fallback : v
}
const kind = env("BENCH_KIND", "client_credentials")
const url = new URL(env("BENCH_URL", "http://127.0.0.1:8080/oauth2/oauth2/token"))
const enc = encodeURIComponent

// Single-use values: fixed-length lines of BENCH_FILE from BENCH_OFFSET on, read in chunks
const reclen = Number(env("BENCH_RECLEN", "44"))
const file = env("BENCH_FILE", undefined)
let fd = file === undefined ? undefined : openSync(file, "r")
let position = Number(env("BENCH_OFFSET", "0")) * reclen
let buffered = []
let handed = 0
const nextRecord = () => {
  if (buffered.length === 0 && fd !== undefined) {
    const chunk = Buffer.alloc(reclen * 4096)
    const n = readSync(fd, chunk, 0, chunk.length, position)
    position += n
    buffered = chunk
      .toString("latin1", 0, n)
      .split("\n")
      .filter((l) => l.length > 0)
      .reverse()
    if (n === 0) {
      closeSync(fd)
      fd = undefined
    }
  }
  const v = buffered.pop()
  if (v !== undefined) handed++
  return v
}

const isToken = (status, body) => {
  if (status !== 200) return false
  try {
    const j = JSON.parse(body)
    return (
      typeof j.access_token === "string" &&
      j.access_token.length > 0 &&
      j.token_type === "Bearer" &&
      typeof j.expires_in === "number" &&
      j.expires_in > 0
    )
  } catch {
    return false
  }
}
const isActive = (status, body) => {
  if (status !== 200) return false
  try {
    return JSON.parse(body).active === true
  } catch {
    return false
  }
}

const redirect = enc(env("BENCH_REDIRECT_URI", ""))
const password = env("BENCH_PASSWORD", "")
const user = `grant_type=password&username=${enc(env("BENCH_USERNAME", ""))}&password=`
let turn = 0
const scenarios = {
  client_credentials: {
    body: () => `grant_type=client_credentials&scope=${enc(env("BENCH_SCOPE", "api:read"))}`,
    check: (s, b) => (isToken(s, b) ? "valid" : undefined)
  },
  authorization_code: {
    body: () => {
      const code = nextRecord()
      return code === undefined
        ? undefined
        : `grant_type=authorization_code&code=${code}&redirect_uri=${redirect}`
    },
    exhaustedBody: `grant_type=authorization_code&code=exhausted&redirect_uri=${redirect}`,
    check: (s, b) => (isToken(s, b) ? "valid" : undefined)
  },
  refresh_token: {
    body: () => {
      const token = nextRecord()
      return token === undefined ? undefined : `grant_type=refresh_token&refresh_token=${token}`
    },
    exhaustedBody: "grant_type=refresh_token&refresh_token=exhausted",
    check: (s, b) => (isToken(s, b) ? "valid" : undefined)
  },
  introspection: {
    body: () => `token=${enc(env("BENCH_TOKEN", ""))}`,
    check: (s, b) => (isActive(s, b) ? "valid" : undefined)
  },
  password: {
    body: () => `${user}${enc(turn++ % 2 === 0 ? password : `wrong-${password}`)}`,
    check: (s, b) => {
      if (isToken(s, b)) return "valid"
      if (s === 400 && b.includes('"error":"invalid_grant"')) return "expected"
      if (s === 429) return "expected"
      return undefined
    }
  }
}
const scenario = scenarios[kind]
if (scenario === undefined) throw new Error(`unknown BENCH_KIND ${kind}`)

const counts = { valid: 0, expected: 0, invalid: 0, exhausted: 0 }
const statuses = {}
const samples = []
let instance
const headers = {
  authorization: env("BENCH_AUTH", ""),
  "content-type": "application/x-www-form-urlencoded"
}
instance = autocannon(
  {
    url: url.origin,
    connections: Number(env("BENCH_CONNS", "10")),
    duration: Number(env("BENCH_DURATION", "10")),
    timeout: Number(env("BENCH_TIMEOUT", "5")),
    pipelining: 1,
    requests: [
      {
        method: "POST",
        path: url.pathname,
        headers,
        setupRequest: (req) => {
          let body = scenario.body()
          if (body === undefined) {
            // Out of single-use values: the run is invalid; stop
            counts.exhausted++
            body = scenario.exhaustedBody
            setImmediate(() => instance?.stop())
          }
          return { ...req, body }
        },
        onResponse: (status, body) => {
          statuses[status] = (statuses[status] ?? 0) + 1
          const verdict = scenario.check(status, body ?? "")
          if (verdict === undefined) {
            counts.invalid++
            if (samples.length < 5) samples.push(`${status} ${String(body ?? "").slice(0, 200)}`)
          } else counts[verdict]++
        }
      }
    ]
  },
  (err, result) => {
    if (err) {
      process.stderr.write(`autocannon failed: ${err.message}\n`)
      process.exit(1)
    }
    const non2xx = Object.entries(statuses)
      .filter(([s]) => !s.startsWith("2"))
      .reduce((n, [, c]) => n + c, 0)
    const summary = {
      tool: "autocannon",
      requests: result.requests.total,
      durationUs: Math.round(result.duration * 1e6),
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      maxMs: result.latency.max,
      meanMs: result.latency.average,
      ...counts,
      non2xx,
      handed,
      handedMax: handed,
      threads: 1,
      errors: {
        connect: 0,
        read: result.errors - result.timeouts,
        write: 0,
        timeout: result.timeouts,
        status: 0
      },
      statuses,
      samples
    }
    process.stdout.write(`BENCH_JSON ${JSON.stringify(summary)}\n`)
  }
)
