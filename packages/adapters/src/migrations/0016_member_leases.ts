/**
 * Leases on org pools (decision 0021, extended): an instance earmarks a block of an org account
 * for one member, and the earmark counts against that member's cap while it is held
 * (`member_spending.leased`), so that a cap stays exact although the member's reservations are
 * made in memory. A member lease names its org and member (`credit_leases.org_id`, `user_id`);
 * a lease of a personal balance names neither.
 *
 * `huddle_take_lease` takes a lease in one round trip (it was a transaction of seven): in a
 * function each statement reads the latest committed rows, so what is free is read under the
 * account's row lock, then the member's spending row's, the order every statement takes them in.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
ALTER TABLE member_spending ADD COLUMN leased bigint NOT NULL DEFAULT 0 CHECK (leased >= 0);
ALTER TABLE credit_leases ADD COLUMN org_id text;
ALTER TABLE credit_leases ADD COLUMN user_id text;
ALTER TABLE credit_leases ADD CONSTRAINT credit_leases_member_check CHECK ((org_id IS NULL) = (user_id IS NULL));

-- Earmarks between p_need and p_want credits of the account for the instance (for p_user_id's
-- spending on an org pool, within what their cap leaves, counting their earmarks as spent), or
-- nothing when fewer than p_need are free. A member takes at most half of what the pool has free
-- beyond their need, so that one member's lease does not leave the others nothing. Answers what it
-- took, what the cap left (NULL: no cap), the month the member's spending counts
-- in (the database's clock decides it, as for the SQL store), and, when it took nothing, what
-- others hold: earmarks (the account's and the member's, this instance's included) and whether
-- reservations are held by other instances.
CREATE FUNCTION huddle_take_lease(
  p_lease_id text, p_instance_id text, p_owner_type text, p_owner_id text, p_pool text,
  p_user_id text, p_need bigint, p_want bigint
) RETURNS TABLE (
  taken bigint, account_id text, leased_before bigint, member_leased_before bigint, held_elsewhere boolean,
  cap_amount bigint, cap_period text, cap_used bigint, room bigint, month_start timestamptz
) LANGUAGE plpgsql AS $$
DECLARE
  acc record;
  cap bigint;
  period text;
  member_leased bigint := 0;
  used bigint;
  cap_room bigint;
  took bigint;
BEGIN
  SELECT a.id, a.balance, a.leased INTO acc FROM credit_accounts a
  WHERE a.owner_type = p_owner_type AND a.owner_id = p_owner_id AND a.pool = p_pool FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 0::bigint, NULL::text, 0::bigint, 0::bigint, false, NULL::bigint, NULL::text, NULL::bigint,
      NULL::bigint, huddle_month_start(now());
    RETURN;
  END IF;
  IF p_user_id IS NOT NULL THEN
    INSERT INTO member_spending AS s (org_id, user_id, month_start, updated_at)
    VALUES (p_owner_id, p_user_id, huddle_month_start(now()), now())
    ON CONFLICT (org_id, user_id) DO UPDATE SET
      month_spent = CASE WHEN s.month_start < EXCLUDED.month_start THEN 0 ELSE s.month_spent END,
      month_start = GREATEST(s.month_start, EXCLUDED.month_start)
    RETURNING s.cap_amount, s.cap_period, s.leased,
              CASE s.cap_period WHEN 'total' THEN s.total_spent ELSE s.month_spent END
    INTO cap, period, member_leased, used;
    cap_room := CASE WHEN cap IS NULL THEN NULL ELSE cap - used - member_leased END;
  END IF;
  took := LEAST(acc.balance - acc.leased, p_want, COALESCE(cap_room, p_want));
  IF p_user_id IS NOT NULL AND took > p_need THEN
    took := GREATEST(p_need, LEAST(took, (acc.balance - acc.leased) / 2));
  END IF;
  IF took < p_need THEN
    RETURN QUERY SELECT 0::bigint, acc.id::text, acc.leased::bigint, member_leased,
      EXISTS (SELECT 1 FROM credit_reservations r WHERE r.account_id = acc.id AND r.status = 'held'
              AND r.instance_id IS DISTINCT FROM p_instance_id),
      cap, period, used, cap_room, huddle_month_start(now());
    RETURN;
  END IF;
  UPDATE credit_accounts SET leased = leased + took WHERE id = acc.id;
  IF p_user_id IS NOT NULL THEN
    UPDATE member_spending SET leased = leased + took WHERE org_id = p_owner_id AND user_id = p_user_id;
  END IF;
  INSERT INTO credit_leases (id, account_id, instance_id, amount, status, created_at, org_id, user_id)
  VALUES (p_lease_id, acc.id, p_instance_id, took, 'open', now(),
          CASE WHEN p_user_id IS NULL THEN NULL ELSE p_owner_id END, p_user_id);
  RETURN QUERY SELECT took, acc.id::text, acc.leased::bigint, member_leased, false, cap, period, used,
    cap_room, huddle_month_start(now());
END;
$$;
`).unprepared)
