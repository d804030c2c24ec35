/**
 * A Prometheus histogram whose observation is a few additions: each labelled series is looked up
 * once and then counts into plain numbers, and the exposition is made only at a scrape. It is
 * registered in prom-client registries as one of their metrics and reads out exactly as
 * prom-client's own `Histogram` with the same name, help, labels and buckets does (the same text,
 * the same JSON for a cluster's aggregation, summed across processes), without prom-client's
 * label validation and hashing on every observation, which ran on every request and store call.
 * Labels come from fixed sets (see `Metrics`), so they need no validation.
 */
import type { Metric, MetricValueWithName, Registry } from "prom-client"

/** One labelled series: its labels, the observations in each bucket (not cumulated), their sum and count. */
interface Series {
  readonly labels: Readonly<Record<string, string>>
  readonly buckets: Array<number>
  sum: number
  count: number
}

/** Observe one value (seconds) into a series. */
export type Observe = (value: number) => void

/** A histogram's labelled series, and its registration in prom-client's registries. */
export interface Histogram<L extends string> {
  /** The observer of the series of `labels` (the series exists from its first value); keep it and call it for each value. */
  readonly series: (labels: Readonly<Record<L, string>>) => Observe
}

/** The series' bucket, sum and count samples in prom-client's order (`le` first, the series' labels after). */
const samples = (
  name: string,
  bounds: ReadonlyArray<number>,
  s: Series
): Array<MetricValueWithName<string>> => {
  let cumulated = 0
  const out: Array<MetricValueWithName<string>> = bounds.map((le, i) => {
    cumulated += s.buckets[i] as number
    return { labels: { le, ...s.labels }, value: cumulated, metricName: `${name}_bucket` }
  })
  out.push(
    { labels: { le: "+Inf", ...s.labels }, value: s.count, metricName: `${name}_bucket` },
    { labels: { ...s.labels }, value: s.sum, metricName: `${name}_sum` },
    { labels: { ...s.labels }, value: s.count, metricName: `${name}_count` }
  )
  return out
}

/** Make the histogram `name` and register it in `registers`; `bounds` are the buckets' upper bounds, ascending. */
export const make = <L extends string>(
  registers: ReadonlyArray<Registry>,
  name: string,
  help: string,
  labelNames: ReadonlyArray<L>,
  bounds: ReadonlyArray<number>
): Histogram<L> => {
  const all = new Map<string, Series>()
  // A reset drops every series, as prom-client's does; an observer kept from before starts its
  // series again, from zero, at its next value
  let generation = 0
  const metric = {
    name,
    help,
    type: "histogram",
    aggregator: "sum",
    // What prom-client's `Histogram.get` answers (its type declarations say `type` is an enum; it is this text)
    get: async () => ({
      name,
      help,
      type: "histogram",
      aggregator: "sum",
      values: [...all.values()].flatMap((s) => samples(name, bounds, s))
    }),
    reset: () => {
      all.clear()
      generation++
    }
  }
  for (const registry of registers) registry.registerMetric(metric as unknown as Metric<string>)
  return {
    series: (labels) => {
      // In the order of the label names, as prom-client lays a series' labels out
      const key = labelNames.map((l) => labels[l]).join("\u0000")
      const current = (): Series => {
        let found = all.get(key)
        if (found === undefined) {
          const ordered: Record<string, string> = {}
          for (const l of labelNames) ordered[l] = labels[l]
          found = { labels: ordered, buckets: bounds.map(() => 0), sum: 0, count: 0 }
          all.set(key, found)
        }
        return found
      }
      // Made at the first value, as prom-client's: a series never observed is not exposed
      let series: Series | undefined
      let made = generation
      return (value) => {
        if (series === undefined || made !== generation) {
          made = generation
          series = current()
        }
        for (let i = 0; i < bounds.length; i++) {
          if (value <= (bounds[i] as number)) {
            series.buckets[i] = (series.buckets[i] as number) + 1
            break
          }
        }
        series.sum += value
        series.count += 1
      }
    }
  }
}
