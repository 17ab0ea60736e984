/**
 * Organizations beyond membership: enforced policies and default preferences, credit
 * reservations (reserve → settle | release), workspaces and memories, and the audit log.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE TABLE org_policies (
  org_id text PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  policies jsonb NOT NULL,
  updated_by text REFERENCES users (id) ON DELETE SET NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE org_preferences (
  org_id text PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  preferences jsonb NOT NULL,
  updated_by text REFERENCES users (id) ON DELETE SET NULL,
  updated_at timestamptz NOT NULL
);

-- A reservation holds credits taken from one account until it is settled (to the real cost,
-- the rest returned) or released (all returned). Each step is also a ledger row.
CREATE TABLE credit_reservations (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES credit_accounts (id) ON DELETE CASCADE,
  user_id text NOT NULL,
  org_id text,
  amount bigint NOT NULL CHECK (amount > 0),
  actual bigint CHECK (actual >= 0 AND actual <= amount),
  status text NOT NULL CHECK (status IN ('held', 'settled', 'released')),
  purpose text NOT NULL,
  created_at timestamptz NOT NULL,
  closed_at timestamptz
);
CREATE INDEX credit_reservations_held_idx ON credit_reservations (created_at) WHERE status = 'held';
CREATE INDEX credit_reservations_org_idx ON credit_reservations (org_id, created_at) WHERE org_id IS NOT NULL;

CREATE TABLE workspaces (
  id text PRIMARY KEY,
  owner_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name text NOT NULL,
  personal boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX workspaces_one_personal_idx ON workspaces (owner_id) WHERE personal;

CREATE TABLE memories (
  id text PRIMARY KEY,
  scope text NOT NULL CHECK (scope IN ('personal', 'workspace', 'org')),
  author_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  org_id text REFERENCES organizations (id) ON DELETE CASCADE,
  workspace_id text REFERENCES workspaces (id) ON DELETE CASCADE,
  content text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK ((scope = 'org') = (org_id IS NOT NULL)),
  CHECK ((scope = 'workspace') = (workspace_id IS NOT NULL))
);
CREATE INDEX memories_author_idx ON memories (author_id, scope);
CREATE INDEX memories_org_idx ON memories (org_id) WHERE org_id IS NOT NULL;
CREATE INDEX memories_workspace_idx ON memories (workspace_id) WHERE workspace_id IS NOT NULL;

-- Account-level events (org_id NULL) outlive the organization; org events go with it.
CREATE TABLE audit_events (
  id text PRIMARY KEY,
  org_id text REFERENCES organizations (id) ON DELETE CASCADE,
  actor_id text,
  event_type text NOT NULL,
  target text,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL
);
CREATE INDEX audit_events_org_idx ON audit_events (org_id, id);
CREATE INDEX audit_events_org_type_idx ON audit_events (org_id, event_type, id);

-- The audit log is append-only. The one exception is the cascade of an organization's deletion,
-- which the deleting transaction announces with SET LOCAL huddle.deleting_org = '<org id>'.
CREATE FUNCTION refuse_audit_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND OLD.org_id IS NOT NULL
     AND OLD.org_id = current_setting('huddle.deleting_org', true) THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit_events is append-only';
END;
$$;
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION refuse_audit_change();
`).unprepared)
