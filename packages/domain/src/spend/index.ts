/** Spend read from the ledger, for admins (an org) and the operator (the deployment). */
export * as Spend from "./Spend.js"
export * as SpendQuery from "./SpendQuery.js"
export * as SpendRepository from "./SpendRepository.js"
