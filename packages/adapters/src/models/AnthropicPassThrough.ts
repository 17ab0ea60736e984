/**
 * A Messages API request sent on to Anthropic as the client sent it (`CallOptions.anthropic`):
 * every field of the client's body goes through untouched (block-level `cache_control`,
 * `thinking`, `top_k`, `metadata`, tools …) except what the call decides:
 *
 * - `model`: the catalog model's upstream name;
 * - `max_tokens`: the call's, perhaps lowered to what the credits cover (and a thinking budget
 *   lowered under it, since Anthropic wants `budget_tokens < max_tokens`);
 * - `stream: true`: the metered call reads a stream; a client that asked for none still gets a
 *   whole message from the server;
 * - `temperature`, only when the call's differs from the client's (an enforced low-risk cap),
 *   and not beside thinking, which Anthropic accepts only at its default temperature;
 * - Huddle's system messages (memories, `ChatMessage.source === "huddle"`), as one text block
 *   after the client's system blocks, so that the client's cached prefix (tools, then its
 *   system up to its `cache_control` breakpoint) is still the same prefix.
 *
 * The client's `anthropic-version` and `anthropic-beta` headers are forwarded unchanged.
 */
import type { AnthropicNative, JsonObject, ModelRequest } from "@huddle/domain/models/Model"

/** The headers of the client's request that Anthropic reads, forwarded as they came. */
export const forwardedHeaders = ["anthropic-version", "anthropic-beta"] as const

const isRecord = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/** The client's `system` (a string or blocks) with Huddle's instructions as a text block after it. */
const systemWith = (system: unknown, huddle: string): unknown => {
  if (huddle.length === 0) return system
  const block = { type: "text", text: huddle }
  if (Array.isArray(system)) return [...system, block]
  if (typeof system === "string" && system.length > 0) return [{ type: "text", text: system }, block]
  return [block]
}

/** Whether the client asked for extended thinking (`enabled`, or `adaptive` on newer models). */
const thinks = (thinking: unknown): boolean => isRecord(thinking) && thinking.type !== undefined && thinking.type !== "disabled"

/** A thinking budget must stay under `max_tokens`: lowered with it when the call lowers that. */
const thinkingWithin = (thinking: unknown, maxTokens: number): unknown => {
  if (!isRecord(thinking) || typeof thinking.budget_tokens !== "number" || thinking.budget_tokens < maxTokens) return thinking
  return { ...thinking, budget_tokens: Math.max(1, maxTokens - 1) }
}

/** The body of `POST /v1/messages` for a request the client sent in the Messages API's words. */
export const bodyOf = (request: ModelRequest, native: AnthropicNative): JsonObject => {
  const client = native.body
  const huddle = request.messages
    .filter((message) => message.role === "system" && message.source === "huddle")
    .map((message) => message.content)
    .join("\n\n")
  const body: { [key: string]: unknown } = {
    ...client,
    model: request.model.upstream_model ?? request.model.id,
    max_tokens: request.maxOutputTokens,
    stream: true
  }
  if (huddle.length > 0) body.system = systemWith(client.system, huddle)
  if (client.thinking !== undefined) body.thinking = thinkingWithin(client.thinking, request.maxOutputTokens)
  if (request.temperature !== undefined && request.temperature !== client.temperature && !thinks(client.thinking)) {
    body.temperature = request.temperature
  }
  return body
}

/** The client's Anthropic headers to forward, with the provider's API version when it sent none. */
export const headersOf = (native: AnthropicNative, defaultVersion: string): { readonly [name: string]: string } => {
  const out: { [name: string]: string } = { "anthropic-version": defaultVersion }
  for (const name of forwardedHeaders) {
    const value = native.headers[name]
    if (value !== undefined) out[name] = value
  }
  return out
}
