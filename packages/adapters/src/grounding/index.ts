/**
 * Code grounding's adapters: indexing a repository into a `Snapshot` (`Indexer.index`, the
 * pieces it is made of, and `IndexerLive`, the `RepositoryIndexer` port), and retrieval over it
 * (`LexicalIndex`).
 */
export * as Chunking from "./Chunking.js"
export * as CodeTokens from "./CodeTokens.js"
export * as Definitions from "./Definitions.js"
export * as FileDiscovery from "./FileDiscovery.js"
export * as FileRules from "./FileRules.js"
export * as Imports from "./Imports.js"
export * as Indexer from "./Indexer.js"
export * as IndexerLive from "./IndexerLive.js"
export * as LexicalDefinitions from "./LexicalDefinitions.js"
export * as LexicalIndex from "./LexicalIndex.js"
export * as TestLinks from "./TestLinks.js"
export * as LexicalCodeSearch from "./LexicalCodeSearch.js"
