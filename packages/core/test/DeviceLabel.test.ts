/** The coarse label of a trusted device from its `User-Agent`: the tables' names only, never the header. */
import { assert, describe, it } from "@effect/vitest"
import { FastCheck } from "effect"
import * as DeviceLabel from "../src/security/DeviceLabel.js"

const examples: ReadonlyArray<readonly [string, string | null, string | null]> = [
  ["Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", "Firefox", "Linux"],
  [
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
    "Safari",
    "iOS"
  ],
  [
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36",
    "Chrome",
    "Android"
  ],
  [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0",
    "Edge",
    "Windows"
  ],
  [
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
    "Safari",
    "macOS"
  ],
  [
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0 Mobile/15E148 Safari/604.1",
    "Chrome",
    "iOS"
  ],
  [
    "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
    "Chrome",
    "ChromeOS"
  ],
  ["curl/8.5.0", null, null],
  ["", null, null]
]

describe("DeviceLabel.labelOf", () => {
  for (const [header, browser, system] of examples) {
    it(`${browser ?? "no browser"} on ${system ?? "no system"}: ${header.slice(0, 40)}`, () => {
      assert.deepStrictEqual(DeviceLabel.labelOf(header), { browser, system })
    })
  }

  it("no header is no label", () => {
    assert.deepStrictEqual(DeviceLabel.labelOf(undefined), { browser: null, system: null })
  })

  it("whatever the header, the label holds only the tables' names (never the header's own text)", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.oneof(FastCheck.string(), FastCheck.constantFrom(...examples.map(([h]) => h))),
        (header) => {
          const { browser, system } = DeviceLabel.labelOf(`${header}<script>`)
          return [browser, system].every((n) => n === null || DeviceLabel.names.includes(n))
        }
      )
    )
  })
})
