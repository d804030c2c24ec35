/**
 * A coarse label of a trusted device from its browser's `User-Agent` ("Firefox" on "Linux"): the
 * browser's and the operating system's names from two small tables, never the header itself,
 * which is neither stored nor shown.
 */

/** A trusted device's label: the browser's and the system's names, null where not recognised. */
export interface Label {
  readonly browser: string | null
  readonly system: string | null
}

// First match wins: Edge, Opera and Samsung Internet say "Chrome" too, and Chrome says "Safari"
const browsers: ReadonlyArray<readonly [name: string, pattern: RegExp]> = [
  ["Edge", /\bEdg(?:e|A|iOS)?\//],
  ["Opera", /\bOPR\/|\bOpera\b/],
  ["Samsung Internet", /\bSamsungBrowser\//],
  ["Firefox", /\bFirefox\/|\bFxiOS\//],
  ["Chrome", /\bChrome\/|\bCriOS\/|\bChromium\//],
  ["Safari", /\bSafari\//]
]

// First match wins: iOS says "like Mac OS X", Android and ChromeOS say "Linux"
const systems: ReadonlyArray<readonly [name: string, pattern: RegExp]> = [
  ["iOS", /\biPhone\b|\biPad\b|\biPod\b/],
  ["Android", /\bAndroid\b/],
  ["Windows", /\bWindows\b/],
  ["ChromeOS", /\bCrOS\b/],
  ["macOS", /\bMacintosh\b|\bMac OS X\b/],
  ["Linux", /\bLinux\b/]
]

/** The names a label can hold: the tables' only. */
export const names: ReadonlyArray<string> = [...browsers, ...systems].map(([name]) => name)

// Only the header's start is read: every pattern sits well within it
const maxRead = 512

const first = (table: ReadonlyArray<readonly [string, RegExp]>, header: string): string | null =>
  table.find(([, pattern]) => pattern.test(header))?.[0] ?? null

/** The label of a browser sending this `User-Agent` (none: nothing recognised). */
export const labelOf = (userAgent: string | null | undefined): Label => {
  const header = (userAgent ?? "").slice(0, maxRead)
  return { browser: first(browsers, header), system: first(systems, header) }
}
