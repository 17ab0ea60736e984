/**
 * Spend read from the ledger (docs/decisions/0022-spend.md): the deployment's reservation rows by
 * time, covering what a spend query reads (an index-only scan for a year of rows), and a ledger
 * row's reservation, to read an org's spend from its reservations (`credit_reservations_org_idx`).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE INDEX credit_ledger_spend_idx ON credit_ledger (created_at)
  INCLUDE (account_id, actor_id, kind, delta, reason) WHERE kind <> 'grant';
CREATE INDEX credit_ledger_reservation_idx ON credit_ledger (reservation_id) WHERE reservation_id IS NOT NULL;
`).unprepared)
