/**
 * The evaluation's two sources of answers: the simulated panel of a regime (offline, seeded), and
 * the deployment's real providers and default catalog (`--real`, from `OPENAI_API_KEY` /
 * `ANTHROPIC_API_KEY`, which costs real money).
 */
import * as CatalogFile from "@huddle/adapters/models/Catalog"
import * as Providers from "@huddle/adapters/models/Providers"
import type { ModelTier } from "@huddle/domain/settings/Preferences"
import * as Protocol from "@huddle/domain/council/Protocol"
import { ModelProviders } from "@huddle/domain/models/ModelProviders"
import * as Router from "@huddle/domain/models/Router"
import { Duration, Effect, Layer, Option, Stream } from "effect"
import type { Backend } from "./CouncilEval.js"
import { letterOf, messagesOf, type Question } from "./Questions.js"
import * as SimulatedPanel from "./SimulatedPanel.js"

/**
 * The router's own attempts and retry rules, without its waits between attempts: nothing in the
 * simulation depends on the time they take (the council's deadline is two minutes away), and
 * waiting them on the real clock would make the evaluation several times slower.
 */
export const simulatedPolicy: Router.Policy = { ...Router.defaultPolicy, baseDelay: Duration.zero }

export const simulated = (
  seed: number,
  regime: SimulatedPanel.Regime,
  questions: ReadonlyArray<Question>,
  routerPolicy: Router.Policy = simulatedPolicy
): Backend => ({
  providers: SimulatedPanel.providers(seed, regime, questions),
  catalog: SimulatedPanel.catalog(regime),
  tier: "standard",
  routerPolicy,
  simulated: true,
  sample: (question, _seat, model, _size, k, fresh) =>
    Effect.sync(() => {
      const p = regime.participants.find((participant) => participant.model === model.id)
      if (p === undefined) return undefined
      // The failure model of the council's calls: a seat's k-th answer comes at the time of the
      // council's k-th round (its proposal, the critique, the synthesis, the ratification; later
      // ones after the last), so a seat that went down in a round gives no answer from it on; a
      // transient failure is retried as often as the router tries a call; and, in the stress
      // model, any answer is lost independently.
      const down = SimulatedPanel.outageFrom(seed, regime, question, p.model)
      if (down !== undefined && Math.min(k, SimulatedPanel.lastRound) >= down) return undefined
      if (SimulatedPanel.fails(seed, regime, "sample", question.id, p.model, k)) return undefined
      const attempts = Array.from({ length: routerPolicy.attempts }, (_, i) => i)
      if (attempts.every((i) => SimulatedPanel.blips(seed, regime, "sample", question.id, p.model, k, i))) return undefined
      return SimulatedPanel.resampleOf(seed, regime, question, p, k, fresh ? 0 : regime.selfConsistency)
    })
})

/** Whether a provider key is set: `--real` needs one. */
export const realConfigured = (env: NodeJS.ProcessEnv): boolean =>
  [env.OPENAI_API_KEY, env.ANTHROPIC_API_KEY].some((key) => key !== undefined && key.trim().length > 0)

export const real = (tier: ModelTier): Backend => ({
  providers: Providers.layerConfig(Providers.fromEnv),
  // Routed by the same providers (decision 0034).
  catalog: CatalogFile.layerConfig(CatalogFile.fromEnv).pipe(Layer.provide(Providers.layerConfig(Providers.fromEnv))),
  tier,
  routerPolicy: Router.defaultPolicy,
  simulated: false,
  // One more proposal from the seat's model, asked as the council asks it (same perspective): as
  // self-consistent as the model really is.
  sample: (question, seat, model, size) =>
    Effect.gen(function*() {
      const provider = (yield* ModelProviders).get(model.provider)
      if (Option.isNone(provider)) return undefined
      let text = ""
      yield* Stream.runForEach(
        provider.value.stream({
          model,
          messages: Protocol.proposalPrompt(messagesOf(question), seat, size),
          maxOutputTokens: Math.min(1024, model.max_output_tokens)
        }),
        (chunk) => Effect.sync(() => void (chunk._tag === "Delta" && (text += chunk.text)))
      )
      return letterOf(Protocol.parseStated(text)?.position, question)
    }).pipe(Effect.catchAll(() => Effect.succeed(undefined)))
})
