/**
 * What an answer may cost at most, priced in one place for every entry point: one model's worst
 * case (`quote`), a council's seats and its whole run's worst case (`seat`), a huddle turn's
 * choice between them (`plan`, auto mode included), and a stored plan priced again under the
 * rules in force when a person approves it (`reprice`). Nothing here reserves anything: that is
 * the execution's first step.
 */
import { Effect, Option } from "effect"
import type { HuddleMode, ModelTier } from "../settings/Preferences.js"
import * as AutoMode from "../council/AutoMode.js"
import type { Council, CouncilPlan } from "../council/Council.js"
import { type InvalidRequest, type NotFound, PolicyViolation } from "../shared/Errors.js"
import { floorOf, type MeteredCall, type Quote, worstCaseOf } from "../models/MeteredCall.js"
import type { CatalogModel, ChatMessage } from "../models/Model.js"
import type { Prepared } from "./Preparation.js"

/** One model's answer: the models to try, in order, and the worst case of the dearest. */
export interface SinglePlan {
  readonly candidates: ReadonlyArray<CatalogModel>
  readonly quote: Quote
}

/** A huddle turn's plan: one model, or a council, or (auto) a council that may answer alone. */
export interface AnswerPlan {
  /** The mode that will run: `auto` only when a council is seated and the question is not light. */
  readonly mode: HuddleMode
  /** One model's answer: the answer in single mode, auto's when a council cannot be afforded. */
  readonly single: SinglePlan
  /** The council's seats and whole run's worst case (multi and auto mode). */
  readonly council: CouncilPlan | undefined
  /** Why auto mode chose the mode it did, when it chose already. */
  readonly modeReason: string | undefined
}

/** A stored plan (an intent's), as far as pricing it again needs it. */
export interface StoredPlan {
  readonly models: ReadonlyArray<string>
  readonly requested_model?: string | undefined
  readonly max_output_tokens: number
  readonly estimated_input_tokens: number
  readonly messages?: ReadonlyArray<ChatMessage> | undefined
  readonly council?: { readonly seats: ReadonlyArray<string> } | undefined
}

export interface Ports {
  readonly metered: MeteredCall["Type"]
  readonly council: Council["Type"]
}

/** One model's worst case for the prepared conversation, within `maxOutputTokens` when given. */
export const quote = (ports: Ports) => (prepared: Prepared, maxOutputTokens?: number | undefined): Effect.Effect<SinglePlan, InvalidRequest> =>
  Effect.map(
    ports.metered.quote(prepared.candidates, prepared.messages, { maxOutputTokens, options: prepared.options }),
    (quote) => ({ candidates: prepared.candidates, quote })
  )

/** A council of the prepared candidates; `maxOutputTokens` caps the consensus (the chair's synthesis). */
export const seat = (ports: Ports) => (prepared: Prepared, maxOutputTokens?: number | undefined): Effect.Effect<CouncilPlan, InvalidRequest> =>
  ports.council.plan({ models: prepared.candidates, messages: prepared.messages, maxOutputTokens })

/** Whether `models` (a tier's) can seat a council at all: enough usable models, a window that holds the rounds. */
export const seatable = (ports: Ports) => (models: ReadonlyArray<CatalogModel>): Effect.Effect<boolean> =>
  Effect.isSuccess(ports.council.plan({ models, messages: [] }))

/**
 * A huddle turn's plan in `requested` mode: single; multi (a council, or refused); auto (a
 * council unless the question is light or none can be seated, then one model, saying why).
 */
export const plan = (ports: Ports) => (prepared: Prepared, requested: HuddleMode, question: string): Effect.Effect<AnswerPlan, InvalidRequest> =>
  Effect.gen(function*() {
    const single = yield* quote(ports)(prepared, prepared.maxOutput)
    const nature = requested === "auto" ? AutoMode.natureOf(question) : undefined
    const seated = requested === "single" || nature?._tag === "Light"
      ? undefined
      : Option.getOrUndefined(yield* seat(ports)(prepared).pipe(requested === "auto" ? Effect.option : Effect.map(Option.some)))
    const mode: HuddleMode = seated === undefined ? "single" : requested
    const modeReason = nature?._tag === "Light"
      ? nature.reason
      : requested === "auto" && mode === "single"
      ? AutoMode.reasons.noCouncil
      : undefined
    return { mode, single, council: seated, modeReason }
  })

/**
 * A stored plan under the rules in force now (`ceiling`, an enforced tier ceiling; `tier`, the
 * settings' tier): its models when still allowed, else the tier's (a named model is refused); a
 * council's seats when still allowed, else seated again from the models, else none.
 */
export const reprice = (ports: Ports) =>
(
  stored: StoredPlan,
  rules: { readonly ceiling: ModelTier | undefined; readonly tier: ModelTier }
): Effect.Effect<Omit<AnswerPlan, "mode" | "modeReason">, PolicyViolation | NotFound> =>
  Effect.gen(function*() {
    const { ceiling } = rules
    const models = yield* ports.metered.candidates({ _tag: "Candidates", ids: stored.models }, ceiling).pipe(
      Effect.catchTag("PolicyViolation", () =>
        stored.requested_model === undefined
          ? ports.metered.candidates({ _tag: "Tier", tier: rules.tier }, ceiling)
          : Effect.fail(
            new PolicyViolation({
              message: `The organization's policy now allows models up to the ${ceiling} tier; ` +
                `${stored.requested_model} was approved too late to run`
            })
          ))
    )
    const maxOutputTokens = Math.min(stored.max_output_tokens, ...models.map((model) => model.max_output_tokens))
    const messages = stored.messages ?? []
    const council = stored.council === undefined
      ? undefined
      : yield* ports.metered.candidates({ _tag: "Candidates", ids: stored.council.seats }, ceiling).pipe(
        Effect.flatMap((seats) => ports.council.priced(seats, messages)),
        Effect.catchTag("PolicyViolation", () => ports.council.plan({ models, messages })),
        Effect.orElseSucceed(() => undefined)
      )
    return {
      single: {
        candidates: models,
        quote: {
          estimatedInput: stored.estimated_input_tokens,
          maxOutputTokens,
          worstCase: worstCaseOf(models, stored.estimated_input_tokens, maxOutputTokens),
          floorOutputTokens: floorOf(maxOutputTokens)
        }
      },
      council
    }
  })
