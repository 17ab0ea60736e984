/**
 * The offline provider's embeddings (`offline-embed`): deterministic, network-free vectors of
 * unit length in which texts that share words are closer, so that retrieval over them behaves
 * like retrieval over a real model's, if more coarsely.
 *
 * A text's features are its lower-cased words (weight 1) and the character trigrams of each
 * word padded with spaces (weight 1/2, so that `embedding` and `embeddings` share most of
 * theirs); token ids are features of their own (`#<id>`, and each pair of neighbours). Each
 * feature is hashed (FNV-1a) to one of the vector's dimensions (256, or fewer when `dimensions`
 * asks) with a sign from another bit of its hash (the hashing trick), and the sum is scaled to
 * length 1: every feature counts at any size (keeping the first of 256 would leave a short vector
 * a handful of features, often one). Above 256 is refused. Usage is `estimateTokens` of the
 * texts (token ids count one each).
 */
import { type Embedded, type EmbeddingInput, EmbeddingRefused, type EmbeddingRequest, estimateInputTokens } from "@huddle/domain/models/Embedding"
import { Effect } from "effect"
import { fnv1a } from "./Fnv1a.js"

/** The offline model's own size. */
export const dimensions = 256

const wordWeight = 1
const trigramWeight = 0.5

/** Words: runs of letters and digits, lower-cased. */
const wordsOf = (text: string): ReadonlyArray<string> => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []

const featuresOf = (input: EmbeddingInput): ReadonlyArray<readonly [string, number]> => {
  const features: Array<readonly [string, number]> = []
  if (typeof input !== "string") {
    input.forEach((id, i) => {
      features.push([`#${id}`, wordWeight])
      if (i > 0) features.push([`#${input[i - 1]}#${id}`, trigramWeight])
    })
    return features
  }
  for (const word of wordsOf(input)) {
    features.push([`w:${word}`, wordWeight])
    const padded = ` ${word} `
    for (let i = 0; i + 3 <= padded.length; i++) features.push([`t:${padded.slice(i, i + 3)}`, trigramWeight])
  }
  // A text of no words (punctuation, symbols) is its own one feature, never the zero vector.
  if (features.length === 0) features.push([`s:${input}`, wordWeight])
  return features
}

const normalised = (vector: Array<number>, fallback: string): Array<number> => {
  let norm = 0
  for (const x of vector) norm += x * x
  if (norm === 0) {
    // The features cancelled out: one dimension of its own, still of length 1.
    vector[fnv1a(fallback) % vector.length] = 1
    return vector
  }
  const scale = 1 / Math.sqrt(norm)
  return vector.map((x) => x * scale)
}

/** One input's vector of `size` dimensions (at most `dimensions`), of length 1. */
export const vectorOf = (input: EmbeddingInput, size: number = dimensions): ReadonlyArray<number> => {
  const vector = new Array<number>(size).fill(0)
  for (const [feature, weight] of featuresOf(input)) {
    const hash = fnv1a(feature)
    vector[hash % size]! += (hash & 0x80000000) === 0 ? weight : -weight
  }
  return normalised(vector, typeof input === "string" ? input : input.join(","))
}

export const embed = (request: EmbeddingRequest): Effect.Effect<Embedded, EmbeddingRefused> => {
  const size = request.dimensions ?? dimensions
  if (size < 1 || size > dimensions) {
    return Effect.fail(
      new EmbeddingRefused({ param: "dimensions", message: `${request.model.id} gives 1 to ${dimensions} dimensions; ${size} were asked for` })
    )
  }
  return Effect.sync(() => ({
    vectors: request.input.map((input) => vectorOf(input, size)),
    inputTokens: request.input.reduce((sum, input) => sum + estimateInputTokens(input), 0)
  }))
}
