/**
 * The answer core: every entry point that answers a question — a huddle turn, a JSON-RPC intent,
 * chat completions, Responses — asks here. Three steps, each in one place:
 * - `prepare` (`Preparation`): the models that may answer, the memories in front, the workspace's
 *   repository, the payer, the temperature;
 * - `plan`, `quote`, `seat`, `seatable`, `reprice` (`Planning`): one model's or a council's worst case,
 *   priced once (again only after a review);
 * - `alone`, `convene` (`Execution`): the metered call, or the council's one orchestration,
 *   settled as it goes or held until the caller has recorded the answer.
 *
 * ```ts
 * const answers = yield* Answers
 * const prepared = yield* answers.prepare({ scope, settings: settingsOf(scope), framing: { _tag: "Conversation", messages } })
 * const council = yield* answers.seat(prepared)
 * const { events } = yield* answers.convene({ council, conversation: prepared, purpose, mode: "multi" }) // in a Scope; 402 here
 * ```
 */
import { Context, Effect, Layer } from "effect"
import { Council } from "../council/Council.js"
import { Grounding } from "../grounding/Grounding.js"
import { ContextAssembly } from "../memories/ContextAssembly.js"
import { MeteredCall } from "../models/MeteredCall.js"
import * as Execution from "./Execution.js"
import * as Planning from "./Planning.js"
import * as Preparation from "./Preparation.js"

export interface Service {
  readonly prepare: ReturnType<typeof Preparation.prepare>
  readonly quote: ReturnType<typeof Planning.quote>
  readonly seat: ReturnType<typeof Planning.seat>
  readonly seatable: ReturnType<typeof Planning.seatable>
  readonly plan: ReturnType<typeof Planning.plan>
  readonly reprice: ReturnType<typeof Planning.reprice>
  readonly alone: ReturnType<typeof Execution.alone>
  readonly convene: ReturnType<typeof Execution.convene>
}

export class Answers extends Context.Tag("@huddle/domain/Answers")<Answers, Service>() {}

export const make = Effect.gen(function*() {
  const ports = {
    metered: yield* MeteredCall,
    council: yield* Council,
    context: yield* ContextAssembly,
    grounding: yield* Grounding
  }
  // Not traced: each step is a part of its caller's span, and the calls have their own.
  return Answers.of({
    prepare: Preparation.prepare(ports),
    quote: Planning.quote(ports),
    seat: Planning.seat(ports),
    seatable: Planning.seatable(ports),
    plan: Planning.plan(ports),
    reprice: Planning.reprice(ports),
    alone: Execution.alone(ports),
    convene: Execution.convene(ports)
  })
})

export const layer = Layer.effect(Answers, make)
