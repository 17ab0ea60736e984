/**
 * `POST /v1/embeddings` on OpenAI's wire (the `openai` SDK's `embeddings.create`, LangChain's
 * `OpenAIEmbeddings`): inputs as a text, texts, token ids or arrays of them; vectors as floats
 * or base64 (little-endian float32, what the SDK asks for by default). Errors in OpenAI's
 * envelope, as for chat completions; an unknown field is refused naming it (Api.ts).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Line, Text } from "@huddle/domain/shared/WireString"
import { Schema } from "effect"
import * as Envelope from "../shared/Envelope.js"
import { Dialect } from "../shared/ErrorTable.js"
import { OrgHeaders } from "../shared/Headers.js"
import * as Idempotency from "../shared/Idempotency.js"
import * as RateLimit from "../shared/RateLimit.js"
import { Authenticated } from "../shared/Security.js"

const TokenIds = Schema.Array(Schema.NonNegativeInt).pipe(Schema.minItems(1))

export const EmbeddingRequest = Schema.Struct({
  model: Line.pipe(Schema.minLength(1), Schema.maxLength(128)),
  input: Schema.Union(Text, Schema.Array(Text).pipe(Schema.minItems(1)), TokenIds, Schema.Array(TokenIds).pipe(Schema.minItems(1))).annotations({
    description: "A text, texts, the token ids of one text, or of several; at most 2048 inputs, none empty"
  }),
  encoding_format: Schema.optional(Schema.Literal("float", "base64")),
  dimensions: Schema.optional(Schema.Int.pipe(Schema.positive())),
  user: Schema.optional(Line)
})
export type EmbeddingRequest = typeof EmbeddingRequest.Type

export const Embedding = Schema.Struct({
  object: Schema.Literal("embedding"),
  index: Schema.Int,
  embedding: Schema.Union(Schema.Array(Schema.Number), Schema.String).annotations({
    description: "The vector: numbers, or with `encoding_format: \"base64\"` its little-endian float32s in base64"
  })
})

export const EmbeddingList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(Embedding),
  model: Schema.String,
  usage: Schema.Struct({ prompt_tokens: Schema.Int, total_tokens: Schema.Int })
}).annotations({ identifier: "EmbeddingList" })

export class EmbeddingsApi extends HttpApiGroup.make("embeddings")
  .add(
    HttpApiEndpoint.post("createEmbedding", "/embeddings")
      .annotate(OpenApi.Summary, "Create embeddings")
      .annotateContext(Idempotency.keyed)
      .annotate(RateLimit.Class, "chat")
      .setPayload(EmbeddingRequest)
      .setHeaders(OrgHeaders)
      .addSuccess(EmbeddingList)
      .annotate(
        OpenApi.Description,
        "OpenAI-compatible embeddings. `model` is a catalog model of kind `embedding` (`offline-embed` on a fresh checkout; `GET /v1/models` lists them with the chat models); a chat model, a tier or a council is 404 naming `model`. `dimensions` asks for shorter vectors (the offline model gives at most 256). The worst case — the estimated input tokens with headroom at the model's input price — is reserved before the model is called and settled to the tokens it counted (header `Huddle-Credits-Charged`); an enforced tier ceiling applies to the model's tier, and the organization's pool pays as it does for chat completions. A model that fails is 502 `UPSTREAM_UNAVAILABLE`, nothing charged. Errors use OpenAI's envelope `{\"error\": {\"message\", \"type\", \"param\", \"code\"}}`."
      )
  )
  .addError(Envelope.NotFound)
  .addError(Envelope.InsufficientCredits)
  .addError(Envelope.PolicyViolation)
  .addError(Envelope.UpstreamUnavailable)
  .middleware(Idempotency.Idempotent)
  .middleware(RateLimit.RateLimited)
  .middleware(Authenticated)
  .annotate(OpenApi.Title, "Embeddings")
  .annotate(OpenApi.Description, "OpenAI-compatible embeddings, in OpenAI's wire format and error envelope.")
  .annotate(Dialect, "openai")
{}
