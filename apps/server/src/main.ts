/**
 * Entry point of `pnpm start`. A stop requested (SIGTERM, SIGINT) while the server's modules load
 * exits 0 at once, since nothing is open yet; from then on `Run.run` handles the signals. The
 * first listener stays: removing it would stop node's watch of the signal and drop one that
 * arrived meanwhile but is not yet dispatched.
 */
let loading = true
const early = (): void => {
  if (loading) process.exit(0)
}
process.on("SIGTERM", early)
process.on("SIGINT", early)
const { run } = await import("./Run.js")
loading = false
run()
