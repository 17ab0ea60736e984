/**
 * What a metered call may cost at most (`MeteredCall.quote`): the estimated input, the output cap
 * and the worst case reserved for them, and how a quote is lowered to what a payer's credits
 * cover (`lowerQuote`).
 */
import { Effect } from "effect"
import { InvalidRequest } from "../shared/Errors.js"
import { type CallOptions, type CatalogModel, type ChatMessage, costOf, estimateTokens, promptRateOf } from "./Model.js"

/** What a call may cost at most, and what that was worked out from. */
export interface Quote {
  /** The estimated input tokens (messages with their framing, tool definitions). */
  readonly estimatedInput: number
  /** The most output tokens asked of any candidate (each model is capped at its own limit too). */
  readonly maxOutputTokens: number
  /** The reservation: the dearest candidate at the estimated input with headroom and its output cap. */
  readonly worstCase: number
  /**
   * The fewest output tokens worth answering with (see `minimumAnswerTokens`): when the payer's
   * credits cannot cover `worstCase` but can cover this many, `run` lowers `maxOutputTokens` to
   * what they pay for instead of refusing. Absent, or not below `maxOutputTokens`: no lowering.
   */
  readonly floorOutputTokens?: number | undefined
  /** Set on a quote `run` lowered: the `maxOutputTokens` asked for. */
  readonly loweredFrom?: number | undefined
}

/** Tokens of framing per message and for priming the reply (OpenAI's counting). */
const perMessage = 4
const perReply = 3

/**
 * Headroom on the estimated input in the reservation: a settlement never charges more than was
 * reserved, so the reservation must cover a real token count somewhat above the estimate.
 */
export const inputMargin = 1.25

/**
 * The fewest output tokens a lowered call may be left with (or what was asked, when that is
 * fewer): below this an answer is mostly cut off, so the request is refused (402) rather than
 * charged for a stub.
 */
export const minimumAnswerTokens = 256

/** The floor of a call asking for `maxOutputTokens` (see `Quote.floorOutputTokens`). */
export const floorOf = (maxOutputTokens: number): number => Math.min(maxOutputTokens, minimumAnswerTokens)

/** The estimated input tokens of a call: messages with their framing, and the tool definitions. */
export const estimateInput = (messages: ReadonlyArray<ChatMessage>, options: CallOptions | undefined): number => {
  let tokens = perReply
  for (const message of messages) {
    tokens += perMessage + estimateTokens(message.content)
    if (message.tool_calls !== undefined) tokens += estimateTokens(JSON.stringify(message.tool_calls))
    if (message.name !== undefined) tokens += estimateTokens(message.name)
  }
  if (options?.tools !== undefined) tokens += estimateTokens(JSON.stringify(options.tools))
  if (options?.response_format?.type === "json_schema") tokens += estimateTokens(JSON.stringify(options.response_format))
  return tokens
}

/**
 * The most one call to `model` can be charged for `estimatedInput` with headroom and
 * `outputTokens`: every prompt token at the dearest of its input and cache rates, since the
 * provider decides how much of the prompt it reads from or writes to its cache.
 */
export const worstCallOf = (model: CatalogModel, estimatedInput: number, outputTokens: number): number =>
  costOf(
    { pricing: { input: promptRateOf(model), output: model.pricing.output } },
    { input_tokens: Math.ceil(estimatedInput * inputMargin), output_tokens: outputTokens }
  )

/** The reservation a call to any of `candidates` needs: the dearest of them at its worst. */
export const worstCaseOf = (candidates: ReadonlyArray<CatalogModel>, estimatedInput: number, maxOutputTokens: number): number =>
  Math.max(1, ...candidates.map((model) => worstCallOf(model, estimatedInput, Math.min(maxOutputTokens, model.max_output_tokens))))

/**
 * `quote` with the most output tokens, at or above its floor, whose worst case `spendable` covers;
 * undefined when even the floor is beyond it. The worst case only grows with the output cap, so
 * the largest such cap is found by bisection.
 */
export const lowerQuote = (candidates: ReadonlyArray<CatalogModel>, quote: Quote, spendable: number): Quote | undefined => {
  const floor = quote.floorOutputTokens
  if (floor === undefined || floor < 1 || floor >= quote.maxOutputTokens) return undefined
  const cost = (tokens: number) => worstCaseOf(candidates, quote.estimatedInput, tokens)
  if (cost(floor) > spendable) return undefined
  let low = floor
  let high = quote.maxOutputTokens - 1
  while (low < high) {
    const mid = Math.ceil((low + high) / 2)
    if (cost(mid) <= spendable) low = mid
    else high = mid - 1
  }
  return { ...quote, maxOutputTokens: low, worstCase: cost(low), loweredFrom: quote.loweredFrom ?? quote.maxOutputTokens }
}

/** The worst case of sending `messages` to `models`; refused when they cannot fit a context window. */
export const quoteOf = (
  models: ReadonlyArray<CatalogModel>,
  messages: ReadonlyArray<ChatMessage>,
  limits?: { readonly maxOutputTokens?: number | undefined; readonly options?: CallOptions | undefined }
): Effect.Effect<Quote, InvalidRequest> => {
  const contextWindow = Math.min(...models.map((model) => model.context_window))
  const modelCap = Math.max(...models.map((model) => model.max_output_tokens))
  const estimatedInput = estimateInput(messages, limits?.options)
  if (estimatedInput >= contextWindow) {
    return Effect.fail(
      new InvalidRequest({
        message: `This model's maximum context length is ${contextWindow} tokens; the messages take about ${estimatedInput}`,
        field: "messages"
      })
    )
  }
  const maxOutputTokens = Math.min(limits?.maxOutputTokens ?? modelCap, modelCap)
  return Effect.succeed({
    estimatedInput,
    maxOutputTokens,
    worstCase: worstCaseOf(models, estimatedInput, maxOutputTokens),
    floorOutputTokens: floorOf(maxOutputTokens)
  })
}
