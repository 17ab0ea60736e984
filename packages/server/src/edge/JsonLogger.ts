/**
 * The server's log: one JSON object a line on stdout, the lines of Effect's `Logger.json`,
 * written a batch at a time. With `Logger.json`, every line was formatted through Effect's
 * structured logger and written with `console.log`, one write to stdout per line: the access log
 * alone cost 7–11 % of a chat completion's CPU under load (decision 0029). Here a line of plain
 * values (the access log's, and most others) is built directly; any other line (an error, a
 * cause, log spans, objects) is made by `Logger.jsonLogger` itself. The lines of one turn of the
 * event loop go out in one write, at the latest when the process exits.
 */
import { Cause, Effect, FiberId, Layer, List, Logger } from "effect"

type Plain = string | number | boolean | null

const isPlain = (value: unknown): value is Plain =>
  value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean"

/** The message of a line built directly: a string, alone or as the only element of the message. */
const plainMessage = (message: unknown): string | undefined => {
  if (typeof message === "string") return message
  if (Array.isArray(message) && message.length === 1 && typeof message[0] === "string") return message[0]
  return undefined
}

/** The line, when everything in it is a plain value; undefined otherwise. */
const plainLine = (options: Logger.Logger.Options<unknown>): string | undefined => {
  const message = plainMessage(options.message)
  if (message === undefined || !Cause.isEmpty(options.cause) || List.isCons(options.spans)) return undefined
  // An object, as Effect's logger makes it, so that its keys come out in the same order.
  const annotations: Record<string, Plain> = {}
  for (const [key, value] of options.annotations) {
    if (!isPlain(value)) return undefined
    annotations[key] = value
  }
  return `{"message":${JSON.stringify(message)},"logLevel":${JSON.stringify(options.logLevel.label)},"timestamp":"${options.date.toISOString()}",` +
    `"annotations":${JSON.stringify(annotations)},"spans":{},"fiberId":${JSON.stringify(FiberId.threadName(options.fiberId))}}`
}

/** Each line as `Logger.jsonLogger` makes it. */
export const lines: Logger.Logger<unknown, string> = Logger.make((options) => plainLine(options) ?? Logger.jsonLogger.log(options))

/** Lines written together, once per turn of the event loop (and at exit): one write for many. */
export const batched = (write: (text: string) => void) => {
  let pending = ""
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending === "") return
    const text = pending
    pending = ""
    write(text)
  }
  return {
    add: (line: string) => {
      pending += `${line}\n`
      if (scheduled) return
      scheduled = true
      setImmediate(flush)
    },
    flush
  }
}

/** The logger of `npm start`: `lines` on stdout. */
export const layer = Layer.unwrapScoped(Effect.gen(function*() {
  const stdout = batched((text) => process.stdout.write(text))
  // The last lines go out when the program ends, or when the process exits without ending it.
  process.once("exit", stdout.flush)
  yield* Effect.addFinalizer(() => Effect.sync(stdout.flush))
  return Logger.replace(Logger.defaultLogger, Logger.map(lines, stdout.add))
}))
