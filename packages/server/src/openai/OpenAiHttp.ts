/**
 * The OpenAI-compatible endpoints: translation between OpenAI's wire format and `Completions`.
 * A streamed answer goes out through `EventStream` in the OpenAI dialect.
 */
import { randomUUID } from "node:crypto"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { ChatMessage } from "@huddle/domain/models/Model"
import { CurrentPrincipal } from "@huddle/domain/identity/Principal"
import { Completions, type Listed, type Request } from "@huddle/domain/answers/Completions"
import { type RequestScope, RequestScopes } from "@huddle/domain/request/RequestScope"
import { Clock, Effect } from "effect"
import { Api } from "../Api.js"
import { asksAnthropic, modelInfo, modelList } from "../anthropic/AnthropicModels.js"
import * as EventStream from "../shared/EventStream.js"
import { orgAsked, type OrgHeaders } from "../shared/Headers.js"
import { reportContext } from "../shared/reportContext.js"
import type { ChatCompletionRequest, Content, Message, ModelObject } from "./OpenAiApi.js"
import * as OpenAiDialect from "./OpenAiDialect.js"

const textOf = (content: typeof Content.Type | null | undefined): string =>
  content === null || content === undefined
    ? ""
    : typeof content === "string"
    ? content
    : content.map((part) => part.text ?? "").join("\n")

/** `developer` is OpenAI's newer name for `system`; every provider understands the latter. */
const toMessage = (message: Message): ChatMessage => ({
  role: message.role === "developer" ? "system" : message.role,
  content: textOf(message.content),
  name: message.name,
  tool_calls: message.tool_calls,
  tool_call_id: message.tool_call_id
})

const toRequest = (scope: RequestScope, payload: ChatCompletionRequest): Request => ({
  scope,
  model: payload.model,
  messages: payload.messages.map(toMessage),
  temperature: payload.temperature ?? undefined,
  maxOutputTokens: payload.max_completion_tokens ?? payload.max_tokens ?? undefined,
  options: {
    top_p: payload.top_p ?? undefined,
    stop: payload.stop ?? undefined,
    seed: payload.seed ?? undefined,
    presence_penalty: payload.presence_penalty ?? undefined,
    frequency_penalty: payload.frequency_penalty ?? undefined,
    logit_bias: payload.logit_bias ?? undefined,
    response_format: payload.response_format,
    tools: payload.tools,
    tool_choice: payload.tool_choice,
    parallel_tool_calls: payload.parallel_tool_calls ?? undefined,
    reasoning_effort: payload.reasoning_effort ?? undefined,
    verbosity: payload.verbosity ?? undefined,
    // The schema lets only the standard tier's names through.
    service_tier: payload.service_tier === "auto" || payload.service_tier === "default" ? payload.service_tier : undefined,
    user: payload.user,
    safety_identifier: payload.safety_identifier ?? undefined,
    prompt_cache_key: payload.prompt_cache_key ?? undefined
  }
})

const newId = () => `chatcmpl-${randomUUID().replace(/-/g, "")}`

const toModelObject = (created: number) => (model: Listed): typeof ModelObject.Type => ({
  id: model.id,
  object: "model",
  created,
  owned_by: model.owned_by,
  ...(model.pricing === undefined ? {} : { pricing: model.pricing })
})

export const OpenAiHttp = HttpApiBuilder.group(Api, "openai", (handlers) =>
  Effect.gen(function*() {
    const completions = yield* Completions
    const scopes = yield* RequestScopes
    // The catalog has no dates of its own: its models are as old as this process.
    const listedAt = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    const listedIso = new Date(listedAt * 1000).toISOString()

    /** The request's scope; the response says which context it ran in. */
    const scopeOf = (headers: typeof OrgHeaders.Type) =>
      Effect.flatMap(CurrentPrincipal, (principal) => scopes.resolve(principal, { headerOrgId: orgAsked(headers) })).pipe(
        Effect.tap(reportContext)
      )

    return handlers
      .handle("createChatCompletion", ({ headers, payload }) =>
        Effect.gen(function*() {
          const events = completions.open(toRequest(yield* scopeOf(headers), payload))
          const id = newId()
          const created = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          return payload.stream === true
            ? yield* EventStream.respond(
              events,
              OpenAiDialect.dialect(id, created, payload.model, payload.stream_options?.include_usage === true)
            )
            : yield* OpenAiDialect.completion(events, id, created, payload.model)
        }))
      // An Anthropic client (it sends `anthropic-version`) gets the same models in Anthropic's shape.
      .handle("listModels", ({ headers }) =>
        Effect.gen(function*() {
          const listed = completions.list(yield* scopeOf(headers))
          return asksAnthropic((yield* HttpServerRequest.HttpServerRequest).headers)
            ? HttpServerResponse.unsafeJson(modelList(listed, listedIso))
            : { object: "list" as const, data: listed.map(toModelObject(listedAt)) }
        }))
      .handle("retrieveModel", ({ headers, path }) =>
        Effect.gen(function*() {
          const found = yield* completions.find(yield* scopeOf(headers), path.model)
          return asksAnthropic((yield* HttpServerRequest.HttpServerRequest).headers)
            ? HttpServerResponse.unsafeJson(modelInfo(listedIso)(found))
            : toModelObject(listedAt)(found)
        }))
  }))
