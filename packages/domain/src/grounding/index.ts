/** Code grounding: connected repositories, their index runs and stored snapshots, retrieval, verified citations. */
export * as IndexJobs from "./IndexJobs.js"
export * as Repositories from "./Repositories.js"
export * as RepositoryConnection from "./RepositoryConnection.js"
export * as RepositoryIndexer from "./RepositoryIndexer.js"
export * as RepositorySources from "./RepositorySources.js"
export * as RepositoryStore from "./RepositoryStore.js"
export * as Snapshot from "./Snapshot.js"
export * as SnapshotDelta from "./SnapshotDelta.js"
