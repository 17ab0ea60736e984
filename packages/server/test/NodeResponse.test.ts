/**
 * The response class of Huddle's Node server: `end(…, callback)` answers the callback whether
 * the answer was flushed or the connection had closed first (the platform waits for it).
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { NodeResponse } from "@huddle/server/edge/NodeResponse"
import { afterEach, describe, expect, it } from "vitest"

const servers: Array<http.Server> = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((done) => server.close(done))
  }
})

/** A server whose handler answers with `end(body, callback)` after `answerAfterMs`. */
const serve = async (answerAfterMs: number) => {
  const calls: Array<string> = []
  const answered = new Promise<void>((done) => {
    const server = http.createServer({ ServerResponse: NodeResponse }, (_request, response) => {
      setTimeout(() => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.end("whole answer", () => {
          calls.push("callback")
          done()
        })
      }, answerAfterMs)
    })
    servers.push(server)
    server.listen(0, "127.0.0.1")
  })
  await new Promise((done) => servers.at(-1)!.once("listening", done))
  const port = (servers.at(-1)!.address() as AddressInfo).port
  return { port, calls, answered }
}

const within = <A>(promise: Promise<A>, ms: number) =>
  Promise.race([promise, new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`not within ${ms} ms`)), ms))])

describe("NodeResponse", () => {
  it("answers end's callback once, after the answer, on a connection that stays", async () => {
    const { answered, calls, port } = await serve(10)
    const res = await fetch(`http://127.0.0.1:${port}/`)
    expect(await res.text()).toBe("whole answer")
    await within(answered, 2_000)
    await new Promise((done) => setTimeout(done, 50))
    expect(calls).toEqual(["callback"])
  })

  it("answers end's callback when the client hung up before the answer (Node alone never does)", async () => {
    const { answered, calls, port } = await serve(200)
    const client = new AbortController()
    const asked = fetch(`http://127.0.0.1:${port}/`, { signal: client.signal }).catch((error: Error) => error.name)
    setTimeout(() => client.abort(), 30)
    expect(await asked).toBe("AbortError")
    await within(answered, 2_000)
    await new Promise((done) => setTimeout(done, 50))
    expect(calls).toEqual(["callback"])
  })
})
