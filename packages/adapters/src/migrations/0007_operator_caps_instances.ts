/**
 * Money and authority hardening:
 * - per-member spending on an org's pool (`member_spending`), counted in the same statement that
 *   reserves from the pool, with the admin's optional cap (a month's or a total amount);
 * - live instances (`instances`) with a heartbeat, and the instance that holds each reservation
 *   and runs each intent, so that what a crashed instance held is given back within a minute.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
-- The first moment of t's calendar month, in UTC: the period a monthly cap counts in.
CREATE FUNCTION huddle_month_start(t timestamptz) RETURNS timestamptz
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT date_trunc('month', t AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' $$;

CREATE TABLE member_spending (
  org_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  cap_amount bigint CHECK (cap_amount >= 0),
  cap_period text CHECK (cap_period IN ('month', 'total')),
  month_start timestamptz NOT NULL,
  month_spent bigint NOT NULL DEFAULT 0 CHECK (month_spent >= 0),
  total_spent bigint NOT NULL DEFAULT 0 CHECK (total_spent >= 0),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, user_id),
  CHECK ((cap_amount IS NULL) = (cap_period IS NULL))
);

-- Raised by a reservation that would take a member past their cap (checked on the spending row's
-- latest version, under its row lock): the whole statement, the debit included, is undone.
CREATE FUNCTION huddle_cap_exceeded() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the member''s spending cap on the organization''s pool is reached' USING ERRCODE = 'HC001';
END;
$$;

CREATE TABLE instances (
  id text PRIMARY KEY,
  started_at timestamptz NOT NULL,
  heartbeat_at timestamptz NOT NULL
);

ALTER TABLE credit_reservations ADD COLUMN instance_id text;
-- The month a reservation from an org pool was counted in, for its member's spending; NULL when
-- a personal balance paid.
ALTER TABLE credit_reservations ADD COLUMN spend_month timestamptz;
CREATE INDEX credit_reservations_instance_idx ON credit_reservations (instance_id) WHERE status = 'held';

ALTER TABLE intents ADD COLUMN instance_id text;
CREATE INDEX intents_running_idx ON intents (instance_id) WHERE status IN ('received', 'planning', 'executing');

-- What members already took from org pools: settled charges, and what is still held.
INSERT INTO member_spending (org_id, user_id, month_start, month_spent, total_spent)
SELECT a.owner_id, r.user_id, huddle_month_start(now()),
  SUM(CASE WHEN r.created_at >= huddle_month_start(now()) THEN COALESCE(r.actual, r.amount) ELSE 0 END),
  SUM(COALESCE(r.actual, r.amount))
FROM credit_reservations r
JOIN credit_accounts a ON a.id = r.account_id AND a.owner_type = 'org'
JOIN organizations o ON o.id = a.owner_id
JOIN users u ON u.id = r.user_id
WHERE r.status IN ('held', 'settled')
GROUP BY a.owner_id, r.user_id;
UPDATE credit_reservations r SET spend_month = huddle_month_start(r.created_at)
FROM credit_accounts a WHERE a.id = r.account_id AND a.owner_type = 'org' AND r.status = 'held';
`).unprepared)
