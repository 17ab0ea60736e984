/**
 * One embedding call as every provider sees it (`Provider.embed`): the texts (or token ids) to
 * embed with a catalog model of kind `embedding`, and the vectors and input tokens that come back.
 */
import { Data } from "effect"
import { type CatalogModel, estimateTokens } from "./Model.js"

/** One input: a text, or the token ids of one (OpenAI's `number[]`). */
export type EmbeddingInput = string | ReadonlyArray<number>

export interface EmbeddingRequest {
  readonly model: CatalogModel
  /** One vector comes back per input, in order. */
  readonly input: ReadonlyArray<EmbeddingInput>
  /** Fewer dimensions than the model's own, when the model can give them. */
  readonly dimensions?: number | undefined
  /** How an upstream is asked to send the vectors; they come back as numbers either way. */
  readonly encodingFormat?: "float" | "base64" | undefined
  /** An end-user id for the provider's abuse monitoring. */
  readonly user?: string | undefined
}

export interface Embedded {
  /** One vector per input, in the request's order. */
  readonly vectors: ReadonlyArray<ReadonlyArray<number>>
  /** The input tokens the provider counted (an estimate where it counts none). */
  readonly inputTokens: number
}

/**
 * The provider refuses the request as asked (too many `dimensions`, an input it cannot take),
 * naming the request field when it knows it: the client's 400, nothing charged.
 */
export class EmbeddingRefused extends Data.TaggedError("EmbeddingRefused")<{
  readonly param?: string | undefined
  readonly message: string
}> {}

/** The estimated tokens of one input: a text at about four characters a token, token ids as they are. */
export const estimateInputTokens = (input: EmbeddingInput): number =>
  typeof input === "string" ? estimateTokens(input) : input.length
