/**
 * The `offline` model provider: deterministic and network-free, so that a fresh checkout works
 * end to end and tests can see what reached the model.
 *
 * It answers from the messages it is given: a text that starts with `[offline]`, restates the
 * last user message, and lists what the system messages hold, one line each (remembered facts,
 * instructions, code excerpts). It streams that text in word groups, then `Usage` (estimated
 * with `estimateTokens`: every message content in, the text out), then `Finish`. The same
 * request always gets the same chunks. It applies `stop` (the text ends before the first stop
 * sequence) and `maxOutputTokens`; sampling options cannot change a deterministic answer.
 *
 * ```ts
 * const chunks = yield* Stream.runCollect(OfflineProvider.make.stream(request))
 * ```
 */
import { type CallOptions, type ChatMessage, estimateTokens, type ModelChunk, type ModelRequest, Usage } from "@huddle/domain/models/Model"
import type { Provider } from "@huddle/domain/models/ModelProviders"
import { Stream } from "effect"

export const name = "offline"

/** Words per `Delta`. */
const wordsPerDelta = 4
/** The longest restatement of the question, in characters. */
const maxQuestion = 500
/** The longest context line, in characters. */
const maxLine = 200

const shorten = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

/** One line per non-empty line of the system messages, without its list marker. */
const contextLines = (messages: ReadonlyArray<ChatMessage>): ReadonlyArray<string> =>
  messages
    .filter((message) => message.role === "system")
    .flatMap((message) => message.content.split(/\r?\n/))
    .map((line) => line.trim().replace(/^(?:[-*•]|\d+[.)])\s+/, ""))
    .filter((line) => line.length > 0)
    .map((line) => shorten(line.replace(/\s+/g, " "), maxLine))

/** The full answer text for a request (before truncation to `maxOutputTokens`). */
export const answerFor = (request: ModelRequest): string => {
  const lastUser = [...request.messages].reverse().find((message) => message.role === "user")
  const question = lastUser === undefined ? "" : shorten(lastUser.content.trim().replace(/\s+/g, " "), maxQuestion)
  const lines = [
    `[offline] This answer comes from the offline model (${request.model.id}): no model provider was called.`,
    question.length > 0 ? `You asked: "${question}"` : "There was no question to answer."
  ]
  const context = contextLines(request.messages)
  if (context.length > 0) {
    lines.push("Context I was given:")
    for (const line of context) lines.push(`- ${line}`)
  } else {
    lines.push("I was given no other context.")
  }
  return lines.join("\n")
}

/** Splits a text into groups of words whose concatenation is the text. */
const wordGroups = (text: string): ReadonlyArray<string> => {
  const words = text.match(/\s*\S+/g) ?? []
  const groups: Array<string> = []
  for (let i = 0; i < words.length; i += wordsPerDelta) groups.push(words.slice(i, i + wordsPerDelta).join(""))
  return groups
}

/** The answer up to (not including) its first stop sequence, as a real model stops there. */
const untilStop = (text: string, stop: CallOptions["stop"]): string => {
  const stops = stop === undefined ? [] : typeof stop === "string" ? [stop] : stop
  const at = Math.min(...stops.filter((s) => s.length > 0).map((s) => text.indexOf(s)).filter((i) => i >= 0))
  return Number.isFinite(at) ? text.slice(0, at) : text
}

export const chunksFor = (request: ModelRequest): ReadonlyArray<ModelChunk> => {
  const full = untilStop(answerFor(request), request.options?.stop)
  // Honour the output budget as a real model would: cut the text, and say so in `Finish`.
  const budget = Math.max(0, request.maxOutputTokens) * 4
  const truncated = full.length > budget
  const text = truncated ? full.slice(0, budget).trimEnd() : full
  const input = request.messages.reduce((sum, message) => sum + estimateTokens(message.content), 0)
  return [
    ...wordGroups(text).map((group): ModelChunk => ({ _tag: "Delta", text: group })),
    { _tag: "Usage", usage: new Usage({ input_tokens: input, output_tokens: estimateTokens(text) }) },
    { _tag: "Finish", reason: truncated ? "length" : "stop" }
  ]
}

export const make: Provider = {
  name,
  kind: "offline",
  stream: (request) => Stream.suspend(() => Stream.fromIterable(chunksFor(request)))
}
