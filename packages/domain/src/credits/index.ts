/** Balances, reservations and settlements, the ledger, and giving back reservations left held. */
export * as CreditStore from "./CreditStore.js"
export * as Credits from "./Credits.js"
export * as LedgerEntry from "./LedgerEntry.js"
export * as ReservationExpiry from "./ReservationExpiry.js"
