/**
 * What a provider fake writes back: a plain `Reply` (an error status, or a body the client does not
 * expect), a whole JSON answer, or a server-sent event stream, each with the script's timing and
 * faults (a delayed first byte or piece, a dropped connection, a malformed event).
 */
import type { Exchange } from "./FakeUpstream.js"

/** A plain HTTP answer: an error status, or a body that is not what the client expects. */
export interface Reply {
  readonly status: number
  /** An object is sent as JSON; a string as it is. */
  readonly body?: unknown
  readonly headers?: Readonly<Record<string, string>>
  /** Milliseconds before the status line is written. */
  readonly firstByteDelayMs?: number
}

export const isReply = (script: object): script is Reply => "status" in script && typeof script.status === "number"

/** Writes a `Reply` (after its delay), unless the client has gone away meanwhile. */
export const sendReply = async (reply: Reply, exchange: Exchange): Promise<void> => {
  if (reply.firstByteDelayMs) await exchange.wait(reply.firstByteDelayMs)
  if (exchange.closed) return
  const body = reply.body === undefined ? "" : typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body)
  const headers: Record<string, string> = { ...reply.headers }
  if (body.length > 0 && !Object.keys(headers).some((name) => name.toLowerCase() === "content-type")) {
    headers["content-type"] = typeof reply.body === "string" ? "text/plain" : "application/json"
  }
  exchange.res.writeHead(reply.status, headers)
  exchange.res.end(body)
}

/** The timing and fault injection every scripted answer of a provider fake offers. */
export interface AnswerFaults {
  /** Milliseconds before the status line. */
  readonly firstByteDelayMs?: number
  /** Milliseconds before each piece of the answer. */
  readonly chunkDelayMs?: number
  /** Destroy the connection after this many pieces (for a non-streaming request: at once). */
  readonly dropAfterChunks?: number
  /** Send a `data:` line that is not JSON after this many pieces, then end the response. */
  readonly malformedAfterChunks?: number
}

const sseHeaders = { "content-type": "text/event-stream", "cache-control": "no-cache" } as const
const jsonHeaders = { "content-type": "application/json" } as const

/** Waits out the script's first-byte delay; false when the client went away meanwhile. */
export const awaitFirstByte = async (script: AnswerFaults, exchange: Exchange): Promise<boolean> => {
  if (!script.firstByteDelayMs) return true
  await exchange.wait(script.firstByteDelayMs)
  return !exchange.closed
}

/** A non-streaming answer: `body()`, or with the script's faults a drop or the `malformed` text. */
export const sendWhole = (script: AnswerFaults, exchange: Exchange, whole: { readonly malformed: string; readonly body: () => string }): void => {
  if (script.dropAfterChunks !== undefined) return exchange.drop()
  exchange.res.writeHead(200, jsonHeaders)
  exchange.res.end(script.malformedAfterChunks !== undefined ? whole.malformed : whole.body())
}

export interface Stream {
  /** The events before the first piece. */
  readonly head: string
  readonly pieces: number
  /** The event carrying piece `i`. */
  readonly piece: (i: number) => string
  /** The events after the last piece. */
  readonly tail: () => string
  /** Sent in place of piece `malformedAfterChunks`, before the response ends. */
  readonly malformed: string
  /** A further scripted early end (Anthropic's `error` event): `text()` after `after` pieces. */
  readonly cut?: { readonly after: number; readonly text: () => string } | undefined
}

/**
 * A server-sent event stream with the script's timing and faults. Events are buffered and
 * written only before a wait, a drop or the end, so that an undelayed answer is one write.
 */
export const sendStream = async (script: AnswerFaults, exchange: Exchange, stream: Stream): Promise<void> => {
  const { res } = exchange
  res.writeHead(200, sseHeaders)
  let out = stream.head
  const flush = () => {
    if (out.length > 0) res.write(out)
    out = ""
  }
  for (let i = 0; i <= stream.pieces; i++) {
    const early = script.malformedAfterChunks === i ? stream.malformed : stream.cut?.after === i ? stream.cut.text() : undefined
    if (early !== undefined) {
      out += early
      flush()
      return void res.end()
    }
    if (script.dropAfterChunks === i) {
      flush()
      return exchange.drop()
    }
    if (i === stream.pieces) break
    if (script.chunkDelayMs) {
      flush()
      await exchange.wait(script.chunkDelayMs)
      if (exchange.closed) return
    }
    out += stream.piece(i)
    exchange.chunks++
  }
  res.end(out + stream.tail())
}
