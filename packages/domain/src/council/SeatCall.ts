/**
 * One seat's answer to a round: a metered call carved from the run's budget and counted against
 * the seat however it ends, asked once more when its answer cannot be read.
 */
import { Effect, Scope, Stream } from "effect"
import { type ChatMessage, promptTokensOf } from "../models/Model.js"
import * as Protocol from "./Protocol.js"
import type { Outcome, RunContext, Seat } from "./RunContext.js"

/**
 * One metered call of a seat: its text, settled (or priced and left held, with `held`) and
 * counted against the seat however it ends.
 */
const call = (run: RunContext, seat: Seat, round: Protocol.PromptRound, messages: ReadonlyArray<ChatMessage>) =>
  Effect.scoped(Effect.gen(function*() {
    const { input, metered } = run
    const maxOutputTokens = run.plan.outputTokens[seat.seat - 1]![round]
    const quote = yield* metered.quote([seat.model], messages, { maxOutputTokens })
    const { held } = input
    const started = metered.run({
      payer: input.payer,
      purpose: input.purpose,
      candidates: [seat.model],
      quote,
      messages,
      temperature: input.temperature,
      budget: input.budget,
      settleAfter: held !== undefined
    })
    // Held: its reservation in the caller's scope, past this call's, and the call in the
    // caller's list in the same step.
    const running = held === undefined
      ? yield* started
      : yield* Effect.uninterruptible(Effect.tap(Scope.extend(started, held.scope), (running) => Effect.sync(() => held.add(running))))
    let text = ""
    yield* Stream.runForEach(running.events, (event) => Effect.sync(() => {
      if (event._tag === "Delta") text += event.text
    })).pipe(
      Effect.ensuring(Effect.map(held === undefined ? running.settle : running.price, (settled) => {
        seat.input += promptTokensOf(settled.usage)
        seat.output += settled.usage.output_tokens
        seat.credits += settled.charged
      }))
    )
    return text
  }))

/**
 * A seat's answer to a round, read by `parse`: asked once more when unreadable, then an
 * abstention; a failed call or the round's deadline is a failure.
 */
export const ask = <A>(
  run: RunContext,
  seat: Seat,
  round: Protocol.PromptRound,
  messages: ReadonlyArray<ChatMessage>,
  parse: (text: string) => A | undefined
): Effect.Effect<Outcome<A>> =>
  Effect.gen(function*() {
    const first = yield* call(run, seat, round, messages)
    const read = parse(first)
    if (read !== undefined) return { _tag: "Answered", value: read, text: first } as const
    const again = yield* call(run, seat, round, [...messages, { role: "assistant", content: first }, Protocol.retryNote(round)])
    const reread = parse(again)
    return reread !== undefined ? { _tag: "Answered", value: reread, text: again } as const : { _tag: "Abstained" } as const
  }).pipe(
    Effect.catchAll((error) => Effect.succeed({ _tag: "Failed", reason: error.message } as const))
  )
