/**
 * A JSON endpoint whose Effect cannot run (here: the runtime's layer fails to build) is answered
 * 500 `server_error`, and the failure goes to `onError` once, never to the client.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import type { Http } from "@latchkey/core"
import { Layer, ManagedRuntime } from "effect"
import { assert, it } from "vitest"
import { NodeHttp } from "../src/index.js"

it("answers 500 server_error when the core's Effect fails to run, and reports it to onError once", async () => {
  const runtime = ManagedRuntime.make(
    Layer.die(new Error("no store")) as unknown as Layer.Layer<Http.Requirements>
  )
  const errors: Array<unknown> = []
  const json = NodeHttp.handler(runtime, { onError: (e) => errors.push(e) })
  const server = createServer((req, res) => {
    if (!json(req, res)) res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  try {
    const { port } = server.address() as AddressInfo
    const res = await fetch(`http://127.0.0.1:${port}/oauth2/oauth2/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials"
    })
    assert.strictEqual(res.status, 500)
    assert.strictEqual(((await res.json()) as { error: string }).error, "server_error")
    assert.strictEqual(errors.length, 1)
    assert.include(String(errors[0]), "no store")
  } finally {
    await new Promise((resolve) => server.close(resolve))
    await runtime.dispose()
  }
})
