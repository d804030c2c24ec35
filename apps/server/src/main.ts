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
  let signals = 0
  const onSignal = (signal: NodeJS.Signals) => {
    signals++
    if (signals > 1) {
      log.warn({ signal }, "second signal: exiting at once")
      process.exit(1)
    }
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
