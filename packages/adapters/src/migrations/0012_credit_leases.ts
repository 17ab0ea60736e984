/**
 * Credit leases (decision 0021): an instance earmarks a block of an account's balance
 * (`credit_accounts.leased`), reserves and settles against it in memory, and writes the
 * reservations and their ledger rows in batches. An earmark is not a movement: the credits stay
 * in `balance` (so `balance` still equals the sum of the ledger) but no other reservation can take
 * them. A lease is closed by its instance's next batch, or reclaimed when its instance is lost.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
ALTER TABLE credit_accounts ADD COLUMN leased bigint NOT NULL DEFAULT 0;
ALTER TABLE credit_accounts ADD CONSTRAINT credit_accounts_leased_check CHECK (leased >= 0 AND leased <= balance);

CREATE TABLE credit_leases (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES credit_accounts (id) ON DELETE CASCADE,
  instance_id text NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  status text NOT NULL CHECK (status IN ('open', 'closed', 'reclaimed')),
  created_at timestamptz NOT NULL,
  closed_at timestamptz
);
CREATE INDEX credit_leases_open_idx ON credit_leases (instance_id) WHERE status = 'open';
`).unprepared)
