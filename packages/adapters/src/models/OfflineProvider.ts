/**
 * The `offline` model provider: deterministic and network-free, so that a fresh checkout works
 * end to end and tests can see what reached the model.
 *
 * It answers from the messages it is given: a text that starts with `[offline]` (and, standing in
 * for configured models that failed, `ModelRequest.failed`, names them and why), restates the
 * last user message, and lists what the system messages hold, one line each (remembered facts,
 * instructions, code excerpts; of a client's long system prompt, its first lines and how many
 * more). It streams that text in word groups, then `Usage` (estimated
 * with `estimateTokens`: every message content in, the text out), then `Finish`. The same
 * request always gets the same chunks. It applies `stop` (the text ends before the first stop
 * sequence) and `maxOutputTokens`; sampling options cannot change a deterministic answer.
 *
 * Tools: with `tool_choice: "required"` it calls the tool the last user message names (else the
 * first tool), with a named `tool_choice` that tool; with `"auto"` (or none given) it calls a
 * tool only when the last user message names it and no tool result has come back since, else it
 * answers in text; `"none"` is text. A call is one `ToolCallDelta` with its id and name, then its
 * arguments (an example valid against the tool's `parameters`, strings taken from the question,
 * see `JsonSchemaExample`), then `Finish` with `tool_calls`. Tool results after the last user
 * message are listed in the text answer, so a round trip shows. Structured output:
 * `json_object` answers `{"answer": <the text>}`, `json_schema` an example valid against the
 * schema; `stop` and `maxOutputTokens` cut those too, as they would a real model's. A council's
 * prompts are answered in the council's forms (`OfflineCouncil`).
 *
 * ```ts
 * const chunks = yield* Stream.runCollect(OfflineProvider.make.stream(request))
 * ```
 */
import {
  type CallOptions,
  type ChatMessage,
  estimateTokens,
  type ModelChunk,
  type ModelRequest,
  type ToolDefinition,
  Usage
} from "@huddle/domain/models/Model"
import type { Provider } from "@huddle/domain/models/ModelProviders"
import { moreUntested, moreUntestedCount } from "@huddle/domain/grounding/Grounding"
import { wordGroups } from "@huddle/domain/shared/Words"
import { Stream } from "effect"
import { exampleOf } from "./JsonSchemaExample.js"
import { fnv1a } from "./Fnv1a.js"
import * as OfflineCouncil from "./OfflineCouncil.js"
import * as OfflineEmbeddings from "./OfflineEmbeddings.js"

export const name = "offline"

/** Words per `Delta`. */
const wordsPerDelta = 4
/** The longest restatement of the question, in characters. */
const maxQuestion = 500
/** The longest context line, in characters. */
const maxLine = 200

const shorten = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

/** The opening of the system message that carries repository excerpts (`grounding/Grounding`). */
const groundingMarker = "Code from the workspace's connected repository"

/**
 * Of repository excerpts, their headers (`path:start-end (why)`, cited as such) and the computed
 * coverage lines; the code itself is not restated.
 */
const groundingLines = (content: string): ReadonlyArray<string> =>
  content.split(/\r?\n/).flatMap((line) => {
    const header = /^--- (.+) ---$/.exec(line)
    if (header !== null) return [`excerpt ${header[1]}`]
    return line.startsWith("untested: ") || line.startsWith("Test coverage computed") ? [line] : []
  })

/** The most lines of a client's system message restated; a longer one is summed up after them. */
const maxClientLines = 12

const cleanLines = (content: string): ReadonlyArray<string> =>
  content.split(/\r?\n/)
    .map((line) => line.trim().replace(/^(?:[-*•]|\d+[.)])\s+/, ""))
    .filter((line) => line.length > 0)
    .map((line) => shorten(line.replace(/\s+/g, " "), maxLine))

/**
 * One line per non-empty line of the system messages, without its list marker. What Huddle put
 * there (memories, instructions, excerpts) is restated whole; a client's own long system prompt
 * (Claude Code's runs to hundreds of lines) only its first lines and how many more there are, so
 * that the answer ends within the output cap rather than being cut.
 */
const contextLines = (messages: ReadonlyArray<ChatMessage>): ReadonlyArray<string> =>
  messages
    .filter((message) => message.role === "system")
    .flatMap((message) => {
      if (message.content.startsWith(groundingMarker)) return groundingLines(message.content)
      const lines = cleanLines(message.content)
      if (message.source === "huddle" || lines.length <= maxClientLines) return lines
      return [...lines.slice(0, maxClientLines), `… and ${lines.length - maxClientLines} more lines of instructions`]
    })

const lastUserIndex = (messages: ReadonlyArray<ChatMessage>): number => {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === "user") return i
  return -1
}

const questionOf = (messages: ReadonlyArray<ChatMessage>): string => {
  const lastUser = messages[lastUserIndex(messages)]
  return lastUser === undefined ? "" : shorten(lastUser.content.trim().replace(/\s+/g, " "), maxQuestion)
}

/** The tool results that came back after the last user message, with the name of the tool called. */
const toolResults = (messages: ReadonlyArray<ChatMessage>): ReadonlyArray<{ readonly name: string; readonly content: string }> => {
  const names = new Map<string, string>()
  for (const message of messages) for (const call of message.tool_calls ?? []) names.set(call.id, call.function.name)
  return messages.slice(lastUserIndex(messages) + 1).flatMap((message) =>
    message.role === "tool"
      ? [{ name: names.get(message.tool_call_id ?? "") ?? message.name ?? "a tool", content: message.content }]
      : []
  )
}

/**
 * The answer's lines within `budget` characters by listing fewer untested files: the last ones
 * give way to one line that says how many were left out and where the complete list is, so that
 * a coverage answer is never cut in the middle of a path (decision 0036). Unchanged when it fits
 * or lists none.
 */
const fitUntested = (lines: ReadonlyArray<string>, budget: number): ReadonlyArray<string> => {
  const length = (list: ReadonlyArray<string>) => list.reduce((sum, line) => sum + line.length + 1, -1)
  if (length(lines) <= budget) return lines
  const countOf = (line: string) => (line.startsWith("- ") ? moreUntestedCount(line.slice(2)) : undefined)
  const isPath = (line: string) => line.startsWith("- untested: ") && countOf(line) === undefined
  if (!lines.some(isPath)) return lines
  // The list is what a coverage question asks for: the excerpts' headers give way first, to one line.
  const excerpts = lines.filter((line) => line.startsWith("- excerpt "))
  const firstExcerpt = excerpts.length === 0 ? -1 : lines.indexOf(excerpts[0]!)
  const shortened = lines.flatMap((line, at) =>
    at === firstExcerpt ? [`- ${excerpts.length} ${excerpts.length === 1 ? "excerpt" : "excerpts"}, listed in the reply's grounding.excerpts`] : line.startsWith("- excerpt ") ? [] : [line]
  )
  if (length(shortened) <= budget) return shortened
  const paths = shortened.flatMap((line, at) => (isPath(line) ? [at] : []))
  const alreadyLeftOut = shortened.reduce((sum, line) => sum + (countOf(line) ?? 0), 0)
  for (let keep = paths.length - 1; keep >= 0; keep--) {
    const firstDropped = paths[keep]!
    const dropped = new Set(paths.slice(keep))
    const fitted = shortened.flatMap((line, at) =>
      at === firstDropped
        ? [`- ${moreUntested(paths.length - keep + alreadyLeftOut)}`]
        : dropped.has(at) || countOf(line) !== undefined ? [] : [line]
    )
    if (length(fitted) <= budget || keep === 0) return fitted
  }
  return shortened
}

/** The full answer text for a request (before truncation to `maxOutputTokens`); a list of untested files fitted to `budget` characters. */
export const answerFor = (request: ModelRequest, budget = Number.POSITIVE_INFINITY): string => {
  const question = questionOf(request.messages)
  const failed = request.failed ?? []
  const lines = [
    failed.length === 0
      ? `[offline] This answer comes from the offline model (${request.model.id}): no model provider was called.`
      // Standing in for configured models that failed (HUDDLE_OFFLINE_FALLBACK): it says which, and why.
      : `[offline] This answer comes from the offline model (${request.model.id}), not a language model: the configured ${
        failed.length === 1 ? "model" : "models"
      } failed (${failed.map((f) => `${f.model}: ${f.reason}`).join("; ")}).`,
    question.length > 0 ? `You asked: "${question}"` : "There was no question to answer."
  ]
  const results = toolResults(request.messages)
  if (results.length > 0) {
    lines.push("Tool results I was given:")
    for (const result of results) lines.push(`- ${result.name}: ${shorten(result.content.trim().replace(/\s+/g, " "), maxLine)}`)
  }
  const context = contextLines(request.messages)
  if (context.length > 0) {
    lines.push("Context I was given:")
    for (const line of context) lines.push(`- ${line}`)
  } else {
    lines.push("I was given no other context.")
  }
  return fitUntested(lines, budget).join("\n")
}

/** The answer as `response_format` wants it: the text, or JSON; a council's prompt as the council asks. */
const formatted = (request: ModelRequest, budget: number): string => {
  const council = OfflineCouncil.answerFor(request.messages, request.model.id, (messages) => answerFor({ ...request, messages }))
  if (council !== undefined) return council
  const format = request.options?.response_format
  if (format?.type === "json_object") return JSON.stringify({ answer: answerFor(request) })
  if (format?.type === "json_schema") {
    return JSON.stringify(exampleOf(format.json_schema.schema ?? { type: "object" }, { text: questionOf(request.messages) }))
  }
  return answerFor(request, budget)
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Whether a text names a tool (as a whole word). */
const names = (text: string, tool: ToolDefinition) =>
  new RegExp(`(^|[^\\w-])${escapeRegExp(tool.function.name)}($|[^\\w-])`).test(text)

/** The tool to call, if the request's `tool_choice` and messages make this a tool call. */
export const toolToCall = (request: ModelRequest): ToolDefinition | undefined => {
  const tools = request.options?.tools ?? []
  const choice = request.options?.tool_choice ?? "auto"
  if (tools.length === 0 || choice === "none") return undefined
  if (typeof choice === "object") return tools.find((tool) => tool.function.name === choice.function.name)
  const lastUser = request.messages[lastUserIndex(request.messages)]
  const named = lastUser === undefined ? undefined : tools.find((tool) => names(lastUser.content, tool))
  if (choice === "required") return named ?? tools[0]
  // "auto": only a tool asked for by name, and only once per question.
  return toolResults(request.messages).length > 0 ? undefined : named
}

/** A short deterministic hash, for call ids that differ between conversations. */
const hash = (text: string): string => fnv1a(text).toString(16).padStart(8, "0")

/** Input tokens as the offline model counts them: message contents, tool calls and definitions. */
const inputTokens = (request: ModelRequest): number =>
  request.messages.reduce(
    (sum, message) => sum + estimateTokens(message.content) + (message.tool_calls ? estimateTokens(JSON.stringify(message.tool_calls)) : 0),
    0
  ) + (request.options?.tools ? estimateTokens(JSON.stringify(request.options.tools)) : 0)

const toolCallChunks = (request: ModelRequest, tool: ToolDefinition): ReadonlyArray<ModelChunk> => {
  const args = JSON.stringify(exampleOf(tool.function.parameters ?? { type: "object" }, { text: questionOf(request.messages) }))
  const budget = Math.max(0, request.maxOutputTokens) * 4
  const output = tool.function.name + args
  // Over the output budget a real model stops mid-call; so does this one.
  const truncated = output.length > budget
  const kept = truncated ? args.slice(0, Math.max(0, budget - tool.function.name.length)) : args
  const id = `call_offline_${hash(JSON.stringify(request.messages) + tool.function.name)}`
  return [
    { _tag: "ToolCallDelta", index: 0, id, name: tool.function.name, arguments: "" },
    ...(kept.length > 0 ? [{ _tag: "ToolCallDelta" as const, index: 0, arguments: kept }] : []),
    { _tag: "Usage", usage: new Usage({ input_tokens: inputTokens(request), output_tokens: estimateTokens(tool.function.name + kept) }) },
    { _tag: "Finish", reason: truncated ? "length" : "tool_calls" }
  ]
}


/** The answer up to (not including) its first stop sequence, as a real model stops there, and the sequence met. */
const untilStop = (text: string, stop: CallOptions["stop"]): { readonly text: string; readonly met?: string | undefined } => {
  const stops = stop === undefined ? [] : typeof stop === "string" ? [stop] : stop
  let met: { at: number; stop: string } | undefined
  for (const s of stops) {
    const at = s.length > 0 ? text.indexOf(s) : -1
    if (at >= 0 && (met === undefined || at < met.at)) met = { at, stop: s }
  }
  return met === undefined ? { text } : { text: text.slice(0, met.at), met: met.stop }
}

export const chunksFor = (request: ModelRequest): ReadonlyArray<ModelChunk> => {
  const tool = toolToCall(request)
  if (tool !== undefined) return toolCallChunks(request, tool)
  // Honour the output budget as a real model would: cut the text, and say so in `Finish`.
  const budget = Math.max(0, request.maxOutputTokens) * 4
  const { met, text: full } = untilStop(formatted(request, budget), request.options?.stop)
  const truncated = full.length > budget
  const text = truncated ? full.slice(0, budget).trimEnd() : full
  const input = inputTokens(request)
  return [
    ...wordGroups(text, wordsPerDelta).map((group): ModelChunk => ({ _tag: "Delta", text: group })),
    { _tag: "Usage", usage: new Usage({ input_tokens: input, output_tokens: estimateTokens(text) }) },
    truncated ? { _tag: "Finish", reason: "length" } : { _tag: "Finish", reason: "stop", stopSequence: met }
  ]
}

export const make: Provider = {
  name,
  kind: "offline",
  stream: (request) => Stream.suspend(() => Stream.fromIterable(chunksFor(request))),
  embed: OfflineEmbeddings.embed
}
