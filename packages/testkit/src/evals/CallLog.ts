/**
 * What the models were asked during one council run, seen from the provider's side: how many
 * calls were made (failed ones included; the router's retries of a call are attempts of that
 * call, counted apart), each seat's proposal with what it cost, and each seat's second opinion
 * (auto mode's position-only call). The proposals are the participants' single answers: the
 * baseline of "one call of one model", and auto mode's answer when a second opinion agreed.
 */
import * as Protocol from "@huddle/domain/council/Protocol"
import { type ChatMessage, costOf, type ModelRequest, type Usage } from "@huddle/domain/models/Model"
import { consumedOf, estimateInput } from "@huddle/domain/models/MeteredCall"
import { ModelProviders, type Provider } from "@huddle/domain/models/ModelProviders"
import { Context, Effect, Layer, Option, Stream } from "effect"

export interface Proposal {
  /** The text it answered; undefined when the call failed. */
  readonly text: string | undefined
  /** Credits it cost, at its model's prices. */
  readonly charged: number
}

export interface Log {
  /** Calls made, each counted once however many times the router tried it. */
  readonly calls: number
  /** Attempts made: the calls and the router's retries of them. */
  readonly attempts: number
  /** By seat (1-based). */
  readonly proposals: ReadonlyMap<number, Proposal>
  /** Auto mode's second opinions, by seat (1-based). */
  readonly positions: ReadonlyMap<number, Proposal>
}

export interface Service {
  /** Starts a new log (before each run; runs are not concurrent). */
  readonly reset: Effect.Effect<void>
  /** What the log holds now (a copy: later calls do not change it). */
  readonly current: Effect.Effect<Log>
}

export class CallLog extends Context.Tag("@huddle/testkit/evals/CallLog")<CallLog, Service>() {}

/** The seat a proposal or position prompt is for, from its perspective line (seats 1–4 have one each). */
const seatOf = (messages: ReadonlyArray<ChatMessage>): number | undefined => {
  for (const message of messages) {
    const match = /^Your perspective: (.*)$/m.exec(message.content)
    const index = match === null ? -1 : Protocol.perspectives.indexOf(match[1]!)
    if (index >= 0) return index + 1
  }
  return undefined
}

/** The providers below, each call logged. */
export const layer: Layer.Layer<ModelProviders | CallLog, never, ModelProviders> = Layer.effectContext(Effect.gen(function*() {
  const inner = yield* ModelProviders
  const fresh = () => ({
    calls: 0,
    attempts: 0,
    seen: new WeakSet<ReadonlyArray<ChatMessage>>(),
    proposals: new Map<number, Proposal>(),
    positions: new Map<number, Proposal>()
  })
  let log = fresh()

  const logged = (provider: Provider): Provider => ({
    ...provider,
    stream: (request: ModelRequest) =>
      Stream.suspend(() => {
        const current = log
        current.attempts++
        // The router tries a call again with the same conversation: a retry is not a new call.
        if (!current.seen.has(request.messages)) {
          current.seen.add(request.messages)
          current.calls++
        }
        const round = Protocol.roundOf(request.messages)
        const kept = round === "proposals" ? current.proposals : round === "position" ? current.positions : undefined
        const seat = kept === undefined ? undefined : seatOf(request.messages)
        if (kept === undefined || seat === undefined) return provider.stream(request)
        let text = ""
        let usage: Usage | undefined
        let finished = false
        return provider.stream(request).pipe(
          Stream.tap((chunk) =>
            Effect.sync(() => {
              if (chunk._tag === "Delta") text += chunk.text
              else if (chunk._tag === "Usage") usage = chunk.usage
              else if (chunk._tag === "Finish") finished = true
            })
          ),
          Stream.ensuring(Effect.sync(() => {
            if (kept.get(seat)?.text !== undefined) return
            const consumed = consumedOf(usage, text.length, estimateInput(request.messages, undefined))
            kept.set(seat, { text: finished ? text : undefined, charged: costOf(request.model, consumed) })
          }))
        )
      })
  })

  const providers = ModelProviders.of({ get: (name) => Option.map(inner.get(name), logged) })
  const service: Service = {
    reset: Effect.sync(() => void (log = fresh())),
    current: Effect.sync(() => ({
      calls: log.calls,
      attempts: log.attempts,
      proposals: new Map(log.proposals),
      positions: new Map(log.positions)
    }))
  }
  return Context.make(ModelProviders, providers).pipe(Context.add(CallLog, service))
}))
