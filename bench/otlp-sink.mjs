/**
 * An OTLP/HTTP trace sink for the benchmark, in a process of its own: it takes what Huddle
 * exports (`POST /v1/traces`, JSON), counts the spans and traces by name, and answers 200, as a
 * collector would, so that the benchmark measures Huddle with its trace export on.
 * `GET /count` answers `{ exports, spans, bytes, names: { [name]: n } }` (bytes: the bodies received).
 *
 * Prints one JSON line `{"ready":true,"url":...}` on stdout, then serves until SIGTERM.
 */
import { createServer } from "node:http"

const counts = { exports: 0, spans: 0, bytes: 0, names: {} }
const server = createServer((request, response) => {
  if (request.method === "GET" && request.url === "/count") {
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(counts))
    return
  }
  const chunks = []
  request.on("data", (chunk) => chunks.push(chunk))
  request.on("end", () => {
    if (request.method !== "POST" || request.url !== "/v1/traces") return response.writeHead(404).end()
    counts.exports++
    counts.bytes += chunks.reduce((n, chunk) => n + chunk.length, 0)
    for (const resource of JSON.parse(Buffer.concat(chunks).toString("utf8")).resourceSpans ?? []) {
      for (const scope of resource.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          counts.spans++
          counts.names[span.name] = (counts.names[span.name] ?? 0) + 1
        }
      }
    }
    response.writeHead(200, { "content-type": "application/json" }).end("{}")
  })
})
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ ready: true, url: `http://127.0.0.1:${server.address().port}`, pid: process.pid })}\n`)
})
const stop = () => server.close(() => process.exit(0))
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
