/**
 * Change notifications for the caches of read-mostly rows (authentication, membership, settings,
 * workspaces, memories): after each change to one of these rows, its key is sent on the
 * `huddle_changes` channel as `table:key`, at commit, to every instance listening. Keys are the
 * columns given to the trigger, joined by `/`; an update that changes a key sends both.
 * API keys notify only when what authentication reads changes, not on `last_used_at`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE FUNCTION huddle_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  old_key text;
  new_key text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    SELECT string_agg(COALESCE(to_jsonb(OLD) ->> col, ''), '/' ORDER BY ord) INTO old_key
    FROM unnest(TG_ARGV) WITH ORDINALITY AS a(col, ord);
    PERFORM pg_notify('huddle_changes', TG_TABLE_NAME || ':' || old_key);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    SELECT string_agg(COALESCE(to_jsonb(NEW) ->> col, ''), '/' ORDER BY ord) INTO new_key
    FROM unnest(TG_ARGV) WITH ORDINALITY AS a(col, ord);
    IF old_key IS DISTINCT FROM new_key THEN
      PERFORM pg_notify('huddle_changes', TG_TABLE_NAME || ':' || new_key);
    END IF;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_changed AFTER INSERT OR DELETE OR UPDATE OF user_id, org_id, prefix, token_hash, revoked_at
  ON api_keys FOR EACH ROW EXECUTE FUNCTION huddle_notify_change('prefix');
CREATE TRIGGER users_changed AFTER INSERT OR UPDATE OR DELETE
  ON users FOR EACH ROW EXECUTE FUNCTION huddle_notify_change('id');
CREATE TRIGGER memberships_changed AFTER INSERT OR UPDATE OR DELETE
  ON memberships FOR EACH ROW EXECUTE FUNCTION huddle_notify_change('user_id', 'org_id');
CREATE TRIGGER user_preferences_changed AFTER INSERT OR UPDATE OR DELETE
  ON user_preferences FOR EACH ROW EXECUTE FUNCTION huddle_notify_change('user_id');
CREATE TRIGGER org_policies_changed AFTER INSERT OR UPDATE OR DELETE
  ON org_policies FOR EACH ROW EXECUTE FUNCTION huddle_notify_change('org_id');
CREATE TRIGGER org_preferences_changed AFTER INSERT OR UPDATE OR DELETE
  ON org_preferences FOR EACH ROW EXECUTE FUNCTION huddle_notify_change('org_id');
CREATE TRIGGER workspaces_changed AFTER INSERT OR UPDATE OR DELETE
  ON workspaces FOR EACH ROW EXECUTE FUNCTION huddle_notify_change('owner_id');
CREATE TRIGGER memories_changed AFTER INSERT OR UPDATE OR DELETE
  ON memories FOR EACH ROW EXECUTE FUNCTION huddle_notify_change('scope', 'org_id', 'workspace_id', 'author_id');
`).unprepared)
