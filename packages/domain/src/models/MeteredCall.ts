/**
 * The one metered model call: every model call that costs credits goes through here, whoever
 * asks for it (chat completions, the huddle's pipeline, the council's rounds, grounding's deep
 * inspection). No other module reserves or settles credits for a model call.
 *
 * ```ts
 * const metered = yield* MeteredCall
 * const candidates = yield* metered.candidates({ _tag: "Tier", tier: "economy" }, settings)
 * const quote = yield* metered.quote(candidates, messages, { maxOutputTokens })
 * const call = yield* metered.run({ payer, purpose, candidates, quote, messages })   // in a Scope
 * yield* Stream.runForEach(call.events, (event) => …)                               // ends with `Settled`
 * ```
 *
 * Money: `run` reserves `quote.worstCase` before any model is called, in the caller's scope.
 * The events end with `Settled` once the reservation is settled to the provider's reported usage.
 * When the stream fails or is interrupted instead, `settle` (or, at the latest, closing the scope)
 * charges what was consumed — the provider's counts, else an estimate from the output — or
 * releases the reservation when nothing was. A reservation is settled exactly once.
 *
 * A caller that records the answer somewhere that can fail (the huddle's pipeline, which writes
 * the completed intent) asks for `settleAfter`: its closing `Settled` then says what will be
 * charged, nothing is charged yet, and the caller settles once the answer is recorded, or
 * `release`s when it could not be (the client is told the service is unavailable, and is not
 * charged for an answer it never got).
 *
 * A call whose payer cannot cover `quote.worstCase` but can cover a useful answer (at least
 * `quote.floorOutputTokens`) is not refused: its output cap is lowered to the most the payer's
 * spendable credits pay for (`lowerQuote`), `Metered.quote` is the lowered quote, its events
 * start with `Lowered` and its `Settled` says so. Below the floor: `InsufficientCredits`, as before.
 */
import { Chunk, Context, Effect, Layer, Option, Scope, Stream } from "effect"
import { InsufficientCredits, InvalidRequest, NotFound, PolicyViolation, type Unauthorized, UpstreamUnavailable } from "../shared/Errors.js"
import {
  type CallOptions,
  type CatalogModel,
  type ChatMessage,
  costOf,
  estimateTokens,
  type FailedModel,
  isOutput as isModelOutput,
  type ToolCallDelta,
  Usage
} from "./Model.js"
import { tierRank } from "../settings/Policy.js"
import { ModelTier } from "../settings/Preferences.js"
import { Catalog, offlineProvider } from "./Catalog.js"
import type { Authority } from "../credits/CreditStore.js"
import { chargeOf, Credits, type Reservation } from "../credits/Credits.js"
import { ModelProviders } from "./ModelProviders.js"
import { refusalOf } from "./ProviderSupport.js"
import { Router, type RouterChunk } from "./Router.js"
import type { Opened, Pull } from "../shared/Streams.js"
import * as Instruments from "../observability/Instruments.js"
import * as Metrics from "../observability/Metrics.js"
import { traced } from "../observability/Traced.js"

/** What a caller may name as the models of a call. */
export type Target =
  /** That tier's models, lowered to an enforced `model_tier` ceiling. */
  | { readonly _tag: "Tier"; readonly tier: ModelTier }
  /** A catalog model by id; refused when an enforced policy forbids its tier. */
  | { readonly _tag: "Model"; readonly id: string }
  /** Models already chosen (a stored plan), in the order to try them; checked against the ceiling. */
  | { readonly _tag: "Candidates"; readonly ids: ReadonlyArray<string> }

export const tiers: ReadonlyArray<ModelTier> = ModelTier.literals

export const isTier = (id: string): id is ModelTier => (tiers as ReadonlyArray<string>).includes(id)

/** A `model` as clients name it: a tier name or a catalog id. */
export const targetOf = (id: string): Target => isTier(id) ? { _tag: "Tier", tier: id } : { _tag: "Model", id }

/** The one answer to a model nobody can call, in OpenAI's words so that clients recognise it. */
export const modelNotFound = (id: string) =>
  new NotFound({ message: `The model \`${id}\` does not exist or you do not have access to it.`, field: "model" })

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

/** Who pays for a call, and who acts (checked again as the credits are taken). */
export interface Payer {
  readonly userId: string
  /** The org context; its pool pays only when `creditFallback` allows. */
  readonly orgId: string | null
  readonly creditFallback: boolean
  readonly authority: Authority
}

/**
 * A run's reservation: the worst case of several calls (a council's rounds), held whole before
 * the first of them; each call then takes its own worst case out of it and is settled on its own
 * as it ends. What no call used is given back when the run's scope closes.
 */
export interface Budget {
  readonly reservation: Reservation
}

export interface Call {
  readonly payer: Payer
  /**
   * The closing `Settled` prices the call without settling it: the caller then runs `settle`
   * (or `release`); closing the scope settles as usual when it did neither.
   */
  readonly settleAfter?: boolean | undefined
  /** Recorded with the reservation (the ledger's reason). */
  readonly purpose: string
  readonly candidates: ReadonlyArray<CatalogModel>
  readonly quote: Quote
  readonly messages: ReadonlyArray<ChatMessage>
  readonly temperature?: number | undefined
  readonly options?: CallOptions | undefined
  /** The run this call belongs to: its worst case is carved from the run's reservation, not reserved anew. */
  readonly budget?: Budget | undefined
}

/** How a call ended, once its credits are settled. */
export interface Settled {
  readonly _tag: "Settled"
  /** The model that answered (or was last tried). */
  readonly model: CatalogModel
  /** The provider's counts when it reported them (`reported`), else an estimate. */
  readonly usage: Usage
  readonly reported: boolean
  /** Whether anything was produced or reported: a call with nothing consumed is released, not charged. */
  readonly consumed: boolean
  readonly charged: number
  /** Set when the payer's credits lowered the call's output cap (see `Quote.floorOutputTokens`). */
  readonly lowered?: Lowered | undefined
}

/** A call whose output cap was lowered to what the payer's credits cover: `to` tokens instead of `from`. */
export interface Lowered {
  readonly _tag: "Lowered"
  readonly from: number
  readonly to: number
}

export type CallEvent =
  /** First, and only when it happened: the output cap was lowered to what the credits cover. */
  | Lowered
  /**
   * The model being tried; a later one replaces it when it fails before any output. `failed`: the
   * models tried before it that failed (`offlineFallbackOf` reads it).
   */
  | { readonly _tag: "Answering"; readonly model: CatalogModel; readonly failed: ReadonlyArray<FailedModel> }
  /** A try that failed before any output; `willRetry` when the same model is tried again. */
  | { readonly _tag: "AttemptFailed"; readonly model: CatalogModel; readonly reason: string; readonly willRetry: boolean }
  | { readonly _tag: "Delta"; readonly text: string }
  | ToolCallDelta
  | { readonly _tag: "Finish"; readonly reason: string }
  /** Always the last event of a stream that did not fail. */
  | Settled

/** Whether an event is the model's output (text or a tool call): what a stream is held back for. */
export const isOutput: (event: CallEvent) => boolean = isModelOutput

/** The event saying which model is being tried. */
export type Answering = Extract<CallEvent, { readonly _tag: "Answering" }>

/**
 * The configured models the offline model is answering in place of, when it stands in for them
 * (`HUDDLE_OFFLINE_FALLBACK`, decision 0034); undefined for any other answer.
 */
export const offlineFallbackOf = (answering: Answering): ReadonlyArray<FailedModel> | undefined =>
  answering.model.provider === offlineProvider && answering.failed.length > 0 ? answering.failed : undefined

export interface Metered {
  /** The model tried first. */
  readonly model: CatalogModel
  /** The quote the call runs under: the one given, or that one lowered (`loweredFrom` set). */
  readonly quote: Quote
  readonly events: Stream.Stream<CallEvent, UpstreamUnavailable>
  /** The same events as a pull, opened in the caller's scope: for a consumer that runs it itself (`forEachPull`). */
  readonly open: Opened<CallEvent, UpstreamUnavailable>
  /**
   * Settles now for what was consumed, if that has not happened yet (the stream's end does it on
   * success, unless `settleAfter`; closing the scope on failure or interruption); the same
   * `Settled` every time.
   */
  readonly settle: Effect.Effect<Settled>
  /**
   * Releases the reservation, charging nothing, if it is not settled yet: for an answer that
   * could not be delivered after all (see `settleAfter`). The same `Settled` as `settle` after it.
   */
  readonly release: Effect.Effect<Settled>
  /**
   * What settling now would charge, without settling (the call's `Settled` once it is settled or
   * released): how a caller that settles later (`settleAfter`) counts a call that did not end
   * with its priced `Settled` (failed, cut off).
   */
  readonly price: Effect.Effect<Settled>
}

export type RunError = InsufficientCredits | Unauthorized | NotFound

export interface Service {
  /**
   * The models to try, in order, for `target` under `ceiling`, an enforced policy's tier ceiling
   * if there is one: a tier above it is served at its level, a named model or a stored plan
   * above it is refused. An unknown model is `NotFound`, whoever names it.
   */
  readonly candidates: (
    target: Target,
    ceiling: ModelTier | undefined
  ) => Effect.Effect<ReadonlyArray<CatalogModel>, NotFound | PolicyViolation>
  /**
   * The candidates whose provider can honour `options` (`ProviderSupport`), in order: a model
   * that would drop or misread a parameter is not tried. Refused, naming the parameter the first
   * candidate cannot take, when none can; before any reservation, so nothing is charged.
   */
  readonly fitting: (
    candidates: ReadonlyArray<CatalogModel>,
    options: CallOptions | undefined
  ) => Effect.Effect<ReadonlyArray<CatalogModel>, InvalidRequest>
  /** The worst case of sending `messages` to `candidates`; refused when they cannot fit a context window. */
  readonly quote: (
    candidates: ReadonlyArray<CatalogModel>,
    messages: ReadonlyArray<ChatMessage>,
    limits?: { readonly maxOutputTokens?: number | undefined; readonly options?: CallOptions | undefined }
  ) => Effect.Effect<Quote, InvalidRequest>
  /** Reserves the quote's worst case for the payer and starts the call (see the module's comment). */
  readonly run: (call: Call) => Effect.Effect<Metered, RunError, Scope.Scope>
  /**
   * Reserves `worstCase` for a run of several calls, in the caller's scope (402 before any call
   * when it cannot be covered); what is left when the scope closes is released.
   */
  readonly budget: (payer: Payer, purpose: string, worstCase: number) => Effect.Effect<Budget, RunError, Scope.Scope>
}

export class MeteredCall extends Context.Tag("@huddle/domain/MeteredCall")<MeteredCall, Service>() {}

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

/** The reservation a call to any of `candidates` needs: the dearest of them at its worst. */
export const worstCaseOf = (candidates: ReadonlyArray<CatalogModel>, estimatedInput: number, maxOutputTokens: number): number =>
  Math.max(
    1,
    ...candidates.map((model) =>
      costOf(model, {
        input_tokens: Math.ceil(estimatedInput * inputMargin),
        output_tokens: Math.min(maxOutputTokens, model.max_output_tokens)
      })
    )
  )

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

/**
 * What a call consumed: the provider's counts when it reported them; otherwise, once anything was
 * produced, the estimated input and the output's characters at about four a token.
 */
export const consumedOf = (reported: Usage | undefined, outputChars: number, estimatedInput: number): Usage =>
  // Whole counts by construction: not validated again.
  reported ?? new Usage({ input_tokens: outputChars > 0 ? estimatedInput : 0, output_tokens: Math.ceil(outputChars / 4) }, true)

const aboveCeiling = (allowed: ModelTier, model: CatalogModel) =>
  new PolicyViolation({
    message: `The organization's policy allows models up to the ${allowed} tier; ${model.id} is ${model.tier}`,
    field: "model"
  })

export const make = Effect.gen(function*() {
  const catalog = yield* Catalog
  const router = yield* Router
  const credits = yield* Credits
  const providers = yield* ModelProviders
  const metrics = yield* Metrics.Metrics

  /** What a settled call paid for, by model, tier and the source that paid. */
  const record = (reservation: Reservation, settled: Settled) => {
    const { id: model, tier } = settled.model
    metrics.add(Instruments.tokens, { model, tier, direction: "input" }, settled.usage.input_tokens)
    metrics.add(Instruments.tokens, { model, tier, direction: "output" }, settled.usage.output_tokens)
    metrics.add(Instruments.creditsCharged, { model, tier, source: reservation.source }, settled.charged)
  }

  const candidates: Service["candidates"] = (target, ceiling) =>
    Effect.gen(function*() {
      const allowed = ceiling ?? "premium"
      switch (target._tag) {
        case "Tier": {
          const models = catalog.forTier(tierRank[target.tier] > tierRank[allowed] ? allowed : target.tier)
          return models.length > 0 ? models : yield* modelNotFound(target.tier)
        }
        case "Model":
        case "Candidates": {
          const ids = target._tag === "Model" ? [target.id] : target.ids
          const models: Array<CatalogModel> = []
          for (const id of ids) {
            const model = catalog.find(id)
            if (Option.isNone(model)) return yield* modelNotFound(id)
            if (tierRank[model.value.tier] > tierRank[allowed]) return yield* aboveCeiling(allowed, model.value)
            models.push(model.value)
          }
          return models.length > 0 ? models : yield* modelNotFound("")
        }
      }
    })

  const fitting: Service["fitting"] = (models, options) => {
    // A provider that is not configured has no say here: the router skips it anyway.
    const refusals = models.map((model) =>
      Option.match(providers.get(model.provider), { onNone: () => undefined, onSome: (p) => refusalOf(p.kind, options) })
    )
    const fit = models.filter((_, i) => refusals[i] === undefined)
    // None fits only when every candidate refused, the first one included.
    const first = refusals[0]
    return fit.length > 0 || first === undefined
      ? Effect.succeed(fit)
      : Effect.fail(new InvalidRequest({ message: `${first.message} (asked of ${models[0]!.id})`, field: first.param }))
  }

  const quote: Service["quote"] = (models, messages, limits) => {
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

  const reserveFor = (payer: Payer, purpose: string, amount: number, lower?: (spendable: number) => number | undefined) =>
    credits.reserve({
      userId: payer.userId,
      orgId: payer.orgId,
      amount,
      creditFallback: payer.creditFallback,
      purpose,
      authority: payer.authority,
      lower
    })

  /**
   * A call's own reservation: its quote's worst case, or, when the payer cannot cover that, the
   * quote lowered to what they can (`lowerQuote`); with the quote it runs under.
   */
  const reserveQuote = (call: Call) =>
    Effect.map(
      reserveFor(call.payer, call.purpose, call.quote.worstCase, (spendable) => lowerQuote(call.candidates, call.quote, spendable)?.worstCase),
      (reservation) => ({
        reservation,
        // What the reservation pays for: at least the cap that was lowered to, never more than it covers.
        quote: reservation.amount < call.quote.worstCase ? lowerQuote(call.candidates, call.quote, reservation.amount)! : call.quote
      })
    )

  // A run's budget covers each of its calls by construction; one that does not is refused, not overdrawn.
  const carve = (budget: Budget, amount: number) =>
    Effect.flatMap(
      credits.carve(budget.reservation, amount),
      Option.match({
        onNone: () => Effect.fail(new InsufficientCredits({ message: `The run's reservation cannot cover this call (${amount} credits)` })),
        onSome: Effect.succeed
      })
    )

  const budget: Service["budget"] = (payer, purpose, worstCase) =>
    Effect.map(
      Effect.acquireRelease(reserveFor(payer, purpose, worstCase), (reservation) => credits.release(reservation)),
      (reservation): Budget => ({ reservation })
    )

  const run: Service["run"] = (call) =>
    Effect.gen(function*() {
      const primary = call.candidates[0]!
      const progress = {
        model: primary,
        reported: undefined as Usage | undefined,
        /** Characters of output (text and tool calls) so far. */
        chars: 0,
        /** What earlier attempts reported before failing, at their own models' prices. */
        earlier: 0,
        settled: undefined as Settled | undefined,
        lowered: undefined as Lowered | undefined,
        /**
         * The model's finish, held back until the call is settled: a client takes the finish (its
         * `finish_reason`, its stop) for the end of the answer, which must not reach it before the
         * charge is written (decision 0041). Let go at once if more output follows it.
         */
        finish: undefined as Extract<CallEvent, { _tag: "Finish" }> | undefined
      }

      /** What the call consumed so far, and its cost; `charged` is 0 until settled. */
      const priced = (): { readonly settled: Settled; readonly cost: number } => {
        const usage = consumedOf(progress.reported, progress.chars, call.quote.estimatedInput)
        return {
          settled: {
            _tag: "Settled",
            model: progress.model,
            usage,
            reported: progress.reported !== undefined,
            consumed: progress.chars > 0 || progress.reported !== undefined || progress.earlier > 0,
            charged: 0,
            lowered: progress.lowered
          },
          cost: progress.earlier + costOf(progress.model, usage)
        }
      }

      // Once: settled at the end of the stream, by the caller, or (failure, interruption) as the
      // scope closes; or released by the caller instead (`charge` false: nothing is charged).
      const closeWith = (reservation: Reservation, charge: boolean): Effect.Effect<Settled> =>
        Effect.uninterruptible(Effect.suspend(() => {
          if (progress.settled !== undefined) return Effect.succeed(progress.settled)
          const { cost, settled } = priced()
          progress.settled = settled
          return charge && settled.consumed
            ? Effect.map(credits.settle(reservation, cost, { inputTokens: settled.usage.input_tokens, outputTokens: settled.usage.output_tokens }), (charged) => {
              progress.settled = { ...settled, charged }
              record(reservation, progress.settled)
              return progress.settled
            })
            : Effect.as(credits.release(reservation), settled)
        }))

      // Held and its settling added to the scope as one step. On the scope itself rather than
      // with `Effect.acquireRelease`, which restores the fiber's references around the release
      // (two diffs of a request's whole context): a stream that ends settles in its last pull,
      // and the scope's settling then finds it done.
      const scope = yield* Effect.scope
      const { quote, reservation } = yield* Effect.uninterruptible(Effect.tap(
        call.budget === undefined
          ? reserveQuote(call)
          : Effect.map(carve(call.budget, call.quote.worstCase), (reservation) => ({ reservation, quote: call.quote })),
        ({ reservation }) => Scope.addFinalizer(scope, closeWith(reservation, true))
      ))
      const lowered: Lowered | undefined = quote.loweredFrom === undefined
        ? undefined
        : { _tag: "Lowered", from: quote.loweredFrom, to: quote.maxOutputTokens }
      progress.lowered = lowered
      const settle = closeWith(reservation, true)
      /** What settling will charge, nothing charged yet (the closing event of `settleAfter`). */
      const price = Effect.sync((): Settled => {
        if (progress.settled !== undefined) return progress.settled
        const { cost, settled } = priced()
        return settled.consumed ? { ...settled, charged: chargeOf(reservation, cost) } : settled
      })
      const end = call.settleAfter === true ? price : settle

      /** The router's chunks as the call's events; the progress that settling reads is kept as they pass. */
      const eventsOf = (chunks: Chunk.Chunk<RouterChunk>): Chunk.Chunk<CallEvent> => {
        const out: Array<CallEvent> = []
        const letFinishGo = () => {
          if (progress.finish !== undefined) out.push(progress.finish)
          progress.finish = undefined
        }
        for (const chunk of chunks) {
          if (chunk._tag !== "Usage" && chunk._tag !== "Finish") letFinishGo()
          switch (chunk._tag) {
            case "Attempt":
              // A failed attempt's reported usage is its own model's, not the next one's.
              if (progress.reported !== undefined) progress.earlier += costOf(progress.model, progress.reported)
              progress.reported = undefined
              progress.model = chunk.model
              out.push({ _tag: "Answering", model: chunk.model, failed: chunk.failed })
              break
            case "Failed":
              out.push({ _tag: "AttemptFailed", model: chunk.model, reason: chunk.reason, willRetry: chunk.willRetry })
              break
            case "Delta":
              progress.chars += chunk.text.length
              out.push(chunk)
              break
            case "ToolCallDelta":
              progress.chars += (chunk.name?.length ?? 0) + (chunk.arguments?.length ?? 0)
              out.push(chunk)
              break
            case "Usage":
              progress.reported = chunk.usage
              break
            case "Finish":
              letFinishGo()
              progress.finish = chunk
              break
          }
        }
        return Chunk.unsafeFromArray(out)
      }

      // One pull over the router's: `Lowered` first when it happened, the answer, then `Settled`.
      const open = Effect.map(
        router.open(call.candidates, {
          messages: call.messages,
          temperature: call.temperature,
          maxOutputTokens: quote.maxOutputTokens,
          options: call.options
        }),
        (answer): Pull<CallEvent, UpstreamUnavailable> => {
          let head: CallEvent | undefined = lowered
          let ended = false
          return Effect.suspend(() => {
            if (head !== undefined) {
              const first = head
              head = undefined
              return Effect.succeed(Chunk.of(first))
            }
            if (ended) return Effect.fail(Option.none())
            return Effect.matchEffect(answer, {
              onSuccess: (chunks) => Effect.succeed(eventsOf(chunks)),
              onFailure: (failure) => {
                if (Option.isSome(failure)) {
                  // Settled as it fails rather than as the scope closes (the same settling, once),
                  // so that the failure says what the output produced before it cost. A caller
                  // that settles later (`settleAfter`) decides that itself.
                  if (call.settleAfter === true) return Effect.fail(failure)
                  return Effect.flatMap(settle, (settled) =>
                    Effect.fail(Option.some(new UpstreamUnavailable({ message: failure.value.message, charged: settled.charged }))))
                }
                ended = true
                return Effect.map(end, (settled) => {
                  const finish = progress.finish
                  progress.finish = undefined
                  return finish === undefined ? Chunk.of<CallEvent>(settled) : Chunk.make<[CallEvent, CallEvent]>(finish, settled)
                })
              }
            })
          })
        }
      )
      return { model: primary, quote, events: Stream.fromPull(open), open, settle, release: closeWith(reservation, false), price } satisfies Metered
    })

  // The computations (candidates, fitting, quote) are not worth a span each; the calls are.
  return MeteredCall.of({ candidates, fitting, quote, ...traced("MeteredCall", { run, budget }) })
})

export const layer = Layer.effect(MeteredCall, make)
