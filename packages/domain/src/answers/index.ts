/** The answer core: prepare, plan and execute an answer, for every entry point; chat completions over it. */
export * as Answers from "./Answers.js"
export * as Completions from "./Completions.js"
export * as Embeddings from "./Embeddings.js"
export * as Execution from "./Execution.js"
export * as Payer from "./Payer.js"
export * as Planning from "./Planning.js"
export * as Preparation from "./Preparation.js"
