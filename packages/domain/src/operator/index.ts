/** What only the operator may do: mint credits, create users, revoke keys. */
export * as Operator from "./Operator.js"
