/**
 * Leases on org pools (decision 0021, extended): an instance earmarks a block of an org account
 * for one member, and the earmark counts against that member's cap while it is held
 * (`member_spending.leased`), so that a cap stays exact although the member's reservations are
 * made in memory. A member lease names its org and member (`credit_leases.org_id`, `user_id`);
 * a lease of a personal balance names neither.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
ALTER TABLE member_spending ADD COLUMN leased bigint NOT NULL DEFAULT 0 CHECK (leased >= 0);
ALTER TABLE credit_leases ADD COLUMN org_id text;
ALTER TABLE credit_leases ADD COLUMN user_id text;
ALTER TABLE credit_leases ADD CONSTRAINT credit_leases_member_check CHECK ((org_id IS NULL) = (user_id IS NULL));
`).unprepared)
