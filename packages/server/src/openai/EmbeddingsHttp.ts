/**
 * `POST /v1/embeddings`: OpenAI's wire to `Embeddings` and back; base64 vectors are
 * little-endian float32s, as the `openai` SDK decodes them.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Embeddings } from "@huddle/domain/answers/Embeddings"
import { CurrentPrincipal } from "@huddle/domain/identity/Principal"
import { RequestScopes } from "@huddle/domain/request/RequestScope"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { creditsChargedHeader, orgAsked } from "../shared/Headers.js"
import { reportContext } from "../shared/reportContext.js"
import type { EmbeddingList, EmbeddingRequest } from "./EmbeddingsApi.js"

/** The inputs one by one: a lone text or token array is one input. */
const inputsOf = (input: EmbeddingRequest["input"]): ReadonlyArray<string | ReadonlyArray<number>> =>
  typeof input === "string" || isTokenIds(input) ? [input] : input

const isTokenIds = (input: EmbeddingRequest["input"]): input is ReadonlyArray<number> => Array.isArray(input) && typeof input[0] === "number"

/** A vector as base64 of its little-endian float32s. */
export const toBase64 = (vector: ReadonlyArray<number>): string => {
  const bytes = Buffer.alloc(vector.length * 4)
  vector.forEach((x, i) => bytes.writeFloatLE(x, i * 4))
  return bytes.toString("base64")
}

export const EmbeddingsHttp = HttpApiBuilder.group(Api, "embeddings", (handlers) =>
  Effect.gen(function*() {
    const embeddings = yield* Embeddings
    const scopes = yield* RequestScopes

    return handlers.handle("createEmbedding", ({ headers, payload }) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const scope = yield* scopes.resolve(principal, { headerOrgId: orgAsked(headers) })
        yield* reportContext(scope)
        const base64 = payload.encoding_format === "base64"
        const result = yield* embeddings.create({
          scope,
          model: payload.model,
          input: inputsOf(payload.input),
          dimensions: payload.dimensions,
          encodingFormat: payload.encoding_format,
          user: payload.user
        })
        const tokens = result.settled.usage.input_tokens
        const body: typeof EmbeddingList.Encoded = {
          object: "list",
          data: result.vectors.map((vector, index) => ({ object: "embedding", index, embedding: base64 ? toBase64(vector) : vector })),
          model: result.model.id,
          usage: { prompt_tokens: tokens, total_tokens: tokens }
        }
        return HttpServerResponse.unsafeJson(body, { headers: { [creditsChargedHeader]: String(result.settled.charged) } })
      }))
  }))
