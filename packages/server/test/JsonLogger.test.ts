/**
 * The server's log lines are `Logger.json`'s, byte for byte (operators parse them), whether a line
 * is built directly or by Effect's logger; and the lines of one turn go out together, in order.
 */
import { describe, expect, it } from "@effect/vitest"
import * as JsonLogger from "@huddle/server/edge/JsonLogger"
import { Cause, FiberId, FiberRefs, HashMap, List, Logger, LogLevel, LogSpan, Schema } from "effect"

const Plain = Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Null)
const Line = Schema.Struct({
  message: Schema.String,
  level: Schema.Literal(...LogLevel.allLevels.map((level) => level._tag)),
  annotations: Schema.Array(Schema.Tuple(Schema.String, Plain)),
  fiber: Schema.Int.pipe(Schema.between(0, 1_000_000)),
  // From 1970 to 2100, in milliseconds.
  at: Schema.Int.pipe(Schema.between(0, 4_102_444_800_000))
})

const optionsOf = (line: {
  readonly message: unknown
  readonly level: LogLevel.LogLevel["_tag"]
  readonly annotations: ReadonlyArray<readonly [string, unknown]>
  readonly fiber: number
  readonly at: number
  readonly cause?: Cause.Cause<unknown>
  readonly spans?: List.List<LogSpan.LogSpan>
}): Logger.Logger.Options<unknown> => ({
  fiberId: FiberId.make(line.fiber, 0),
  logLevel: LogLevel.allLevels.find((level) => level._tag === line.level)!,
  message: line.message,
  cause: line.cause ?? Cause.empty,
  context: FiberRefs.empty(),
  spans: line.spans ?? List.empty(),
  annotations: HashMap.fromIterable(line.annotations),
  date: new Date(line.at)
})

describe("the server's JSON log lines", () => {
  it.prop("are Logger.json's for any line of plain values", [Line], ([line]) => {
    const options = optionsOf(line)
    expect(JsonLogger.lines.log(options)).toBe(Logger.jsonLogger.log(options))
  })

  it("are Logger.json's for the lines it does not build itself", () => {
    const base = { level: "Error" as const, fiber: 7, at: Date.UTC(2026, 10, 25, 9, 30) }
    const lines = [
      { ...base, message: new Error("broken"), annotations: [] },
      { ...base, message: ["two", "parts"], annotations: [["a", 1]] as const },
      { ...base, message: "with a cause", annotations: [], cause: Cause.fail(new Error("why")) },
      { ...base, message: "with a span", annotations: [], spans: List.of(LogSpan.make("load", base.at - 5)) },
      { ...base, message: "an object", annotations: [["detail", { nested: [1, "two"] }], ["missing", undefined]] as const },
      { ...base, message: "a big number", annotations: [["n", 10n]] as const }
    ]
    for (const line of lines) {
      const options = optionsOf(line)
      expect(JsonLogger.lines.log(options)).toBe(Logger.jsonLogger.log(options))
    }
  })

  it("writes the lines of one turn together, in order, and what is left when flushed", async () => {
    const writes: Array<string> = []
    const out = JsonLogger.batched((text) => writes.push(text))
    out.add("one")
    out.add("two")
    expect(writes).toEqual([])
    await new Promise((resolve) => setImmediate(resolve))
    expect(writes).toEqual(["one\ntwo\n"])

    out.add("three")
    out.flush()
    expect(writes).toEqual(["one\ntwo\n", "three\n"])
    await new Promise((resolve) => setImmediate(resolve))
    expect(writes).toHaveLength(2)
  })
})
