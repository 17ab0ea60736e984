/**
 * Parts of a reservation: a held reservation may carve part of what it holds into a reservation of
 * its own (its child, `parent_id`), settled or released on its own, so that a run that reserved its
 * worst case once can settle each of its model calls as it ends. A parent may give away all it
 * holds, and then holds 0 until it is closed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
-- No index: nothing looks reservations up by their parent; each part is closed and swept by its own id.
ALTER TABLE credit_reservations ADD COLUMN parent_id text;

ALTER TABLE credit_reservations DROP CONSTRAINT credit_reservations_amount_check;
ALTER TABLE credit_reservations ADD CONSTRAINT credit_reservations_amount_check CHECK (amount >= 0);
`).unprepared)
