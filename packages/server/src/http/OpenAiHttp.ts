/**
 * The OpenAI-compatible endpoints: translation between OpenAI's wire format and `Completions`.
 *
 * A streamed answer is held back until the model's first output (or its end), so that anything
 * failing before it — a refusal, no credits, every model failing — is still a plain HTTP error
 * that SDKs raise as such. The chunks are written as they come, with hand-built JSON: this is
 * the hot path.
 */
import { randomUUID } from "node:crypto"
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import type { UpstreamUnavailable } from "@huddle/domain/Errors"
import type { ChatMessage } from "@huddle/domain/Model"
import { CurrentPrincipal, type Principal } from "@huddle/domain/Principal"
import { Completions, type Event, type Listed, type Request, type Settled } from "@huddle/domain/services/Completions"
import { RequestContext } from "@huddle/domain/services/RequestContext"
import { Chunk, Clock, Effect, Either, ExecutionStrategy, Exit, Option, Scope, Stream } from "effect"
import { Api } from "../Api.js"
import type { ChatCompletion, ChatCompletionRequest, Content, FinishReason, Message, ModelObject } from "../api/OpenAiApi.js"
import * as OpenAiErrors from "../api/OpenAiErrors.js"

type Completion = typeof ChatCompletion.Encoded
type Finish = typeof FinishReason.Type

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

const toRequest = (principal: Principal, orgId: string | null, payload: ChatCompletionRequest): Request => ({
  principal,
  orgId,
  workspaceId: null,
  model: payload.model,
  messages: payload.messages.map(toMessage),
  temperature: payload.temperature ?? undefined,
  maxOutputTokens: payload.max_completion_tokens ?? payload.max_tokens ?? undefined,
  options: {
    top_p: payload.top_p ?? undefined,
    stop: payload.stop ?? undefined,
    seed: payload.seed ?? undefined,
    response_format: payload.response_format,
    tools: payload.tools,
    tool_choice: payload.tool_choice,
    user: payload.user
  }
})

/** Providers' finish reasons (Anthropic's included) in OpenAI's words. */
export const finishReason = (reason: string): Finish => {
  switch (reason) {
    case "stop":
    case "length":
    case "tool_calls":
    case "content_filter":
      return reason
    case "max_tokens":
      return "length"
    case "tool_use":
    case "function_call":
      return "tool_calls"
    default:
      return "stop"
  }
}

const usageOf = ({ usage }: Settled) => ({
  prompt_tokens: usage.input_tokens,
  completion_tokens: usage.output_tokens,
  total_tokens: usage.input_tokens + usage.output_tokens
})

const isOutput = (event: Event) => event._tag === "Delta" || event._tag === "ToolCallDelta"

const newId = () => `chatcmpl-${randomUUID().replace(/-/g, "")}`

interface Call {
  id: string
  name: string
  arguments: string
}

/** The whole answer, as `chat.completion`. */
const collect = (events: Stream.Stream<Event, UpstreamUnavailable>, id: string, created: number, first: string) =>
  Effect.map(
    Stream.runFold(
      events,
      { model: first, text: "", calls: [] as Array<Call | undefined>, finish: "stop" as Finish, settled: undefined as Settled | undefined },
      (acc, event) => {
        switch (event._tag) {
          case "Answering":
            acc.model = event.model.id
            break
          case "Delta":
            acc.text += event.text
            break
          case "ToolCallDelta": {
            const call = acc.calls[event.index] ??= { id: "", name: "", arguments: "" }
            if (event.id !== undefined) call.id = event.id
            if (event.name !== undefined) call.name = event.name
            if (event.arguments !== undefined) call.arguments += event.arguments
            break
          }
          case "Finish":
            acc.finish = finishReason(event.reason)
            break
          case "Settled":
            acc.settled = event
            break
        }
        return acc
      }
    ),
    (acc) => {
      const calls = acc.calls.filter((call) => call !== undefined)
      const body: Completion = {
        id,
        object: "chat.completion",
        created,
        model: acc.model,
        choices: [{
          index: 0,
          message: {
            role: "assistant",
            content: calls.length > 0 && acc.text.length === 0 ? null : acc.text,
            refusal: null,
            ...(calls.length === 0
              ? {}
              : { tool_calls: calls.map((call) => ({ id: call.id, type: "function" as const, function: { name: call.name, arguments: call.arguments } })) })
          },
          logprobs: null,
          finish_reason: acc.finish
        }],
        usage: acc.settled === undefined ? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } : usageOf(acc.settled)
      }
      return HttpServerResponse.unsafeJson(body, {
        headers: { "huddle-credits-charged": String(acc.settled?.charged ?? 0) }
      })
    }
  )

const encoder = new TextEncoder()
const json = JSON.stringify

/** Turns events into `chat.completion.chunk` frames; the role goes with the first output. */
const chunkEncoder = (id: string, created: number, firstModel: string, includeUsage: boolean) => {
  let prefix = ""
  const setModel = (model: string) => {
    prefix = `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${json(model)},"choices":[`
  }
  setModel(firstModel)
  // OpenAI puts `"usage":null` on every chunk when usage was asked for.
  const suffix = includeUsage ? `],"usage":null}\n\n` : "]}\n\n"
  let role = `"role":"assistant",`
  const choice = (delta: string, finish: string | null) =>
    `${prefix}{"index":0,"delta":{${delta}},"logprobs":null,"finish_reason":${finish === null ? "null" : `"${finish}"`}}${suffix}`

  const frame = (event: Event): string => {
    switch (event._tag) {
      case "Answering":
        // Only before any output: the router never switches models after it.
        setModel(event.model.id)
        return ""
      case "Delta": {
        const out = choice(`${role}"content":${json(event.text)}`, null)
        role = ""
        return out
      }
      case "ToolCallDelta": {
        const head = event.id === undefined ? "" : `,"id":${json(event.id)},"type":"function"`
        const name = event.name === undefined ? "" : `"name":${json(event.name)},`
        const out = choice(
          `${role === "" ? "" : `${role}"content":null,`}"tool_calls":[{"index":${event.index}${head},"function":{${name}"arguments":${json(event.arguments ?? "")}}}]`,
          null
        )
        role = ""
        return out
      }
      case "Finish": {
        const opening = role === "" ? "" : choice(`${role}"content":""`, null)
        role = ""
        return opening + choice("", finishReason(event.reason))
      }
      case "Settled":
        return (includeUsage
          ? `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${json(event.model.id)},"choices":[],"usage":${json(usageOf(event))}}\n\n`
          : "") + "data: [DONE]\n\n"
    }
  }

  return {
    frames: (events: Chunk.Chunk<Event>): Chunk.Chunk<Uint8Array> => {
      let text = ""
      for (const event of events) text += frame(event)
      return text.length === 0 ? Chunk.empty() : Chunk.of(encoder.encode(text))
    },
    /** A failure after the stream began: OpenAI's SDKs raise an `error` chunk as an APIError. */
    error: (error: unknown): Uint8Array => encoder.encode(`data: ${json({ error: OpenAiErrors.fromError(error).body.error })}\n\n`)
  }
}

const toModelObject = (created: number) => (model: Listed): typeof ModelObject.Type => ({
  id: model.id,
  object: "model",
  created,
  owned_by: model.owned_by
})

export const OpenAiHttp = HttpApiBuilder.group(Api, "openai", (handlers) =>
  Effect.gen(function*() {
    const completions = yield* Completions
    const requestContext = yield* RequestContext
    // The catalog has no dates of its own: its models are as old as this process.
    const listedAt = Math.floor((yield* Clock.currentTimeMillis) / 1000)

    const orgOf = (principal: Principal, headers: { readonly "openai-organization"?: string | undefined; readonly "huddle-organization"?: string | undefined }) =>
      Effect.map(
        requestContext.resolve(principal, { headerOrgId: headers["huddle-organization"] ?? headers["openai-organization"] }),
        (context) => context.orgId
      )

    const streamed = (request: Request, id: string, created: number, includeUsage: boolean) =>
      Effect.gen(function*() {
        // The answer's resources (reservation, upstream connection) live until the stream ends,
        // at the latest until the request's own scope closes.
        const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
        const { ended, head, model, pull } = yield* Effect.gen(function*() {
          const started = yield* completions.start(request)
          const pull = yield* Stream.toPull(started.events)
          const head: Array<Event> = []
          let ended = false
          while (!ended && !head.some(isOutput)) {
            const next = yield* Effect.either(pull)
            if (Either.isRight(next)) head.push(...next.right)
            else if (Option.isSome(next.left)) return yield* Effect.fail(next.left.value)
            else ended = true
          }
          return { ended, head, model: started.model.id, pull }
        }).pipe(
          Scope.extend(scope),
          Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Scope.close(scope, exit)))
        )
        const chunks = chunkEncoder(id, created, model, includeUsage)
        const rest: Stream.Stream<Event, UpstreamUnavailable> = ended ? Stream.empty : Stream.repeatEffectChunkOption(pull)
        const body = Stream.concat(Stream.fromChunk(Chunk.unsafeFromArray(head)), rest).pipe(
          Stream.mapChunks(chunks.frames),
          Stream.catchAll((error) => Stream.make(chunks.error(error))),
          Stream.ensuring(Scope.close(scope, Exit.void))
        )
        return HttpServerResponse.stream(body, {
          contentType: "text/event-stream",
          headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
        })
      })

    return handlers
      .handle("createChatCompletion", ({ headers, payload }) =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          const orgId = yield* orgOf(principal, headers)
          const request = toRequest(principal, orgId, payload)
          const id = newId()
          const created = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          if (payload.stream === true) {
            return yield* streamed(request, id, created, payload.stream_options?.include_usage === true)
          }
          return yield* Effect.scoped(
            Effect.flatMap(completions.start(request), (started) => collect(started.events, id, created, started.model.id))
          )
        }))
      .handle("listModels", ({ headers }) =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          const listed = yield* completions.list(principal, yield* orgOf(principal, headers))
          return { object: "list" as const, data: listed.map(toModelObject(listedAt)) }
        }))
      .handle("retrieveModel", ({ headers, path }) =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          const found = yield* completions.find(principal, yield* orgOf(principal, headers), path.model)
          return toModelObject(listedAt)(found)
        }))
  }))
