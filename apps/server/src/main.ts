/**
 * Entry point of `pnpm start`: read the environment, start, and stop on
 * SIGTERM/SIGINT.
 */
import * as Env from "./Env.js"
import * as Log from "./Log.js"
import * as Server from "./Server.js"

const main = async (): Promise<void> => {
  let env: Env.ServerEnv
  try {
    env = Env.read()
  } catch (e) {
    if (e instanceof Env.EnvError) {
      process.stderr.write(`latchkey: ${e.message}\n`)
      process.exit(1)
    }
    throw e
  }
  const log = Log.make(env.logLevel)
  let running: Server.Running
  try {
    running = await Server.start(env, log)
  } catch (e) {
    log.fatal({ reason: e instanceof Error ? e.message : String(e) }, "could not start")
    process.exit(1)
  }
  let first: { readonly signal: NodeJS.Signals; readonly at: number } | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    const at = Date.now()
    if (first !== undefined) {
      // Ctrl-C under `pnpm start` (or npm, or any runner that relays signals) arrives twice: from
      // the terminal, which signals the whole foreground process group, and relayed by the runner
      // a moment later. The same signal again within a second is that one request.
      if (signal === first.signal && at - first.at < 1000) return
      log.warn({ signal }, "second signal: exiting at once")
      process.exit(1)
    }
    first = { signal, at }
    log.info({ signal }, "signal received")
    running.stop().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error({ reason: e instanceof Error ? e.message : String(e) }, "shutdown failed")
        process.exit(1)
      }
    )
  }
  process.on("SIGTERM", onSignal)
  process.on("SIGINT", onSignal)
}

void main()
