/**
 * The server's histogram reads out exactly as prom-client's `Histogram` given the same
 * observations: the same text, the same JSON summed across processes, the same after a reset;
 * a series appears with its first value, never before.
 */
import { assert, describe, it } from "@effect/vitest"
import { AggregatorRegistry, Histogram as PromHistogram, Registry } from "prom-client"
import * as Histogram from "../src/Histogram.js"

const name = "test_duration_seconds"
const help = "Durations, by endpoint and method"
const labelNames = ["endpoint", "method"] as const
const buckets = [0.005, 0.01, 0.1, 1]

const both = () => {
  const ours = new Registry()
  const theirs = new Registry()
  const h = Histogram.make([ours], name, help, labelNames, buckets)
  const p = new PromHistogram({ name, help, labelNames, buckets, registers: [theirs] })
  const observe = (labels: { endpoint: string; method: string }, value: number) => {
    h.series(labels)(value)
    p.observe(labels, value)
  }
  return { ours, theirs, h, p, observe }
}

// Values on a bound, between bounds, above every bound, and zero
const values = [0, 0.005, 0.0051, 0.05, 1, 1.5, 30]

describe("Histogram", () => {
  it("reads out as prom-client's Histogram, in the text format and summed across processes", async () => {
    const a = both()
    const b = both()
    for (const [i, v] of values.entries()) {
      a.observe({ endpoint: "token", method: i % 2 === 0 ? "POST" : "GET" }, v)
      b.observe({ endpoint: i % 3 === 0 ? "introspect" : "token", method: "POST" }, v * 2)
    }
    assert.strictEqual(await a.ours.metrics(), await a.theirs.metrics())
    assert.strictEqual(await b.ours.metrics(), await b.theirs.metrics())
    const summed = async (x: Registry, y: Registry) =>
      AggregatorRegistry.aggregate([await x.getMetricsAsJSON(), await y.getMetricsAsJSON()]).metrics()
    assert.strictEqual(await summed(a.ours, b.ours), await summed(a.theirs, b.theirs))
  })

  it("exposes a series from its first value, and none after a reset until its next", async () => {
    const { ours, theirs, h, observe } = both()
    const kept = h.series({ endpoint: "token", method: "POST" })
    assert.strictEqual(await ours.metrics(), await theirs.metrics())
    assert.notInclude(await ours.metrics(), "token")
    observe({ endpoint: "token", method: "POST" }, 0.02)
    assert.include(await ours.metrics(), 'endpoint="token"')
    ours.resetMetrics()
    theirs.resetMetrics()
    assert.notInclude(await ours.metrics(), "token")
    assert.strictEqual(await ours.metrics(), await theirs.metrics())
    // An observer kept from before the reset starts its series again from zero
    kept(0.2)
    const p = theirs.getSingleMetric(name) as PromHistogram
    p.observe({ endpoint: "token", method: "POST" }, 0.2)
    assert.strictEqual(await ours.metrics(), await theirs.metrics())
  })
})
