/** Huddle sessions and intents: the single-mode pipeline from context to completion, and the review gate. */
export * as Huddle from "./Huddle.js"
export * as HuddleRepository from "./HuddleRepository.js"
export * as Huddles from "./Huddles.js"
export * as Intent from "./Intent.js"
export * as IntentPipeline from "./IntentPipeline.js"
export * as IntentRepository from "./IntentRepository.js"
export * as Intents from "./Intents.js"
export * as RiskFlags from "./RiskFlags.js"
