/**
 * Accounts: users, web sessions, API keys, organizations and memberships (the org binding of
 * keys and the org list of a profile need them), personal preferences, and credit balances with
 * their append-only ledger.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE TABLE users (
  id text PRIMARY KEY,
  email text NOT NULL UNIQUE,
  password_hash text NOT NULL,
  created_at timestamptz NOT NULL
);

CREATE TABLE web_sessions (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  prefix text NOT NULL UNIQUE,
  token_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX web_sessions_user_idx ON web_sessions (user_id);

CREATE TABLE organizations (
  id text PRIMARY KEY,
  name text NOT NULL,
  slug text NOT NULL UNIQUE,
  created_by text REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL
);

-- An invitation is a pending membership keyed by email; it becomes active (user_id set)
-- when a user with that email signs up or logs in.
CREATE TABLE memberships (
  org_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  email text NOT NULL,
  user_id text REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('admin', 'member')),
  status text NOT NULL CHECK (status IN ('pending', 'active')),
  invited_by text REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  joined_at timestamptz,
  PRIMARY KEY (org_id, email),
  CHECK ((status = 'active') = (user_id IS NOT NULL))
);
CREATE INDEX memberships_user_idx ON memberships (user_id);
CREATE INDEX memberships_pending_email_idx ON memberships (email) WHERE status = 'pending';

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  org_id text REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL,
  prefix text NOT NULL UNIQUE,
  last_four text NOT NULL,
  token_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_user_idx ON api_keys (user_id, id);

CREATE TABLE user_preferences (
  user_id text PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  preferences jsonb NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE credit_accounts (
  id text PRIMARY KEY,
  owner_type text NOT NULL CHECK (owner_type IN ('user', 'org')),
  owner_id text NOT NULL,
  pool text NOT NULL CHECK (pool IN ('personal', 'subscription', 'addon')),
  balance bigint NOT NULL DEFAULT 0 CHECK (balance >= 0),
  UNIQUE (owner_type, owner_id, pool)
);

CREATE TABLE credit_ledger (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES credit_accounts (id) ON DELETE CASCADE,
  delta bigint NOT NULL,
  kind text NOT NULL CHECK (kind IN ('grant', 'reserve', 'settle', 'release')),
  reservation_id text,
  reason text NOT NULL,
  actor_id text,
  created_at timestamptz NOT NULL
);
CREATE INDEX credit_ledger_account_idx ON credit_ledger (account_id, id);

-- The ledger is append-only: history is never rewritten.
CREATE FUNCTION refuse_ledger_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'credit_ledger is append-only';
END;
$$;
CREATE TRIGGER credit_ledger_append_only BEFORE UPDATE ON credit_ledger
  FOR EACH ROW EXECUTE FUNCTION refuse_ledger_update();
`).unprepared)
