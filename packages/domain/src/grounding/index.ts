/** Code grounding: connected repositories, retrieval, verified citations, deep inspection. */
export * as Snapshot from "./Snapshot.js"
export * as Citations from "./Citations.js"
export * as DeepInspection from "./DeepInspection.js"
