/**
 * The request class of Huddle's Node server: a body the server stops reading before its end keeps
 * its connection for the answer, which then closes it; and an error it is destroyed with reaches
 * only a request someone listens to for errors, as Node's own does.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { NodeRequest } from "@huddle/server/edge/NodeRequest"
import { NodeResponse } from "@huddle/server/edge/NodeResponse"
import { afterEach, expect, it } from "vitest"

const servers: Array<http.Server> = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((done) => server.close(done))
  }
})

/** A server that gives up on a body at its first chunk (`destroy(error)`), then answers 413. */
const serve = async (error: Error | undefined) => {
  const server = http.createServer({ IncomingMessage: NodeRequest, ServerResponse: NodeResponse }, (request, response) => {
    request.once("data", () => {
      request.destroy(error)
      setTimeout(() => response.writeHead(413, { "content-type": "text/plain" }).end("too large"), 10)
    })
  })
  servers.push(server)
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  return (server.address() as AddressInfo).port
}

/** A chunked body whose first part is sent at once and the rest never. */
const send = (port: number) =>
  new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
    const request = http.request({ port, host: "127.0.0.1", method: "POST", path: "/" }, (res) => {
      let body = ""
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk)).on("end", () => resolve({ status: res.statusCode ?? 0, connection: res.headers["connection"], body }))
    })
    request.on("error", reject)
    request.write("first part of a body that never ends")
  })

it("answers a request whose body it stopped reading, and closes the connection after", async () => {
  expect(await send(await serve(undefined))).toEqual({ status: 413, connection: "close", body: "too large" })
})

it("destroyed with an error and no one listening for it, the process carries on", async () => {
  const uncaught: Array<unknown> = []
  const record = (error: unknown) => uncaught.push(error)
  process.on("uncaughtException", record)
  try {
    expect(await send(await serve(new Error("given up")))).toMatchObject({ status: 413 })
    await new Promise((done) => setTimeout(done, 20))
    expect(uncaught).toEqual([])
  } finally {
    process.off("uncaughtException", record)
  }
})
