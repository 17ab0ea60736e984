/**
 * A Messages API request as the answer core takes it (docs/anthropic.md has the table): the
 * conversation as `ChatMessage`s and the options as `CallOptions`, for every provider that is not
 * Anthropic's; and the request itself, as sent, in `CallOptions.anthropic`, for an Anthropic
 * upstream to receive unchanged. What only Anthropic can honour is listed in `unportable`: any
 * other provider refuses the request naming it (`ProviderSupport.refusalOf`), never drops it.
 *
 * - `system` (a string or text blocks) → one system message, first.
 * - A user turn's `tool_result` blocks → `tool` messages (before its text, as OpenAI needs them
 *   right after the call); `is_error` prefixes the result with `Error: `.
 * - An assistant turn's `tool_use` blocks → its `tool_calls`; its `thinking` blocks are the
 *   model's own earlier reasoning, which only Anthropic takes back (signed): left out elsewhere.
 * - `tool_choice` `auto`/`any`/`tool`/`none` → `auto`/`required`/the named function/`none`;
 *   `disable_parallel_tool_use` → `parallel_tool_calls: false`; `metadata.user_id` → `user`;
 *   `stop_sequences` → `stop`; `thinking` → `reasoning_effort` by its budget; `output_format`
 *   and `output_config.format` → a `json_schema` response format; `output_config.effort` →
 *   `reasoning_effort` (`max` → `xhigh`); `service_tier` → OpenAI's standard tier names.
 * - `cache_control` is kept in the native body; elsewhere it is a hint with nothing to do.
 * - Unportable: images, documents and other block types, server tools, `top_k`, `container`,
 *   `mcp_servers`, `context_management`, `inference_geo`, `compaction`, `thread`, `diagnostics`,
 *   and a conversation that
 *   ends on an assistant turn (a prefill, which other APIs answer anew rather than continue).
 */
import type { Request } from "@huddle/domain/answers/Completions"
import type { CallOptions, ChatMessage, Refusal, ReasoningEffort, ToolCall, ToolChoice, ToolDefinition } from "@huddle/domain/models/Model"
import type { RequestScope } from "@huddle/domain/request/RequestScope"
import type { AnthropicHeaders } from "./MessagesApi.js"
import type { ContentBlock, CountTokens, CreateMessage, MessageParam } from "./MessagesWire.js"

type Unportable = Refusal & { readonly offline?: boolean | undefined }

/** What the translation of a request found only Anthropic can honour, in the order met. */
class Findings {
  readonly unportable: Array<Unportable> = []
  add(param: string, message: string, offline = false) {
    this.unportable.push({ param, message: `\`${param}\`: ${message}; only an Anthropic model can honour it`, ...(offline ? { offline } : {}) })
  }
}

/** A tool result's content: a string, or blocks of which only text is portable. */
const resultText = (content: unknown, path: string, findings: Findings): string => {
  if (content === undefined || content === null) return ""
  if (typeof content === "string") return content
  if (!Array.isArray(content)) {
    findings.add(path, "a tool result's content must be a string or blocks")
    return ""
  }
  const texts: Array<string> = []
  content.forEach((block: unknown, i) => {
    const typed = block as { type?: unknown; text?: unknown }
    if (typed?.type === "text" && typeof typed.text === "string") texts.push(typed.text)
    else findings.add(`${path}[${i}]`, `a ${String(typed?.type)} block in a tool result is not translated`)
  })
  return texts.join("\n")
}

const userTurn = (blocks: ReadonlyArray<ContentBlock>, path: string, findings: Findings): Array<ChatMessage> => {
  const results: Array<ChatMessage> = []
  const texts: Array<string> = []
  blocks.forEach((block, j) => {
    const at = `${path}[${j}]`
    switch (block.type) {
      case "text":
        texts.push(block.text ?? "")
        break
      case "tool_result": {
        const text = resultText(block.content, `${at}.content`, findings)
        results.push({ role: "tool", tool_call_id: block.tool_use_id ?? "", content: block.is_error === true ? `Error: ${text}` : text })
        break
      }
      default:
        findings.add(at, `a ${block.type} block is not translated for other providers`)
    }
  })
  return texts.length > 0 ? [...results, { role: "user", content: texts.join("\n") }] : results
}

const assistantTurn = (blocks: ReadonlyArray<ContentBlock>, path: string, findings: Findings): ChatMessage => {
  const texts: Array<string> = []
  const calls: Array<ToolCall> = []
  blocks.forEach((block, j) => {
    switch (block.type) {
      case "text":
        texts.push(block.text ?? "")
        break
      case "tool_use":
        calls.push({ id: block.id ?? "", type: "function", function: { name: block.name ?? "", arguments: JSON.stringify(block.input ?? {}) } })
        break
      case "thinking":
      case "redacted_thinking":
        // The model's own signed reasoning: only Anthropic takes it back.
        break
      default:
        findings.add(`${path}[${j}]`, `a ${block.type} block is not translated for other providers`)
    }
  })
  return { role: "assistant", content: texts.join("\n"), ...(calls.length > 0 ? { tool_calls: calls } : {}) }
}

/** A system turn between the others: its text blocks, as one system message where it stands. */
const systemTurn = (blocks: ReadonlyArray<ContentBlock>, path: string, findings: Findings): ReadonlyArray<ChatMessage> => {
  const texts: Array<string> = []
  blocks.forEach((block, j) => {
    if (block.type === "text") texts.push(block.text ?? "")
    else findings.add(`${path}[${j}]`, `a ${block.type} block in a system turn is not translated for other providers`)
  })
  return texts.length === 0 ? [] : [{ role: "system", content: texts.join("\n") }]
}

const turnOf = (message: MessageParam, i: number, findings: Findings): ReadonlyArray<ChatMessage> => {
  if (typeof message.content === "string") return [{ role: message.role, content: message.content }]
  const path = `messages[${i}].content`
  if (message.role === "system") return systemTurn(message.content, path, findings)
  return message.role === "user" ? userTurn(message.content, path, findings) : [assistantTurn(message.content, path, findings)]
}

const systemOf = (system: CountTokens["system"]): ReadonlyArray<ChatMessage> => {
  if (system === undefined) return []
  const text = typeof system === "string" ? system : system.map((block) => block.text).join("\n")
  return text.length === 0 ? [] : [{ role: "system", content: text }]
}

const toolsOf = (tools: CountTokens["tools"], findings: Findings): ReadonlyArray<ToolDefinition> | undefined =>
  tools?.flatMap((tool, i): ReadonlyArray<ToolDefinition> => {
    if (tool.type !== undefined && tool.type !== null && tool.type !== "custom") {
      findings.add(`tools[${i}]`, `the server tool ${tool.type} runs at Anthropic`)
      return []
    }
    return [{ type: "function", function: { name: tool.name, description: tool.description, parameters: tool.input_schema } }]
  })

const toolChoiceOf = (choice: CountTokens["tool_choice"]): ToolChoice | undefined => {
  switch (choice?.type) {
    case undefined:
      return undefined
    case "auto":
      return "auto"
    case "any":
      return "required"
    case "none":
      return "none"
    case "tool":
      return { type: "function", function: { name: choice.name } }
  }
}

/** A thinking budget as OpenAI's effort: Anthropic's minimum (1,024) is low, 16k and more high. */
export const effortOf = (thinking: CountTokens["thinking"]): ReasoningEffort | undefined => {
  if (thinking === undefined || thinking.type === "disabled") return undefined
  const budget = thinking.budget_tokens ?? 8192
  return budget < 4096 ? "low" : budget < 16384 ? "medium" : "high"
}

/** What only Anthropic has among the top-level fields (present and not null). */
const anthropicOnly = ["container", "mcp_servers", "context_management", "inference_geo", "compaction", "thread", "diagnostics"] as const
/** Of those, what the offline model can leave aside without its answer being other than asked. */
const offlineHonours: ReadonlySet<string> = new Set(["context_management", "inference_geo", "diagnostics", "compaction"])

/** `output_config.effort` as OpenAI's effort (Anthropic's `max` is beyond OpenAI's `xhigh`: the most there is). */
const configEffort = (effort: "low" | "medium" | "high" | "xhigh" | "max" | null | undefined): ReasoningEffort | undefined =>
  effort === null || effort === undefined ? undefined : effort === "max" ? "xhigh" : effort

export interface Translation {
  readonly messages: ReadonlyArray<ChatMessage>
  readonly options: CallOptions
  readonly unportable: ReadonlyArray<Unportable>
}

/** The conversation and options of a request (a `count_tokens` one has no output settings). */
export const translate = (payload: CountTokens | CreateMessage): Translation => {
  const findings = new Findings()
  const messages = [...systemOf(payload.system), ...payload.messages.flatMap((message, i) => turnOf(message, i, findings))]
  const full: Partial<CreateMessage> = payload
  if (payload.messages.at(-1)?.role === "assistant") {
    findings.add("messages", "a conversation that ends on an assistant turn (a prefill) is continued by Anthropic alone", true)
  }
  if (full.top_k !== undefined) findings.add("top_k", "other APIs have no top-k sampling", true)
  for (const field of anthropicOnly) {
    const value: unknown = (payload as Record<string, unknown>)[field]
    if (value !== undefined && value !== null) findings.add(field, "it is an Anthropic feature", offlineHonours.has(field))
  }
  const tools = toolsOf(payload.tools, findings)
  const choice = payload.tool_choice
  const parallel = choice !== undefined && choice.type !== "none" && choice.disable_parallel_tool_use === true ? false : undefined
  const userId = full.metadata?.user_id ?? undefined
  const format = payload.output_config?.format ?? payload.output_format
  const options: CallOptions = {
    top_p: full.top_p,
    stop: full.stop_sequences,
    tools,
    tool_choice: toolChoiceOf(choice),
    parallel_tool_calls: parallel,
    reasoning_effort: configEffort(payload.output_config?.effort) ?? effortOf(payload.thinking),
    user: userId,
    service_tier: full.service_tier === undefined ? undefined : full.service_tier === "auto" ? "auto" : "default",
    response_format: format == null ? undefined : { type: "json_schema", json_schema: { name: "output", schema: format.schema } }
  }
  return { messages, options, unportable: findings.unportable }
}

/** The `anthropic-*` headers to forward, lower-case, as sent. */
export const forwardedHeaders = (headers: AnthropicHeaders): Record<string, string> => ({
  ...(headers["anthropic-version"] === undefined ? {} : { "anthropic-version": headers["anthropic-version"] }),
  ...(headers["anthropic-beta"] === undefined ? {} : { "anthropic-beta": headers["anthropic-beta"] })
})

/**
 * The request for `Completions`: memories after the client's system (`after-system`), so that
 * the prefix Anthropic caches (tools, then system) is the client's own, turn after turn.
 */
export const toRequest = (scope: RequestScope, payload: CreateMessage, headers: AnthropicHeaders): Request => {
  const { messages, options, unportable } = translate(payload)
  return {
    scope,
    model: payload.model,
    messages,
    temperature: payload.temperature,
    maxOutputTokens: payload.max_tokens,
    memories: "after-system",
    options: { ...options, anthropic: { body: payload, headers: forwardedHeaders(headers), unportable } }
  }
}
