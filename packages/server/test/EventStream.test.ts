/**
 * The one stream framer: once a stream has begun, SSE comment heartbeats go out while the run says
 * nothing (a council deliberating), in every dialect; none before it begins, none after it ends.
 */
import { Readable } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as EventStream from "@huddle/server/shared/EventStream"
import { SseSettings } from "@huddle/server/shared/SseSettings"
import { Chunk, Duration, Effect, Logger, Stream } from "effect"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

type Event = { readonly output: boolean; readonly text: string }

const dialect: EventStream.Dialect<Event> = {
  isOutput: (event) => event.output,
  frames: (events) => Chunk.map(events, (event) => encoder.encode(`data: ${event.text}\n\n`)),
  failure: () => encoder.encode("event: error\n\n")
}

/** The body Node writes from. */
const bodyOf = (response: HttpServerResponse.HttpServerResponse): Readable => {
  const body = response.body
  if (body._tag !== "Raw" || !(body.body instanceof Readable)) throw new Error("expected a readable body")
  return body.body
}

const textOf = async (readable: Readable) => {
  let all = ""
  for await (const part of readable) all += decoder.decode(part, { stream: true })
  return all
}

describe("EventStream", () => {
  it.live("sends comment heartbeats while a begun stream is quiet, and only then", () =>
    Effect.gen(function*() {
      const opening: ReadonlyArray<Event> = [{ output: false, text: "held" }, { output: true, text: "begun" }]
      const last: Event = { output: true, text: "end" }
      const events: Stream.Stream<Event> = Stream.concat(
        Stream.fromIterable(opening),
        Stream.fromEffect(Effect.as(Effect.sleep("300 millis"), last))
      )
      const response = yield* EventStream.respond(Stream.toPull(events), dialect)
      const text = yield* Effect.promise(() => textOf(bodyOf(response)))
      const beats = text.split(": keepalive\n\n").length - 1
      expect(beats).toBeGreaterThanOrEqual(2)
      expect(text.startsWith("data: held\n\ndata: begun\n\n")).toBe(true)
      expect(text.endsWith("data: end\n\n")).toBe(true)
    }).pipe(Effect.scoped, Effect.provideService(SseSettings, { heartbeat: Duration.millis(50) })))

  it.live("cuts the body of an answer that dies after it began, and logs the defect without a stack", () =>
    Effect.gen(function*() {
      const logged: Array<string> = []
      const events: Stream.Stream<Event> = Stream.concat(
        Stream.succeed<Event>({ output: true, text: "begun" }),
        Stream.die(new TypeError("broken frame"))
      )
      const readable = bodyOf(yield* EventStream.respond(Stream.toPull(events), dialect).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, Logger.map(Logger.jsonLogger, (line) => void logged.push(line))))
      ))
      const outcome = yield* Effect.promise(() => textOf(readable).then((text) => ({ text }), (error: unknown) => ({ error })))
      expect(outcome).toHaveProperty("error")
      const line = JSON.parse(logged.find((entry) => entry.includes("unexpected failure"))!)
      expect(line).toMatchObject({ logLevel: "ERROR", annotations: { defect: "TypeError: broken frame", streamed: true } })
      expect(JSON.stringify(line)).not.toMatch(/\n\s+at /)
    }).pipe(Effect.scoped, Effect.provideService(SseSettings, { heartbeat: Duration.seconds(30) })))

  it.live("waits for a client that reads slower than the answer comes, and then sends all of it in order", () =>
    Effect.gen(function*() {
      // 2,000 events of 1 KB each, one chunk at a time: 2 MB if nothing held the run back.
      const padding = "x".repeat(1024)
      let pulled = 0
      const events: Stream.Stream<Event> = Stream.range(1, 2000).pipe(
        Stream.rechunk(1),
        Stream.map((i): Event => {
          pulled = i
          return { output: true, text: `${i} ${padding}` }
        })
      )
      const readable = bodyOf(yield* EventStream.respond(Stream.toPull(events), dialect))

      // Nobody reads for a while: the run stops once Node's buffer is full.
      yield* Effect.sleep("200 millis")
      expect(pulled).toBeGreaterThan(0)
      expect(pulled).toBeLessThan(100)
      expect(readable.readableLength).toBeLessThan(100 * 1024)

      const text = yield* Effect.promise(() => textOf(readable))
      const numbers = text.split("\n\n").filter((frame) => frame.length > 0).map((frame) => Number(frame.slice("data: ".length).split(" ")[0]))
      expect(numbers).toEqual(Array.from({ length: 2000 }, (_, i) => i + 1))
    }).pipe(Effect.scoped, Effect.provideService(SseSettings, { heartbeat: Duration.seconds(30) })))

  it.live("begins an answer whose first chunk alone is more than Node's buffer holds, and sends all of it", () =>
    Effect.gen(function*() {
      // The offline model emits its whole answer in one chunk: 64 frames of 1 KB, four times the
      // Readable's 16 KB mark, so pushing them says "wait" before the response has been returned.
      const padding = "x".repeat(1024)
      const first = Array.from({ length: 64 }, (_, i): Event => ({ output: true, text: `${i + 1} ${padding}` }))
      const events: Stream.Stream<Event> = Stream.fromChunk(Chunk.unsafeFromArray(first))
      const response = yield* EventStream.respond(Stream.toPull(events), dialect).pipe(Effect.timeout("2 seconds"))
      const text = yield* Effect.promise(() => textOf(bodyOf(response)))
      const numbers = text.split("\n\n").filter((frame) => frame.length > 0).map((frame) => Number(frame.slice("data: ".length).split(" ")[0]))
      expect(numbers).toEqual(Array.from({ length: 64 }, (_, i) => i + 1))
    }).pipe(Effect.scoped, Effect.provideService(SseSettings, { heartbeat: Duration.seconds(30) })))
})
