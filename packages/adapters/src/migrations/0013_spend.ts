/**
 * Spend read from the ledger (docs/decisions/0022-spend.md): the deployment's reservation rows by
 * time, covering what a spend query reads (an index-only scan for a year of rows), and a ledger
 * row's reservation, to read an org's spend from its reservations (`credit_reservations_org_idx`), and
 * statistics on the groups the query makes.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE INDEX credit_ledger_spend_idx ON credit_ledger (created_at)
  INCLUDE (account_id, actor_id, kind, delta, reason) WHERE kind <> 'grant';
CREATE INDEX credit_ledger_reservation_idx ON credit_ledger (reservation_id) WHERE reservation_id IS NOT NULL;
-- How many groups the spend query's first step makes (the planner has no statistics on these
-- expressions otherwise, guesses a group per row, and sorts a year of rows on disk).
CREATE STATISTICS credit_ledger_spend_stats (ndistinct) ON
  (date_trunc('day', created_at AT TIME ZONE 'UTC')), (date_trunc('week', created_at AT TIME ZONE 'UTC')),
  (date_trunc('month', created_at AT TIME ZONE 'UTC')), reason, actor_id
  FROM credit_ledger;
`).unprepared)
