/**
 * A council run as it happens (`Council.run`): its rounds in order, each a step of its own file
 * over the run's state (`RunContext`), their events offered to the caller's stream as they come.
 */
import { Effect, Exit, Mailbox, Stream } from "effect"
import type { CouncilError, CouncilEvent, RunInput, Spent } from "./Council.js"
import { conclude } from "./Conclusion.js"
import { critique } from "./Critique.js"
import { proposals } from "./Proposals.js"
import { ratification } from "./Ratification.js"
import { type RunServices, spentOf, startRun } from "./RunContext.js"
import { synthesis } from "./Synthesis.js"
import * as Instruments from "../observability/Instruments.js"
import * as Traced from "../observability/Traced.js"

/**
 * The rounds, from proposals to the report. `tally` is given what the run spent as soon as the
 * run has seats, for the caller to be told however the run ends.
 */
const protocol = (
  services: RunServices,
  input: RunInput,
  emit: (event: CouncilEvent) => Effect.Effect<unknown>,
  tally: { current: (() => Spent) | undefined }
): Effect.Effect<void, CouncilError> =>
  Effect.gen(function*() {
    const run = yield* startRun(services, input, emit)
    tally.current = () => spentOf(run.seats)
    const single = yield* proposals(run)
    if (single !== undefined) return yield* emit({ _tag: "Concluded", result: single })
    yield* critique(run)
    const consensus = yield* synthesis(run)
    yield* ratification(run, consensus)
    yield* conclude(run, consensus)
  })

/** The run's events, ending with `Concluded`; interrupting the stream cancels every call in flight. */
export const run = (services: RunServices, input: RunInput): Stream.Stream<CouncilEvent, CouncilError> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const mailbox = yield* Mailbox.make<CouncilEvent, CouncilError>()
    const spent = { current: undefined as (() => Spent) | undefined }
    yield* protocol(services, input, (event) => mailbox.offer(event), spent).pipe(
      (effect) => Traced.span(effect, "Council.run", { attributes: { "huddle.seats": input.plan.seats.length } }),
      Effect.ensuring(Effect.suspend(() =>
        input.tally === undefined || spent.current === undefined ? Effect.void : input.tally(spent.current())
      )),
      Effect.exit,
      Effect.tap((exit) => {
        if (Exit.isFailure(exit)) services.metrics.add(Instruments.councilRuns, { outcome: "failed" })
      }),
      Effect.flatMap((exit) => mailbox.done(exit)),
      Effect.forkScoped
    )
    return Mailbox.toStream(mailbox)
  }))
