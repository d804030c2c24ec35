import { join } from "node:path"
import { afterAll, beforeAll } from "@effect/vitest"
import { freePort, type ServerProcess, spawnServer, tempDir } from "./helpers.js"
import {
  seedThirdPartyClients,
  type ThirdPartyTarget,
  thirdPartyClientTests,
  thirdPartyUser
} from "./thirdPartyFlows.js"

const tmp = tempDir()
const db = join(tmp.dir, "e2e.sqlite")
let server: ServerProcess
let target: ThirdPartyTarget

beforeAll(async () => {
  const port = await freePort()
  const app = await seedThirdPartyClients(db)
  server = await spawnServer({
    LATCHKEY_DB: db,
    PORT: String(port),
    LATCHKEY_ISSUER: `http://127.0.0.1:${port}`
  })
  target = { base: server.base, app, user: thirdPartyUser }
}, 60_000)

afterAll(async () => {
  await server.stop()
  tmp.cleanup()
})

thirdPartyClientTests(() => target)
