/**
 * Idempotency keys (docs/decisions/0012-idempotency.md): one row per scope (a credential) and
 * key, claimed before the request runs and completed with its sealed outcome.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE TABLE idempotency_keys (
  scope text NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,
  token text NOT NULL,
  state text NOT NULL CHECK (state IN ('in_progress', 'completed')),
  locked_until timestamptz NOT NULL,
  outcome bytea,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (scope, key),
  CHECK ((state = 'completed') = (outcome IS NOT NULL))
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);
`).unprepared)
