/** Code grounding's adapters: retrieval over an indexed repository. */
export * as CodeTokens from "./CodeTokens.js"
export * as LexicalIndex from "./LexicalIndex.js"
