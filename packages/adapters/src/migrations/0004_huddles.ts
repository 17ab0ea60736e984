/**
 * Huddle sessions and their messages, and intents: every request that runs the pipeline, with
 * its lifecycle (received → planning → awaiting_review → executing → completed | failed | rejected).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE TABLE huddle_sessions (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  org_id text REFERENCES organizations (id) ON DELETE CASCADE,
  workspace_id text REFERENCES workspaces (id) ON DELETE SET NULL,
  title text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX huddle_sessions_user_idx ON huddle_sessions (user_id, id);

CREATE TABLE intents (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  org_id text REFERENCES organizations (id) ON DELETE CASCADE,
  session_id text REFERENCES huddle_sessions (id) ON DELETE CASCADE,
  workspace_id text,
  input text NOT NULL,
  mode text NOT NULL,
  status text NOT NULL CHECK (status IN
    ('received', 'planning', 'awaiting_review', 'executing', 'completed', 'failed', 'rejected')),
  settings jsonb NOT NULL,
  plan jsonb,
  output text,
  models jsonb NOT NULL DEFAULT '[]'::jsonb,
  usage jsonb,
  credits_charged bigint NOT NULL DEFAULT 0,
  error jsonb,
  reviewed_by text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX intents_user_idx ON intents (user_id, id);
CREATE INDEX intents_org_review_idx ON intents (org_id, status) WHERE status = 'awaiting_review';

CREATE TABLE huddle_messages (
  id text PRIMARY KEY,
  session_id text NOT NULL REFERENCES huddle_sessions (id) ON DELETE CASCADE,
  intent_id text REFERENCES intents (id) ON DELETE SET NULL,
  role text NOT NULL CHECK (role IN ('user', 'assistant')),
  content text NOT NULL,
  mode text,
  models jsonb NOT NULL DEFAULT '[]'::jsonb,
  usage jsonb,
  credits_charged bigint NOT NULL DEFAULT 0,
  refs jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at timestamptz NOT NULL
);
CREATE INDEX huddle_messages_session_idx ON huddle_messages (session_id, id);
`).unprepared)
