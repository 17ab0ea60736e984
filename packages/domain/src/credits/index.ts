/** Balances, reservations and settlements, org pools and member caps, and closing what a crashed instance left held. */
export * as CreditStore from "./CreditStore.js"
export * as Credits from "./Credits.js"
export * as LedgerEntry from "./LedgerEntry.js"
export * as InstanceLiveness from "./InstanceLiveness.js"
export * as Instances from "./Instances.js"
export * as OrgCredits from "./OrgCredits.js"
export * as ReservationExpiry from "./ReservationExpiry.js"
