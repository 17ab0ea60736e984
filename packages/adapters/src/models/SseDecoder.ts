/**
 * Server-sent events (`text/event-stream`, HTML Living Standard §9.2.6) decoded from a body's
 * bytes as they arrive: UTF-8 decoded in streaming mode (a character split between two pieces is
 * kept until it is whole; a leading BOM is dropped), lines ended by CRLF, LF or CR, also when a
 * line or a CRLF is split between pieces.
 *
 * It looks for line ends with `indexOf` over each decoded piece rather than character by
 * character, remembering how far it has searched, so that its work stays linear in the body
 * whatever the pieces' sizes. `retry:` and unknown fields are ignored: a model call is one
 * request, not an `EventSource` that reconnects.
 */

export interface SseEvent {
  /** The `event:` field, or `message` when the event had none (or an empty one). */
  readonly event: string
  /** The `data:` lines, joined by LF. */
  readonly data: string
  /** The last event id set by an `id:` field so far, in this event or an earlier one. */
  readonly id: string | undefined
}

/**
 * What a piece did: `more` (it was decoded, the decoder awaits the next), `stopped` (the
 * callback asked to stop: the rest of the piece was not looked at, and the decoder is done),
 * `too_large` (the event being read exceeds the limit; nothing more can be decoded).
 */
export type Outcome = "more" | "stopped" | "too_large"

/** Called with each event, in order; returning `true` stops the decoding of the piece. */
export type OnEvent = (event: SseEvent) => boolean

/** The default limit on one event's pending text: 10 MiB, as `@effect/experimental`'s parser had. */
export const defaultMaxEventLength = 10 * 1024 * 1024

const LF = 10
const COLON = 58
const SPACE = 32
const decodeOptions = { stream: true } as const

export class SseDecoder {
  private readonly utf8 = new TextDecoder()
  /** The start of a line whose end has not arrived yet; it never holds a CR or an LF. */
  private pending = ""
  /** The last piece ended with a CR: an LF at the start of the next one ends no further line. */
  private skipLf = false
  /** The data buffer; `undefined` until a `data` field, so that `data:` alone still makes an event. */
  private data: string | undefined = undefined
  private type = ""
  private lastId: string | undefined = undefined
  private broken = false

  constructor(private readonly maxEventLength: number = defaultMaxEventLength) {}

  /**
   * Decodes the next piece of the body and calls `onEvent` for every event it completes. At the
   * end of the body there is nothing to flush: an event without its closing blank line is not
   * dispatched, as the standard says.
   */
  push(bytes: Uint8Array, onEvent: OnEvent): Outcome {
    if (this.broken) return "too_large"
    const piece = this.utf8.decode(bytes, decodeOptions)
    if (piece.length === 0) return "more"
    let pos = 0
    if (this.skipLf) {
      this.skipLf = false
      if (piece.charCodeAt(0) === LF) pos = 1
    }
    // The next LF, CR and colon at or after `pos` (the text's length when there is none): each
    // is searched for again only once `pos` has passed it.
    let lf = indexOrEnd(piece, "\n", pos)
    let cr = indexOrEnd(piece, "\r", pos)
    if (lf === piece.length && cr === piece.length) {
      // The line goes on. Appending leaves the pending text unflattened until the line ends, so
      // that a long line arriving in small pieces costs linear time, not quadratic.
      this.pending += pos === 0 ? piece : piece.slice(pos)
      return this.checkSize()
    }
    let text = piece
    if (this.pending.length > 0) {
      // (After a CR `pending` is empty, so here `pos` is 0.)
      const offset = this.pending.length
      text = this.pending + piece
      this.pending = ""
      lf += offset
      cr += offset
    }
    const length = text.length
    let colon = -1
    while (true) {
      const end = lf < cr ? lf : cr
      if (end === length) break
      if (end === pos) {
        if (this.dispatch(onEvent)) return "stopped"
      } else if (text.charCodeAt(pos) !== COLON) {
        // A line starting with a colon is a comment.
        if (colon < pos) colon = indexOrEnd(text, ":", pos)
        this.field(text, pos, end, colon)
      }
      if (end === cr) {
        if (end + 1 === length) this.skipLf = true
        pos = text.charCodeAt(end + 1) === LF ? end + 2 : end + 1
      } else {
        pos = end + 1
      }
      if (lf < pos) lf = indexOrEnd(text, "\n", pos)
      if (cr < pos) cr = indexOrEnd(text, "\r", pos)
    }
    if (pos < length) this.pending = pos === 0 ? text : text.slice(pos)
    return this.checkSize()
  }

  private checkSize(): Outcome {
    if (this.pending.length + (this.data === undefined ? 0 : this.data.length) <= this.maxEventLength) return "more"
    this.broken = true
    this.pending = ""
    this.data = undefined
    return "too_large"
  }

  /** A blank line: the event read so far, if it has data. */
  private dispatch(onEvent: OnEvent): boolean {
    const data = this.data
    const type = this.type
    this.data = undefined
    this.type = ""
    if (data === undefined) return false
    return onEvent({ event: type === "" ? "message" : type, data, id: this.lastId })
  }

  /** The field on `text[start, end)`; `colon` is the first colon at or after `start`. */
  private field(text: string, start: number, end: number, colon: number): void {
    let nameEnd = end
    let valueStart = end
    if (colon < end) {
      nameEnd = colon
      valueStart = colon + 1
      if (valueStart < end && text.charCodeAt(valueStart) === SPACE) valueStart++
    }
    switch (nameEnd - start) {
      case 4:
        if (text.startsWith("data", start)) {
          const value = text.slice(valueStart, end)
          this.data = this.data === undefined ? value : `${this.data}\n${value}`
        }
        return
      case 5:
        if (text.startsWith("event", start)) this.type = text.slice(valueStart, end)
        return
      case 2:
        if (text.startsWith("id", start)) {
          const value = text.slice(valueStart, end)
          if (!value.includes("\u0000")) this.lastId = value
        }
        return
    }
  }
}

const indexOrEnd = (text: string, search: string, from: number): number => {
  const index = text.indexOf(search, from)
  return index < 0 ? text.length : index
}
