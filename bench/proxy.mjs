/**
 * The bare pass-through proxy of the benchmark: the practical limit of a Node gateway. A
 * node:http server that forwards every request, unchanged, through an undici keep-alive Pool to
 * the upstream and pipes the answer back. No parsing, no authentication, no accounting, no
 * logging: whatever Huddle does on top of this is its own cost.
 *
 * Usage: node bench/proxy.mjs <upstream origin, e.g. http://127.0.0.1:1234>
 * Prints one JSON line `{"ready":true,"url":...}` on stdout, then serves until SIGTERM.
 */
import { createServer } from "node:http"
import { Pool } from "undici"

const origin = process.argv[2]
if (!origin) {
  console.error("usage: node bench/proxy.mjs <upstream origin>")
  process.exit(2)
}

const pool = new Pool(origin, { connections: 128, pipelining: 1, keepAliveTimeout: 30_000 })

// Hop-by-hop headers (RFC 9110 §7.6.1) are not forwarded; the rest goes through as it is.
const hopByHop = new Set(["connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection", "host"])

const forwardHeaders = (headers) => {
  const out = {}
  for (const name in headers) if (!hopByHop.has(name)) out[name] = headers[name]
  return out
}

const server = createServer((req, res) => {
  const parts = []
  req.on("data", (part) => parts.push(part))
  req.on("end", () => {
    const body = parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : Buffer.concat(parts)
    pool.request({ method: req.method, path: req.url, headers: forwardHeaders(req.headers), body }).then(
      ({ body: upstream, headers, statusCode }) => {
        res.writeHead(statusCode, forwardHeaders(headers))
        upstream.on("data", (chunk) => res.write(chunk))
        upstream.on("end", () => res.end())
        upstream.on("error", () => res.destroy())
        res.on("close", () => {
          if (!upstream.destroyed && !res.writableFinished) upstream.destroy()
        })
      },
      () => {
        if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" })
        res.end(`{"error":{"message":"upstream unavailable","type":"server_error"}}`)
      }
    )
  })
})
server.keepAliveTimeout = 30_000

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address()
  process.stdout.write(`${JSON.stringify({ ready: true, url: `http://127.0.0.1:${port}`, pid: process.pid })}\n`)
})

const stop = () => {
  server.close()
  server.closeAllConnections()
  pool.close().finally(() => process.exit(0))
  setTimeout(() => process.exit(0), 2000).unref()
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
