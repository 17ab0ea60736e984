/**
 * What grounding did for an answer (excerpts, verified references, citations checked), kept with
 * the intent so that `intent.get` and the session's message show it later.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
ALTER TABLE intents ADD COLUMN grounding jsonb;
`).unprepared)
