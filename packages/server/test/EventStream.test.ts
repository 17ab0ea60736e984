/**
 * The one stream framer: once a stream has begun, SSE comment heartbeats go out while the run says
 * nothing (a council deliberating), in every dialect; none before it begins, none after it ends.
 */
import { describe, expect, it } from "@effect/vitest"
import * as EventStream from "@huddle/server/http/streaming/EventStream"
import { SseSettings } from "@huddle/server/http/streaming/SseSettings"
import { Chunk, Duration, Effect, Stream } from "effect"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

type Event = { readonly output: boolean; readonly text: string }

const dialect: EventStream.Dialect<Event> = {
  isOutput: (event) => event.output,
  frames: (events) => Chunk.map(events, (event) => encoder.encode(`data: ${event.text}\n\n`)),
  failure: () => encoder.encode("event: error\n\n")
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
      const body = response.body
      if (body._tag !== "Stream") throw new Error("expected a streamed body")
      const text = decoder.decode(Chunk.toReadonlyArray(yield* Stream.runCollect(body.stream)).reduce((all, part) => {
        const joined = new Uint8Array(all.length + part.length)
        joined.set(all)
        joined.set(part, all.length)
        return joined
      }, new Uint8Array()))
      const beats = text.split(": keepalive\n\n").length - 1
      expect(beats).toBeGreaterThanOrEqual(2)
      expect(text.startsWith("data: held\n\ndata: begun\n\n")).toBe(true)
      expect(text.endsWith("data: end\n\n")).toBe(true)
    }).pipe(Effect.scoped, Effect.provideService(SseSettings, { heartbeat: Duration.millis(50) })))
})
