/**
 * A model request in the Anthropic Messages API's words: system messages as the top-level `system`
 * (joined by blank lines, with the instruction that stands for `json_object`), tool calls and
 * results as `tool_use`/`tool_result` blocks, tools and the tool choice, a `json_schema` format as
 * a forced tool, and the call options Anthropic has a concept for.
 */
import type { CallOptions, ChatMessage, ModelRequest, ToolChoice } from "@huddle/domain/models/Model"

const isRecord = (u: unknown): u is { readonly [key: string]: unknown } => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The options Anthropic has a concept for, in its words. `ProviderSupport` has refused the ones
 * it has none for unless they were neutral, and neutral ones need not be sent.
 */
const translatedOptions = (options: CallOptions | undefined) => {
  if (options === undefined) return {}
  const stop = options.stop === undefined ? [] : typeof options.stop === "string" ? [options.stop] : options.stop
  const userId = options.safety_identifier ?? options.user
  return {
    ...(stop.length > 0 ? { stop_sequences: stop } : {}),
    ...(options.top_p === undefined ? {} : { top_p: options.top_p }),
    ...(userId === undefined ? {} : { metadata: { user_id: userId } })
  }
}

/** The system instruction that stands for `response_format: json_object`. */
export const jsonObjectInstruction = "Answer with a single JSON object and nothing else: no prose before or after it, no code fences."

/** Anthropic's tool names allow what OpenAI's function names allow; a schema name may not. */
const toolName = (name: unknown): string => {
  const cleaned = typeof name === "string" ? name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) : ""
  return cleaned.length > 0 ? cleaned : "structured_answer"
}

const toolChoiceOf = (choice: ToolChoice | undefined, parallel: boolean | undefined, hasTools: boolean) => {
  const serial = parallel === false ? { disable_parallel_tool_use: true } : {}
  if (choice === undefined) return hasTools && parallel === false ? { type: "auto", ...serial } : undefined
  if (choice === "none") return { type: "none" }
  if (choice === "auto") return { type: "auto", ...serial }
  if (choice === "required") return { type: "any", ...serial }
  return { type: "tool", name: choice.function.name, ...serial }
}

/** A tool call's arguments as the `input` object Anthropic wants (arguments that are not a JSON object become `{}`). */
const toolInputOf = (args: string): unknown => {
  try {
    const parsed: unknown = JSON.parse(args)
    return isRecord(parsed) ? parsed : {}
  } catch {
    return {}
  }
}

type Block = { readonly type: string; readonly [key: string]: unknown }
interface WireMessage {
  readonly role: "user" | "assistant"
  content: string | Array<Block>
}

/**
 * The conversation in Anthropic's words: tool calls as `tool_use` blocks, tool results as
 * `tool_result` blocks of one user turn (with any user text that follows them), as the API wants
 * every result of a turn's calls in the next user message.
 */
export const messagesOf = (messages: ReadonlyArray<ChatMessage>): ReadonlyArray<WireMessage> => {
  const out: Array<WireMessage> = []
  for (const message of messages) {
    if (message.role === "system") continue
    if (message.role === "assistant" && message.tool_calls !== undefined && message.tool_calls.length > 0) {
      out.push({
        role: "assistant",
        content: [
          ...(message.content.length > 0 ? [{ type: "text", text: message.content }] : []),
          ...message.tool_calls.map((call) => ({ type: "tool_use", id: call.id, name: call.function.name, input: toolInputOf(call.function.arguments) }))
        ]
      })
      continue
    }
    const previous = out[out.length - 1]
    const afterResults = previous?.role === "user" && Array.isArray(previous.content)
    if (message.role === "tool") {
      const block = { type: "tool_result", tool_use_id: message.tool_call_id ?? "", content: message.content }
      if (afterResults) (previous.content as Array<Block>).push(block)
      else out.push({ role: "user", content: [block] })
      continue
    }
    if (message.role === "user" && afterResults) {
      ;(previous.content as Array<Block>).push({ type: "text", text: message.content })
      continue
    }
    out.push({ role: message.role, content: message.content })
  }
  return out
}

/** The request's tools, tool choice and response format in Anthropic's words, and the structured-answer tool if any. */
export const toolsOf = (options: CallOptions | undefined) => {
  const format = options?.response_format
  if (format?.type === "json_schema") {
    // ProviderSupport refuses `tools` beside it: the forced tool is the only one.
    const name = toolName(format.json_schema.name)
    const description = typeof format.json_schema.description === "string"
      ? format.json_schema.description
      : "Give the answer as this tool's input, which follows the required JSON schema."
    return {
      structuredTool: name,
      body: {
        tools: [{ name, description, input_schema: format.json_schema.schema ?? { type: "object" } }],
        tool_choice: { type: "tool", name }
      }
    }
  }
  const tools = options?.tools ?? []
  const choice = toolChoiceOf(options?.tool_choice, options?.parallel_tool_calls, tools.length > 0)
  return {
    structuredTool: undefined,
    body: {
      ...(tools.length === 0 ? {} : {
        tools: tools.map(({ function: fn }) => ({
          name: fn.name,
          ...(fn.description === undefined ? {} : { description: fn.description }),
          input_schema: fn.parameters ?? { type: "object", properties: {} }
        }))
      }),
      // Anthropic refuses a tool choice without tools; without tools, there is nothing to choose.
      ...(choice === undefined || tools.length === 0 ? {} : { tool_choice: choice })
    }
  }
}

/** The body of `POST /v1/messages` for `request`, and the structured-answer tool whose input is the answer, if any. */
export const requestOf = (request: ModelRequest): { readonly body: unknown; readonly structuredTool: string | undefined } => {
  const instructions = request.messages.filter((message) => message.role === "system").map((message) => message.content)
  if (request.options?.response_format?.type === "json_object") instructions.push(jsonObjectInstruction)
  const system = instructions.join("\n\n")
  const tools = toolsOf(request.options)
  const body = {
    model: request.model.upstream_model ?? request.model.id,
    max_tokens: request.maxOutputTokens,
    stream: true,
    ...(system.length > 0 ? { system } : {}),
    messages: messagesOf(request.messages),
    ...tools.body,
    // Anthropic's range is 0–1 where OpenAI's is 0–2.
    ...(request.temperature === undefined ? {} : { temperature: Math.min(1, Math.max(0, request.temperature)) }),
    ...translatedOptions(request.options)
  }
  return { body, structuredTool: tools.structuredTool }
}
