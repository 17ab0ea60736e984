/**
 * The council's consensus report, kept with the intent that ran it and the session message that
 * answered with it, so that `intent.get` and `GET /v1/huddle/sessions/{id}` show it later.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
ALTER TABLE intents ADD COLUMN consensus jsonb;
ALTER TABLE huddle_messages ADD COLUMN consensus jsonb;
`).unprepared)
