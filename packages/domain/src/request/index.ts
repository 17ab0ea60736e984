/** The scope of one request, resolved once (principal, org and role, workspace, the rules of its settings), and idempotent requests. */
export * as IdempotencyStore from "./IdempotencyStore.js"
export * as RequestScope from "./RequestScope.js"
