/**
 * `POST /v1/responses`: translation between OpenAI's Responses format and `Completions` (the
 * same metered call as a chat completion). A streamed answer goes out through `EventStream` in
 * the Responses dialect.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { CurrentPrincipal } from "@huddle/domain/identity/Principal"
import { Completions, type Request } from "@huddle/domain/answers/Completions"
import type { CallOptions, ChatMessage, ResponseFormat } from "@huddle/domain/models/Model"
import type { RequestScope } from "@huddle/domain/request/RequestScope"
import { RequestScopes } from "@huddle/domain/request/RequestScope"
import { InvalidRequest } from "@huddle/domain/shared/Errors"
import { Clock, Effect } from "effect"
import { mapOpenedError } from "@huddle/domain/shared/Streams"
import { Api } from "../Api.js"
import * as EventStream from "../shared/EventStream.js"
import { orgAsked } from "../shared/Headers.js"
import { reportContext } from "../shared/reportContext.js"
import type { CreateResponse, InputItem, TextFormat } from "./ResponsesApi.js"
import * as ResponsesDialect from "./ResponsesDialect.js"

const textOf = (content: string | ReadonlyArray<{ readonly text: string }>): string =>
  typeof content === "string" ? content : content.map((part) => part.text).join("\n")

/** Input items as chat messages: a function call is an assistant turn's tool call, its output a tool turn. */
const toMessages = (input: CreateResponse["input"], instructions: string | null | undefined): ReadonlyArray<ChatMessage> => {
  const messages: Array<ChatMessage> = []
  if (instructions !== undefined && instructions !== null) messages.push({ role: "system", content: instructions })
  if (typeof input === "string") return [...messages, { role: "user", content: input }]
  for (const item of input as ReadonlyArray<InputItem>) {
    switch (item.type) {
      case "function_call": {
        const call = { id: item.call_id, type: "function" as const, function: { name: item.name, arguments: item.arguments } }
        const last = messages.at(-1)
        // Parallel calls of one turn come as consecutive items: one assistant turn holds them all.
        if (last?.role === "assistant" && last.tool_calls !== undefined && last.content === "") {
          messages[messages.length - 1] = { ...last, tool_calls: [...last.tool_calls, call] }
        } else {
          messages.push({ role: "assistant", content: "", tool_calls: [call] })
        }
        break
      }
      case "function_call_output":
        messages.push({ role: "tool", content: item.output, tool_call_id: item.call_id })
        break
      default:
        messages.push({ role: item.role === "developer" ? "system" : item.role, content: textOf(item.content) })
    }
  }
  return messages
}

const toFormat = (format: typeof TextFormat.Type | undefined): ResponseFormat | undefined => {
  if (format === undefined) return undefined
  switch (format.type) {
    case "text":
    case "json_object":
      return { type: format.type }
    case "json_schema":
      return {
        type: "json_schema",
        json_schema: {
          name: format.name,
          schema: format.schema,
          ...(format.description === undefined ? {} : { description: format.description }),
          ...(format.strict === undefined || format.strict === null ? {} : { strict: format.strict })
        }
      }
  }
}

const toRequest = (scope: RequestScope, payload: CreateResponse): Request => {
  const options: CallOptions = {
    top_p: payload.top_p ?? undefined,
    user: payload.user,
    response_format: toFormat(payload.text?.format),
    tools: payload.tools?.map((tool) => ({
      type: "function" as const,
      function: {
        name: tool.name,
        description: tool.description ?? undefined,
        parameters: tool.parameters ?? undefined,
        strict: tool.strict ?? undefined
      }
    })),
    tool_choice: payload.tool_choice === undefined
      ? undefined
      : typeof payload.tool_choice === "string"
      ? payload.tool_choice
      : { type: "function", function: { name: payload.tool_choice.name } }
  }
  return {
    scope,
    model: payload.model,
    messages: toMessages(payload.input, payload.instructions),
    temperature: payload.temperature ?? undefined,
    maxOutputTokens: payload.max_output_tokens ?? undefined,
    options
  }
}

/** A refusal names the parameter as this API spells it: `response_format` is `text.format` here. */
const inResponsesTerms = <E>(error: E): E | InvalidRequest =>
  error instanceof InvalidRequest && error.field === "response_format"
    ? new InvalidRequest({ message: error.message.replace("`response_format`", "`text.format`"), field: "text.format" })
    : error

export const ResponsesHttp = HttpApiBuilder.group(Api, "responses", (handlers) =>
  Effect.gen(function*() {
    const completions = yield* Completions
    const scopes = yield* RequestScopes

    return handlers.handle("createResponse", ({ headers, payload }) =>
      Effect.gen(function*() {
        const scope = yield* scopes.resolve(yield* CurrentPrincipal, { headerOrgId: orgAsked(headers) })
        yield* reportContext(scope)
        const events = mapOpenedError(completions.open(toRequest(scope, payload)), inResponsesTerms)
        const meta: ResponsesDialect.Meta = {
          id: ResponsesDialect.newId(),
          createdAt: Math.floor((yield* Clock.currentTimeMillis) / 1000),
          request: payload
        }
        return payload.stream === true
          ? yield* EventStream.respond(events, ResponsesDialect.dialect(meta))
          : yield* ResponsesDialect.response(events, meta)
      }))
  }))
