/**
 * Code grounding, the repository side: indexing a repository into a `Snapshot` (`Indexer.index`),
 * and the pieces it is made of.
 */
export * as Chunking from "./Chunking.js"
export * as Definitions from "./Definitions.js"
export * as FileDiscovery from "./FileDiscovery.js"
export * as FileRules from "./FileRules.js"
export * as Imports from "./Imports.js"
export * as Indexer from "./Indexer.js"
export * as LexicalDefinitions from "./LexicalDefinitions.js"
export * as TestLinks from "./TestLinks.js"
export * as IndexerLive from "./IndexerLive.js"
