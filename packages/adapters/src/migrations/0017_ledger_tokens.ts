/**
 * Tokens on the ledger (decision 0022): a settle row of a model call records the input and
 * output tokens it was charged for, so that spend reports usage beside credits. Other rows, and
 * rows written before this migration, hold NULL. The spend index covers the two columns, so that
 * a year of rows is still read from the index alone.
 *
 * The index is rebuilt with a plain `DROP`/`CREATE`: it blocks ledger writes while it builds,
 * seconds for a million rows (docs/operations.md, Upgrading).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
ALTER TABLE credit_ledger
  ADD COLUMN input_tokens bigint CHECK (input_tokens >= 0),
  ADD COLUMN output_tokens bigint CHECK (output_tokens >= 0);
DROP INDEX credit_ledger_spend_idx;
CREATE INDEX credit_ledger_spend_idx ON credit_ledger (created_at)
  INCLUDE (account_id, actor_id, kind, delta, reason, input_tokens, output_tokens) WHERE kind <> 'grant';
`).unprepared)
