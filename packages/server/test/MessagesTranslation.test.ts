/**
 * What the Messages API hands the answer core: the request decoded as the client sent it (nested
 * fields the schema does not name kept, for an Anthropic upstream), the `anthropic-*` headers,
 * and what only Anthropic can honour, by name.
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { toRequest } from "@huddle/server/anthropic/MessagesTranslation"
import { CreateMessage } from "@huddle/server/anthropic/MessagesWire"
import type { RequestScope } from "@huddle/domain/request/RequestScope"

const decode = Schema.decodeUnknownSync(CreateMessage, { onExcessProperty: "error" })
const scope = {} as RequestScope

describe("the Messages API's translation", () => {
  it("keeps the body as sent, with cache_control, citations and betas' fields, and forwards the anthropic headers", () => {
    const body = {
      model: "claude-sonnet-4-5",
      max_tokens: 1024,
      system: [{ type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral", ttl: "1h" } }],
      tools: [{ name: "Bash", input_schema: { type: "object" }, cache_control: { type: "ephemeral" }, eager_input_streaming: true }],
      messages: [{
        role: "user",
        content: [
          { type: "text", text: "hi", cache_control: { type: "ephemeral" }, citations: null },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }
        ]
      }],
      thinking: { type: "enabled", budget_tokens: 2048, display: "summarized" },
      context_management: { edits: [{ type: "clear_tool_uses_20250919" }] },
      top_k: 3,
      metadata: { user_id: "u1" }
    }
    const request = toRequest(scope, decode(body), { "anthropic-version": "2023-06-01", "anthropic-beta": "claude-code-20250219,context-management-2025-06-27" })
    const native = request.options?.anthropic
    expect(native?.body).toEqual(body)
    expect(native?.headers).toEqual({ "anthropic-version": "2023-06-01", "anthropic-beta": "claude-code-20250219,context-management-2025-06-27" })
    expect(native?.unportable.map(({ offline, param }) => [param, offline === true])).toEqual([
      ["messages[0].content[1]", false],
      ["top_k", true],
      ["context_management", true]
    ])
    expect(request.memories).toBe("after-system")
    expect(request.messages).toEqual([{ role: "system", content: "You are Claude Code." }, { role: "user", content: "hi" }])
    expect(request.options).toMatchObject({ reasoning_effort: "low", user: "u1" })
  })
})
