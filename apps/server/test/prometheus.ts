/** Reading the Prometheus text format in tests, and scraping the admin listener. */
import type { ServerProcess } from "./helpers.js"

/** A 32-character admin token for the tests. */
export const adminToken = "test-admin-token-0123456789abcdefghij"

/** One sample: name, labels, value. */
export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/** The samples of a text exposition (comments skipped). */
export const parse = (text: string): Array<Sample> =>
  text.split("\n").flatMap((line) => {
    if (line === "" || line.startsWith("#")) return []
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (m === null) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1] as string] = (l[2] as string).replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c))
    }
    return [{ name: m[1] as string, labels, value: Number(m[3]) }]
  })

/** The sum of the samples named `name` whose labels include `labels` (0 when none). */
export const value = (
  samples: ReadonlyArray<Sample>,
  name: string,
  labels: Readonly<Record<string, string>> = {}
): number =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0)

/** The admin port of a spawned server (its `admin listening` log line). */
export const adminPort = async (server: ServerProcess): Promise<number> =>
  (await server.waitForLine((l) => typeof l.adminPort === "number")).adminPort as number

/** GET /metrics on the admin listener at `port` with the test token; fails unless 200. */
export const scrape = async (port: number, token = adminToken): Promise<Array<Sample>> => {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, {
    headers: { authorization: `Bearer ${token}` }
  })
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${await res.text()}`)
  return parse(await res.text())
}
