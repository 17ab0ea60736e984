/**
 * Where every answer runs, whichever entry point asked: one model's answer (`alone`) is one
 * `MeteredCall`; a council (`convene`) reserves its whole run's worst case, then runs its rounds,
 * each call carved from that reservation. Either settles as it goes, or, with `held`, leaves the
 * charges for the caller to settle once it has recorded the answer (the huddle's intents,
 * decision 0027), or release when it could not.
 */
import { Effect, type Scope, type Stream } from "effect"
import type { Council, CouncilError, CouncilEvent, CouncilPlan, Spent } from "../council/Council.js"
import * as HeldCalls from "../models/HeldCalls.js"
import type { Metered, MeteredCall, RunError } from "../models/MeteredCall.js"
import type { ChatMessage } from "../models/Model.js"
import type { Prepared } from "./Preparation.js"
import type { SinglePlan } from "./Planning.js"

export interface Ports {
  readonly metered: MeteredCall["Type"]
  readonly council: Council["Type"]
}

/** What a run is sent and who pays: a `Prepared`, or a stored plan's equivalent. */
export type Conversation = Pick<Prepared, "payer" | "messages" | "temperature" | "options">

export interface Alone {
  readonly plan: SinglePlan
  readonly conversation: Conversation
  /** The ledger's reason. */
  readonly purpose: string
  /** Charged once the caller has recorded the answer (`Metered.settle`), not as it ends. */
  readonly held?: boolean | undefined
}

export interface Convene {
  readonly council: CouncilPlan
  readonly conversation: Omit<Conversation, "options">
  readonly purpose: string
  /** `auto`: a proposal and a second opinion first; the council goes on only if they disagree. */
  readonly mode: "multi" | "auto"
  /** Every call's charge left for the caller to settle once it has recorded the answer. */
  readonly held?: boolean | undefined
  /** Told what the run spent, however it ended. */
  readonly tally?: ((spent: Spent) => Effect.Effect<void>) | undefined
}

/** A council under way: its events (ending with `Concluded`), and its calls when held. */
export interface Convened {
  readonly events: Stream.Stream<CouncilEvent, CouncilError>
  readonly held: HeldCalls.HeldCalls | undefined
}

/** One model's answer, its worst case reserved (402 here), under way in the caller's scope. */
export const alone = (ports: Ports) => (input: Alone): Effect.Effect<Metered, RunError, Scope.Scope> =>
  ports.metered.run({
    payer: input.conversation.payer,
    purpose: input.purpose,
    candidates: input.plan.candidates,
    quote: input.plan.quote,
    messages: input.conversation.messages,
    temperature: input.conversation.temperature,
    options: input.conversation.options,
    settleAfter: input.held
  })

/**
 * A council convened: the whole run's worst case reserved in the caller's scope (402 here, before
 * any call), then its rounds as events. What no call used is given back when that scope closes.
 */
export const convene = (ports: Ports) => (input: Convene): Effect.Effect<Convened, RunError, Scope.Scope> =>
  Effect.gen(function*() {
    const { payer } = input.conversation
    const budget = yield* ports.metered.budget(payer, input.purpose, input.council.worstCase)
    const held = input.held === true ? yield* HeldCalls.make : undefined
    const messages: ReadonlyArray<ChatMessage> = input.conversation.messages
    return {
      held,
      events: ports.council.run({
        plan: input.council,
        payer,
        purpose: input.purpose,
        budget,
        messages,
        temperature: input.conversation.temperature,
        mode: input.mode,
        tally: input.tally,
        held
      })
    }
  })
