/**
 * Ledger rows and credit accounts may be deleted only by an organization's deletion (which
 * announces itself with SET LOCAL huddle.deleting_org); otherwise history is never rewritten.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE FUNCTION refuse_credit_deletion() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF COALESCE(current_setting('huddle.deleting_org', true), '') <> '' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION '% rows are kept: credits history is append-only', TG_TABLE_NAME;
END;
$$;
CREATE TRIGGER credit_ledger_no_delete BEFORE DELETE ON credit_ledger
  FOR EACH ROW EXECUTE FUNCTION refuse_credit_deletion();
CREATE TRIGGER credit_accounts_no_delete BEFORE DELETE ON credit_accounts
  FOR EACH ROW EXECUTE FUNCTION refuse_credit_deletion();
`).unprepared)
