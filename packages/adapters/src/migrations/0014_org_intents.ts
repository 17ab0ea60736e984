/**
 * An org's intents for its admins (`intent.list` with `org_id`), newest first a page at a time:
 * keyset indexes on (org_id, id), one over all of the org's intents and a small one over those
 * awaiting review (the admins' queue). The review index on (org_id, status) served no query and
 * could not order by id; it is replaced.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE INDEX intents_org_idx ON intents (org_id, id) WHERE org_id IS NOT NULL;
CREATE INDEX intents_org_review_id_idx ON intents (org_id, id) WHERE status = 'awaiting_review';
DROP INDEX intents_org_review_idx;
`).unprepared)
