import { describe, expect, it } from "@effect/vitest"
import { type Outcome, SseDecoder, type SseEvent } from "@huddle/adapters/models/SseDecoder"
import { FastCheck as fc } from "effect"

const encoder = new TextEncoder()

/** Feeds `pieces` in order; every event, and the outcome of each push. */
const decode = (pieces: ReadonlyArray<Uint8Array | string>, decoder = new SseDecoder()) => {
  const events: Array<SseEvent> = []
  const outcomes: Array<Outcome> = []
  for (const piece of pieces) {
    outcomes.push(decoder.push(typeof piece === "string" ? encoder.encode(piece) : piece, (event) => {
      events.push(event)
      return false
    }))
  }
  return { events, outcomes }
}

const eventsOf = (...pieces: ReadonlyArray<string>) => decode(pieces).events

/**
 * The standard's algorithm, written as plainly as possible: the whole body decoded at once,
 * split into lines, each line handled on its own. The text after the last line end is an
 * unfinished line, and an event without its blank line is never dispatched.
 */
const reference = (bytes: Uint8Array): Array<SseEvent> => {
  const lines = new TextDecoder().decode(bytes).split(/\r\n|\r|\n/)
  lines.pop()
  const events: Array<SseEvent> = []
  let data = ""
  let type = ""
  let lastId: string | undefined
  for (const line of lines) {
    if (line === "") {
      if (data !== "") events.push({ event: type === "" ? "message" : type, data: data.slice(0, -1), id: lastId })
      data = ""
      type = ""
      continue
    }
    if (line.startsWith(":")) continue
    const colon = line.indexOf(":")
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? "" : line.slice(colon + 1)
    if (value.startsWith(" ")) value = value.slice(1)
    if (field === "data") data += `${value}\n`
    else if (field === "event") type = value
    else if (field === "id" && !value.includes("\u0000")) lastId = value
  }
  return events
}

/** `bytes` cut at the given positions (repeats and ends make empty pieces, which must be harmless). */
const cut = (bytes: Uint8Array, cuts: ReadonlyArray<number>): Array<Uint8Array> => {
  const points = [...cuts.map((point) => point % (bytes.length + 1))].sort((a, b) => a - b)
  const pieces: Array<Uint8Array> = []
  let from = 0
  for (const point of points) {
    pieces.push(bytes.subarray(from, point))
    from = point
  }
  pieces.push(bytes.subarray(from))
  return pieces
}

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

describe("SseDecoder", () => {
  it("decodes data with and without the space, multi-line data, comments, event and id fields", () => {
    expect(eventsOf(
      ": a comment\n",
      "data: one\n\n",
      "data:two\n\n",
      "data:  three\n\n",
      "event: delta\nid: 7\ndata: first line\ndata: second line\n\n",
      "data: {\"a\":1}\nretry: 1000\nunknown: field\n\n"
    )).toEqual([
      { event: "message", data: "one", id: undefined },
      { event: "message", data: "two", id: undefined },
      { event: "message", data: " three", id: undefined },
      { event: "delta", data: "first line\nsecond line", id: "7" },
      // The last event id stays until another replaces it.
      { event: "message", data: "{\"a\":1}", id: "7" }
    ])
  })

  it("ends lines at LF, CRLF and CR, also when a line or a CRLF is split between pieces", () => {
    expect(eventsOf("data: a\r\n\r\ndata: b\r\rdata: c\n\n")).toEqual([
      { event: "message", data: "a", id: undefined },
      { event: "message", data: "b", id: undefined },
      { event: "message", data: "c", id: undefined }
    ])
    expect(eventsOf("da", "ta: sp", "lit\r", "\n", "data: more\r", "\n\r", "\n")).toEqual([
      { event: "message", data: "split\nmore", id: undefined }
    ])
    // A CR at the end of a piece followed by a piece that does not start with LF.
    expect(eventsOf("data: x\r", "\rdata: y\r", "", "\n\n")).toEqual([
      { event: "message", data: "x", id: undefined },
      { event: "message", data: "y", id: undefined }
    ])
  })

  it("keeps a multi-byte character split between pieces, and drops a leading BOM", () => {
    const bytes = encoder.encode("\uFEFFdata: héllo 😀\n\n")
    const pieces = Array.from(bytes, (byte) => Uint8Array.of(byte))
    expect(decode(pieces).events).toEqual([{ event: "message", data: "héllo 😀", id: undefined }])
  })

  it("dispatches `data` without a value as empty data, and nothing for a blank line without data", () => {
    expect(eventsOf("data\n\n", "event: ping\n\n", "\n\n", "data:\n\n")).toEqual([
      { event: "message", data: "", id: undefined },
      // The `event: ping` above had no data: its name does not carry over.
      { event: "message", data: "", id: undefined }
    ])
  })

  it("ignores an id with NUL, and an empty event name means message", () => {
    expect(eventsOf("id: 1\n\n", "id: a\u0000b\nevent:\ndata: x\n\n")).toEqual([{ event: "message", data: "x", id: "1" }])
  })

  it("does not dispatch a last event without its blank line", () => {
    expect(eventsOf("data: complete\n\n", "data: incomplete\n")).toEqual([{ event: "message", data: "complete", id: undefined }])
    expect(eventsOf("data: complete\n\ndata: no line end")).toEqual([{ event: "message", data: "complete", id: undefined }])
  })

  it("stops where the callback asks it to", () => {
    const seen: Array<string> = []
    const outcome = new SseDecoder().push(encoder.encode("data: 1\n\ndata: 2\n\ndata: 3\n\n"), (event) => {
      seen.push(event.data)
      return event.data === "2"
    })
    expect(outcome).toBe("stopped")
    expect(seen).toEqual(["1", "2"])
  })

  it("refuses an event larger than its limit, and stays refused", () => {
    const decoder = new SseDecoder(64)
    const { events, outcomes } = decode(["data: small\n\n", `data: ${"x".repeat(40)}\n`, `data: ${"y".repeat(40)}`, "\n\ndata: after\n\n"], decoder)
    expect(events).toEqual([{ event: "message", data: "small", id: undefined }])
    expect(outcomes).toEqual(["more", "more", "too_large", "too_large"])
    // A long line arriving in small pieces counts too.
    const slow = new SseDecoder(64)
    expect(decode(Array.from({ length: 100 }, () => "z"), slow).outcomes.at(-1)).toBe("too_large")
  })

  it("stays linear on a long line that arrives a byte at a time", () => {
    const byte = encoder.encode("a")
    const pieces = [encoder.encode("data: "), ...Array.from({ length: 300_000 }, () => byte), encoder.encode("\n\n")]
    const started = performance.now()
    const { events } = decode(pieces)
    expect(events[0]?.data.length).toBe(300_000)
    // Quadratic work (copying the line so far on every piece) would take minutes.
    expect(performance.now() - started).toBeLessThan(5_000)
  })

  // Text without line ends: what a field's value can hold.
  const lineText = fc.string({ unit: "binary", maxLength: 12 }).map((text) => text.replace(/[\r\n]/g, "·"))
  const lineEnd = fc.constantFrom("\n", "\r\n", "\r")

  interface Spec {
    readonly type: string | undefined
    readonly id: string | undefined
    readonly data: ReadonlyArray<string>
    readonly comment: boolean
    readonly space: boolean
  }
  const spec: fc.Arbitrary<Spec> = fc.record({
    type: fc.option(lineText, { nil: undefined }),
    id: fc.option(lineText.map((text) => text.replace(/\u0000/g, "")), { nil: undefined }),
    data: fc.array(lineText, { minLength: 1, maxLength: 4 }),
    comment: fc.boolean(),
    space: fc.boolean()
  })

  /** An event list as a body (lines and line ends chosen at random), and the events it holds. */
  const body = fc.record({
    specs: fc.array(spec, { maxLength: 12 }),
    ends: fc.array(lineEnd, { minLength: 1, maxLength: 64 }),
    unfinished: fc.option(lineText, { nil: undefined }),
    bom: fc.boolean()
  }).map(({ bom, ends, specs, unfinished }) => {
    const lines: Array<string> = []
    const expected: Array<SseEvent> = []
    let lastId: string | undefined
    // A value that starts with a space needs the separating space to survive.
    const field = (name: string, value: string, space: boolean) => `${name}:${space || value.startsWith(" ") ? " " : ""}${value}`
    for (const { comment, data, id, space, type } of specs) {
      if (comment) lines.push(": keep-alive")
      if (type !== undefined) lines.push(field("event", type, space))
      if (id !== undefined) lines.push(field("id", id, space))
      for (const line of data) lines.push(field("data", line, space))
      lines.push("")
      if (id !== undefined) lastId = id
      expected.push({ event: type === undefined || type === "" ? "message" : type, data: data.join("\n"), id: lastId })
    }
    let text = bom ? "\uFEFF" : ""
    let previous = ""
    lines.forEach((line, index) => {
      let end = ends[index % ends.length]!
      // CR then an empty line ended by LF would read as one CRLF.
      if (previous === "\r" && line === "" && end === "\n") end = "\r"
      text += line + end
      previous = end
    })
    // An event cut off before its blank line: never dispatched.
    if (unfinished !== undefined) text += `data: ${unfinished}`
    return { bytes: encoder.encode(text), expected }
  })

  it("decodes any event list, cut anywhere, into the events it holds (property)", () => {
    fc.assert(
      fc.property(body, fc.array(fc.nat(), { maxLength: 16 }), ({ bytes, expected }, cuts) => {
        const { events } = decode(cut(bytes, cuts))
        expect(events).toEqual(expected)
        expect(reference(bytes)).toEqual(expected)
      }),
      { numRuns: 500 }
    )
  })

  it("agrees with the reference on arbitrary lines and bytes, cut anywhere (property)", () => {
    const value = fc.array(
      fc.oneof(fc.constantFrom("x", " ", ":", "é", "😀", "\u0000", "\uFEFF", "\r"), fc.string({ maxLength: 3 })),
      { maxLength: 4 }
    ).map((parts) => parts.join(""))
    const line = fc.tuple(
      fc.constantFrom("", "data", "data", "event", "id", "retry", ":", "dat", "other"),
      fc.constantFrom("", ":", ": ", ":  "),
      value,
      fc.constantFrom("\n", "\r\n", "\r", "")
    ).map((parts) => encoder.encode(parts.join("")))
    // Now and then bytes that are not UTF-8, or a character cut short.
    const token = fc.oneof({ arbitrary: line, weight: 9 }, { arbitrary: fc.uint8Array({ minLength: 1, maxLength: 3 }), weight: 1 })
    fc.assert(
      fc.property(fc.array(token, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 40 }), (tokens, cuts) => {
        const bytes = concat(tokens)
        expect(decode(cut(bytes, cuts)).events).toEqual(reference(bytes))
      }),
      { numRuns: 1000 }
    )
  })
})
