/** What every capability uses: typed errors, ids, pages, wire strings, transactions. */
export * as Errors from "./Errors.js"
export * as Ids from "./Ids.js"
export * as Page from "./Page.js"
export * as Streams from "./Streams.js"
export * as Transactor from "./Transactor.js"
export * as WireString from "./WireString.js"
