/**
 * A counting TCP relay in front of PostgreSQL, for the profile (bench/profile.mjs), never for the
 * timed benchmark: it forwards bytes unchanged and reads the protocol on the way. From the
 * client's side it counts round trips (a simple `Query`, or an extended-protocol batch ending
 * in `Sync`) and the SQL text of each `Query`/`Parse`; from the server's side it times each
 * round trip up to its `ReadyForQuery`, and the writes (statements that change rows) and the
 * commits (a `COMMIT`, or a write outside a transaction: each a WAL flush). A control server answers `GET /stats` (and resets with
 * `POST /reset`).
 *
 * Usage: node bench/pgcount.mjs <postgres host:port>
 * Prints one JSON line `{"ready":true,"port":...,"control":...}`.
 */
import { createServer as createHttpServer } from "node:http"
import { connect, createServer } from "node:net"

const [host, portText] = (process.argv[2] ?? "127.0.0.1:5432").split(":")
if (!["127.0.0.1", "localhost", "::1"].includes(host)) {
  console.error("pgcount: loopback only")
  process.exit(2)
}

let stats
const reset = () => {
  stats = { roundTrips: 0, dbMs: 0, statements: {}, statementMs: {}, transactions: 0, writes: 0, commits: 0 }
}
reset()

const normalise = (sql) => sql.replace(/\s+/g, " ").trim().slice(0, 160)

/** A statement that changes rows (a CTE's included), judged on its whole text. */
const isWrite = (sql) => /\b(INSERT\s+INTO|UPDATE\s+\S+(\s+(AS\s+)?\S+)?\s+SET|DELETE\s+FROM)\b/i.test(sql)

const sslRequestCode = 80877103

/**
 * Splits a byte stream into protocol messages. The client's stream starts with untyped
 * messages (an optional SSLRequest, then the startup message); after an SSLRequest the server
 * answers one untyped byte (`skipOne`). The relay does not support SSL itself (loopback only).
 */
const reader = (onMessage, { client, onSslRequest }) => {
  let buffer = Buffer.alloc(0)
  let startup = client
  let skip = 0
  const state = (chunk) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk])
    for (;;) {
      if (skip > 0) {
        if (buffer.length === 0) return
        buffer = buffer.subarray(1)
        skip--
        continue
      }
      if (startup) {
        if (buffer.length < 8) return
        const length = buffer.readInt32BE(0)
        if (buffer.length < length) return
        const code = buffer.readInt32BE(4)
        buffer = buffer.subarray(length)
        if (code === sslRequestCode) onSslRequest?.()
        else startup = false
        continue
      }
      if (buffer.length < 5) return
      const length = buffer.readInt32BE(1)
      if (buffer.length < 1 + length) return
      onMessage(String.fromCharCode(buffer[0]), buffer.subarray(5, 1 + length))
      buffer = buffer.subarray(1 + length)
    }
  }
  state.skipOne = () => {
    skip++
  }
  return state
}

const relay = createServer((client) => {
  const server = connect(Number(portText), host)
  const pending = []
  let statement = "(no statement)"
  // Commits are what cost a WAL flush each: a COMMIT, or a write outside a transaction.
  let inTransaction = false
  const fromClient = reader((type, body) => {
    if (type === "Q" || type === "P") {
      const text = type === "Q" ? body.subarray(0, body.indexOf(0)).toString() : body.subarray(body.indexOf(0) + 1, body.indexOf(0, body.indexOf(0) + 1)).toString()
      statement = normalise(text)
      stats.statements[statement] = (stats.statements[statement] ?? 0) + 1
      if (/^(BEGIN|START TRANSACTION)/i.test(statement)) {
        stats.transactions++
        inTransaction = true
      } else if (/^(COMMIT|END)\b/i.test(statement)) {
        stats.commits++
        inTransaction = false
      } else if (/^ROLLBACK\b(?!\s+TO)/i.test(statement)) {
        inTransaction = false
      } else if (isWrite(text)) {
        stats.writes++
        if (!inTransaction) stats.commits++
      }
    }
    if (type === "Q" || type === "S") {
      stats.roundTrips++
      pending.push({ at: process.hrtime.bigint(), statement })
    }
  }, { client: true, onSslRequest: () => fromServer.skipOne() })
  const fromServer = reader((type) => {
    if (type === "Z" && pending.length > 0) {
      const { at, statement: key } = pending.shift()
      const ms = Number(process.hrtime.bigint() - at) / 1e6
      stats.dbMs += ms
      stats.statementMs[key] = (stats.statementMs[key] ?? 0) + ms
    }
  }, { client: false })
  client.on("data", (chunk) => {
    fromClient(chunk)
    server.write(chunk)
  })
  server.on("data", (chunk) => {
    fromServer(chunk)
    client.write(chunk)
  })
  client.on("close", () => server.destroy())
  server.on("close", () => client.destroy())
  client.on("error", () => server.destroy())
  server.on("error", () => client.destroy())
})

const control = createHttpServer((req, res) => {
  if (req.method === "POST" && req.url === "/reset") reset()
  res.writeHead(200, { "content-type": "application/json" })
  res.end(JSON.stringify(stats))
})

relay.listen(0, "127.0.0.1", () => {
  control.listen(0, "127.0.0.1", () => {
    process.stdout.write(`${JSON.stringify({ ready: true, port: relay.address().port, control: `http://127.0.0.1:${control.address().port}` })}\n`)
  })
})
process.on("SIGTERM", () => process.exit(0))
process.on("SIGINT", () => process.exit(0))
