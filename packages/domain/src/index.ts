/**
 * @huddle/domain: the pure core of Huddle: schemas, typed errors, ports and services, grouped
 * by capability (one folder each, with an index of what others may use), in layers: a folder
 * imports only folders below it (docs/architecture.md). It performs no I/O; adapters provide the
 * ports.
 */
export * from "./shared/index.js"
export * from "./observability/index.js"
export * from "./audit/index.js"
export * from "./identity/index.js"
export * from "./settings/index.js"
export * from "./credits/index.js"
export * from "./orgs/index.js"
export * from "./accounts/index.js"
export * from "./request/index.js"
export * from "./models/index.js"
export * from "./grounding/index.js"
export * from "./memories/index.js"
export * from "./spend/index.js"
export * from "./answers/index.js"
export * from "./huddle/index.js"
export * from "./workspaces/index.js"
export * from "./operator/index.js"
export * from "./instances/index.js"
export * as Domain from "./Domain.js"
