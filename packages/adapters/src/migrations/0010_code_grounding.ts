/**
 * Code grounding: org workspaces, and a workspace's connected repository with its stored
 * snapshot (files, skipped files, chunks, definitions, imports, test links), which every
 * instance reads. Snapshot rows are written incrementally: an index run rewrites only the
 * paths that changed, in one transaction; `indexed_version` tells which run wrote a file's rows.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
-- A workspace is a user's (personal) or an org's (made by its admins, used by its members).
ALTER TABLE workspaces ALTER COLUMN owner_id DROP NOT NULL;
ALTER TABLE workspaces ADD COLUMN org_id text REFERENCES organizations (id) ON DELETE CASCADE;
ALTER TABLE workspaces ADD CONSTRAINT workspaces_one_place CHECK ((owner_id IS NULL) <> (org_id IS NULL));
ALTER TABLE workspaces ADD CONSTRAINT workspaces_org_not_personal CHECK (org_id IS NULL OR NOT personal);
CREATE UNIQUE INDEX workspaces_org_name_idx ON workspaces (org_id, lower(name)) WHERE org_id IS NOT NULL;

-- At most one per workspace. requested/served count index runs asked for and done: a run is
-- wanted while requested > served. The lease (holder, expiry) names the one job that indexes it.
CREATE TABLE repositories (
  id text PRIMARY KEY,
  workspace_id text NOT NULL UNIQUE REFERENCES workspaces (id) ON DELETE CASCADE,
  source text NOT NULL CHECK (source IN ('path', 'git')),
  location text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'indexing', 'ready', 'failed')),
  error text,
  seen integer NOT NULL DEFAULT 0,
  indexed integer NOT NULL DEFAULT 0,
  skipped integer NOT NULL DEFAULT 0,
  added integer,
  changed integer,
  removed integer,
  index_version integer NOT NULL DEFAULT 0,
  requested integer NOT NULL DEFAULT 1,
  served integer NOT NULL DEFAULT 0,
  lease_holder text,
  lease_expires_at timestamptz,
  connected_by text REFERENCES users (id) ON DELETE SET NULL,
  connected_at timestamptz NOT NULL,
  started_at timestamptz,
  finished_at timestamptz,
  CHECK (served <= requested),
  CHECK ((lease_holder IS NULL) = (lease_expires_at IS NULL))
);
CREATE INDEX repositories_wanted_idx ON repositories (id) WHERE requested > served;

CREATE TABLE repository_files (
  repository_id text NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
  path text NOT NULL,
  category text NOT NULL CHECK (category IN ('config', 'source', 'test', 'docs')),
  language text NOT NULL,
  lines integer NOT NULL,
  bytes bigint NOT NULL,
  hash text NOT NULL,
  indexed_version integer NOT NULL,
  PRIMARY KEY (repository_id, path)
);

CREATE TABLE repository_skipped (
  repository_id text NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
  path text NOT NULL,
  reason text NOT NULL,
  PRIMARY KEY (repository_id, path)
);

-- A file's chunks and definitions go with its row; seq keeps the indexer's order within a file.
CREATE TABLE repository_chunks (
  repository_id text NOT NULL,
  path text NOT NULL,
  seq integer NOT NULL,
  start_line integer NOT NULL,
  end_line integer NOT NULL,
  text text NOT NULL,
  PRIMARY KEY (repository_id, path, seq),
  FOREIGN KEY (repository_id, path) REFERENCES repository_files (repository_id, path) ON DELETE CASCADE
);

CREATE TABLE repository_definitions (
  repository_id text NOT NULL,
  path text NOT NULL,
  seq integer NOT NULL,
  name text NOT NULL,
  kind text NOT NULL,
  line integer NOT NULL,
  end_line integer NOT NULL,
  PRIMARY KEY (repository_id, path, seq),
  FOREIGN KEY (repository_id, path) REFERENCES repository_files (repository_id, path) ON DELETE CASCADE
);

-- Edges between files are diffed as sets, not by path: an unchanged file's import can change
-- when the file it names appears.
CREATE TABLE repository_imports (
  repository_id text NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
  from_path text NOT NULL,
  to_path text NOT NULL,
  PRIMARY KEY (repository_id, from_path, to_path)
);

CREATE TABLE repository_test_links (
  repository_id text NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
  source_path text NOT NULL,
  test_path text NOT NULL,
  via text NOT NULL CHECK (via IN ('import', 'name')),
  PRIMARY KEY (repository_id, source_path, test_path, via)
);
`).unprepared)
