/**
 * An account's held reservations, found by the account: whether the personal account is settled
 * (the revocation read, for every reservation of a member whose balance is short) and whether
 * others hold reservations on it (a lease that finds too little) both ask for them. Without it
 * each asking read every held row of the deployment. Small: held rows are the calls in flight.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE INDEX credit_reservations_account_held_idx ON credit_reservations (account_id) WHERE status = 'held';
`).unprepared)
