/**
 * What a council run may cost at most (`Council.plan`, `Council.priced`): its seats, each
 * round's output cap per seat, and the worst case of every round, retry, chair and second
 * opinion, which the caller reserves whole before the run's first call.
 */
import { Effect, Option } from "effect"
import { InvalidRequest } from "../shared/Errors.js"
import type { CatalogModel, ChatMessage } from "../models/Model.js"
import type * as ModelProviders from "../models/ModelProviders.js"
import { estimateInput, worstCallOf } from "../models/Quote.js"
import { minSeats, seatsFrom } from "./Panel.js"
import type { CouncilPlan, Service, Settings } from "./Council.js"

/** The most tokens of a position quoted in a ratification prompt (the worst case counts two and the consensus's). */
export const positionTokens = 60

/** Tokens of council instruction added to a round's prompt, on top of the conversation. */
const instructionTokens = 400

/** The worst case of a run of `seats` over `messages` (see `Council.priced`). */
export const priced = (
  settings: Settings,
  seats: ReadonlyArray<CatalogModel>,
  messages: ReadonlyArray<ChatMessage>,
  maxOutputTokens?: number | undefined
): Effect.Effect<CouncilPlan, InvalidRequest> =>
  Effect.gen(function*() {
    if (seats.length < minSeats) {
      return yield* new InvalidRequest({ message: "No model of this tier can take part in a council", field: "mode" })
    }
    const base = estimateInput(messages, undefined) + instructionTokens
    const caps = seats.map((model) => ({
      proposals: Math.min(settings.outputTokens.proposals, model.max_output_tokens),
      position: Math.min(settings.outputTokens.position, model.max_output_tokens),
      critique: Math.min(settings.outputTokens.critique, model.max_output_tokens),
      synthesis: Math.min(settings.outputTokens.synthesis, model.max_output_tokens, maxOutputTokens ?? Infinity),
      ratification: Math.min(settings.outputTokens.ratification, model.max_output_tokens)
    }))
    const sum = (f: (cap: (typeof caps)[number]) => number) => caps.reduce((total, cap) => total + f(cap), 0)
    // What each round's prompt can hold at most: the conversation, the instruction, and the
    // earlier rounds' outputs as far as their caps let them grow (a retry adds its own answer).
    const proposalIn = base
    const positionIn = base + Math.max(...caps.map((cap) => cap.position))
    const critiqueIn = base + sum((cap) => cap.proposals) + Math.max(...caps.map((cap) => cap.critique))
    const synthesisIn = base + sum((cap) => cap.proposals + cap.critique) + Math.max(...caps.map((cap) => cap.synthesis))
    const ratificationIn = base + Math.max(...caps.map((cap) => cap.synthesis)) + 3 * positionTokens +
      Math.max(...caps.map((cap) => cap.ratification))
    const contextWindow = Math.min(...seats.map((model) => model.context_window))
    if (synthesisIn + Math.max(...caps.map((cap) => cap.synthesis)) >= contextWindow) {
      return yield* new InvalidRequest({
        message: `The conversation is too long for a council of these models (context window ${contextWindow} tokens)`,
        field: "messages"
      })
    }
    // Every seat may propose, critique and ratify twice (one retry each) and chair once; in
    // auto mode every seat but the first may also give a second opinion twice (a seat's that
    // failed is asked of the next).
    const worstCase = seats.reduce((total, model, i) => {
      const cap = caps[i]!
      return total +
        (i === 0 ? 0 : 2 * worstCallOf(model, positionIn, cap.position)) +
        2 * worstCallOf(model, proposalIn, cap.proposals) +
        2 * worstCallOf(model, critiqueIn, cap.critique) +
        2 * worstCallOf(model, synthesisIn, cap.synthesis) +
        2 * worstCallOf(model, ratificationIn, cap.ratification)
    }, 0)
    return { seats, estimatedInput: base, worstCase: Math.max(1, worstCase), outputTokens: caps }
  })

/** The seats for `input.models` whose provider is configured, and the worst case of their run (see `Council.plan`). */
export const plan = (
  settings: Settings,
  providers: ModelProviders.Service,
  input: Parameters<Service["plan"]>[0]
): Effect.Effect<CouncilPlan, InvalidRequest> =>
  Effect.gen(function*() {
    const usable = input.models.filter((model) => Option.isSome(providers.get(model.provider)))
    return yield* priced(settings, seatsFrom(usable, input.participants ?? settings.participants), input.messages, input.maxOutputTokens)
  })
