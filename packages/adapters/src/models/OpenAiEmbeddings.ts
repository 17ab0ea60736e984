/**
 * Embeddings through an OpenAI-compatible server (`POST <baseUrl>/embeddings`): the request's
 * inputs, its `dimensions`, `encoding_format` and `user` sent as they are, `model` the catalog's
 * upstream name; the vectors read back as numbers (base64 ones decoded: little-endian float32,
 * as OpenAI sends them) and the input tokens from `usage.prompt_tokens` (the estimate when absent).
 *
 * A 400 that names a `param` (OpenAI's envelope) is the client's mistake, refused naming it;
 * other failures are `ProviderFailure`s as a chat call's would be. No retries (see the chat
 * provider's comment).
 */
import { type Embedded, EmbeddingRefused, type EmbeddingRequest, estimateInputTokens } from "@huddle/domain/models/Embedding"
import type { ProviderFailure } from "@huddle/domain/models/ModelProviders"
import { Duration, Effect, Either, Schema } from "effect"
import type { Dispatcher } from "undici"
import * as UpstreamFailures from "./UpstreamFailures.js"

const EmbeddingResponse = Schema.Struct({
  data: Schema.Array(Schema.Struct({
    index: Schema.NonNegativeInt,
    embedding: Schema.Union(Schema.Array(Schema.Number), Schema.String)
  })),
  usage: Schema.optional(Schema.NullOr(Schema.Struct({ prompt_tokens: Schema.NonNegativeInt })))
})

const decodeResponse = Schema.decodeUnknownEither(Schema.parseJson(EmbeddingResponse))

/** A base64 vector as the OpenAI SDK decodes it: little-endian float32s. */
export const fromBase64 = (text: string): ReadonlyArray<number> => {
  const bytes = Buffer.from(text, "base64")
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const out = new Array<number>(Math.floor(bytes.byteLength / 4))
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true)
  return out
}

/** The `param` of an OpenAI error body, if it names one. */
const paramOf = (body: string): string | undefined => {
  try {
    const json: unknown = JSON.parse(body)
    if (typeof json === "object" && json !== null && "error" in json && typeof json.error === "object" && json.error !== null) {
      const param = "param" in json.error ? json.error.param : undefined
      return typeof param === "string" && param.length > 0 ? param : undefined
    }
  } catch {
    // not JSON: no param
  }
  return undefined
}

export interface Target {
  readonly provider: string
  readonly url: URL
  readonly headers: Readonly<Record<string, string>>
  readonly secret: UpstreamFailures.Call["secret"]
  readonly timeout: Duration.Duration
  readonly dispatcher: Dispatcher
}

export const embed = (target: Target) => (request: EmbeddingRequest): Effect.Effect<Embedded, ProviderFailure | EmbeddingRefused> => {
  const call: UpstreamFailures.Call = { provider: target.provider, model: request.model.id, secret: target.secret, timeout: target.timeout }
  const body = {
    model: request.model.upstream_model ?? request.model.id,
    input: request.input,
    ...(request.encodingFormat === undefined ? {} : { encoding_format: request.encodingFormat }),
    ...(request.dimensions === undefined ? {} : { dimensions: request.dimensions }),
    ...(request.user === undefined ? {} : { user: request.user })
  }
  const millis = Duration.toMillis(target.timeout)
  return Effect.gen(function*() {
    const response = yield* Effect.tryPromise({
      try: (signal) =>
        target.dispatcher.request({
          origin: target.url.origin,
          path: target.url.pathname,
          method: "POST",
          headers: target.headers,
          body: JSON.stringify(body),
          signal,
          headersTimeout: millis,
          bodyTimeout: millis
        }).then(async (answer) => ({ status: answer.statusCode, headers: answer.headers, text: await answer.body.text() })),
      catch: (error) => UpstreamFailures.transportFailure(call, error instanceof Error ? error : new Error(String(error)), undefined)
    })
    if (response.status < 200 || response.status > 299) {
      const param = response.status === 400 ? paramOf(response.text) : undefined
      if (param !== undefined) {
        return yield* new EmbeddingRefused({ param, message: UpstreamFailures.clean(call, UpstreamFailures.errorMessageOf(response.text)) })
      }
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) headers[name] = String(value)
      return yield* Effect.flip(UpstreamFailures.statusFailure(call, response.status, headers, response.text))
    }
    const decoded = decodeResponse(response.text)
    if (Either.isLeft(decoded)) return yield* UpstreamFailures.failure(call, "bad_response", `unexpected embeddings response: ${decoded.left.message}`)
    const data = [...decoded.right.data].sort((a, b) => a.index - b.index)
    if (data.length !== request.input.length || data.some((item, i) => item.index !== i)) {
      return yield* UpstreamFailures.failure(call, "bad_response", `${data.length} embeddings came back for ${request.input.length} inputs`)
    }
    return {
      vectors: data.map((item) => typeof item.embedding === "string" ? fromBase64(item.embedding) : item.embedding),
      // A server that counts nothing (some local ones) is charged the estimate, as a chat call would be.
      inputTokens: decoded.right.usage?.prompt_tokens ??
        request.input.reduce((sum, input) => sum + estimateInputTokens(input), 0)
    }
  })
}
