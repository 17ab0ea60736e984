/**
 * The money check of the benchmark, read from PostgreSQL with plain SQL after the run (and after
 * the Huddle processes have stopped, so that whatever an instance keeps for itself, such as a
 * credit lease, has been given back):
 *
 * - every account's balance equals the sum of its ledger rows, and none is negative;
 * - no reservation is left `held`; where the schema has credit leases (a `leased` earmark on the
 *   account, a `credit_leases` table), none is left open or earmarked;
 * - a pool drained under load (an org granted a few seconds' worth of credits, hammered by 50
 *   connections on one instance or on two sharing the database) paid for every answer and for no
 *   more than it held: the answers the load generator received, at their known price, are
 *   within the grant (no overspend), and within what the ledger charged (no answer for free).
 */
import * as Huddle from "./huddle.mjs"
import * as Load from "./load.mjs"
import * as Postgres from "./postgres.mjs"

const num = (value) => Number(value ?? 0)

const hasTable = async (url, table) => (await Postgres.query(url, "SELECT to_regclass($1) IS NOT NULL AS present", [`public.${table}`]))[0].present
const hasColumn = async (url, table, column) =>
  (await Postgres.query(url, "SELECT count(*)::int AS n FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 AND column_name = $2", [table, column]))[0].n > 0

/** Reservations still held (count and credits). */
export const held = async (url) => {
  const [row] = await Postgres.query(url, "SELECT count(*)::int AS n, COALESCE(SUM(amount), 0)::float8 AS credits FROM credit_reservations WHERE status = 'held'")
  return { count: row.n, credits: num(row.credits) }
}

/** Counts of reservations by status. */
export const reservations = async (url) =>
  Object.fromEntries((await Postgres.query(url, "SELECT status, count(*)::int AS n FROM credit_reservations GROUP BY status")).map((r) => [r.status, r.n]))

/** The invariants over every account of the database. */
export const integrity = async (url) => {
  const leasedColumn = await hasColumn(url, "credit_accounts", "leased")
  const accounts = await Postgres.query(
    url,
    `SELECT a.id, a.balance::float8 AS balance, COALESCE(l.total, 0)::float8 AS ledger${leasedColumn ? ", a.leased::float8 AS leased" : ""}
     FROM credit_accounts a
     LEFT JOIN (SELECT account_id, SUM(delta) AS total FROM credit_ledger GROUP BY account_id) l ON l.account_id = a.id`
  )
  const leaseTable = await hasTable(url, "credit_leases")
  const openLeases = leaseTable ? (await Postgres.query(url, "SELECT count(*)::int AS n FROM credit_leases WHERE status = 'open'"))[0].n : undefined
  const stillHeld = await held(url)
  return {
    accounts: accounts.length,
    // balance ≠ the sum of its ledger: credits minted or lost outside the ledger.
    mismatched: accounts.filter((a) => a.balance !== a.ledger).map((a) => ({ id: a.id, balance: a.balance, ledger: a.ledger })),
    negative: accounts.filter((a) => a.balance < 0 || (a.leased ?? 0) < 0).length,
    held: stillHeld.count,
    heldCredits: stillHeld.credits,
    leased: leasedColumn ? accounts.reduce((sum, a) => sum + (a.leased ?? 0), 0) : undefined,
    openLeases
  }
}

/**
 * Drains a new org's pool of `credits` under load: `connections` non-streaming connections on
 * `urls` (one instance, or several sharing the database, dealt round-robin) for `seconds`. The
 * org is set up through `setupUrl` as the benchmark's own (bench/lib/huddle.mjs).
 */
export const drain = async ({ label, urls, setupUrl, credits, seconds, connections }) => {
  const accounts = await Huddle.setup(setupUrl, { keys: 1, orgCredits: credits })
  const target = { name: `drain-${label}`, url: urls[0], urls, keys: accounts.apiKeys }
  const result = await Load.run(target, "nonstream", { connections, seconds })
  const codes = Object.fromEntries(Object.entries(result.statusCodes ?? {}).map(([code, stat]) => [code, stat.count]))
  return {
    label,
    instances: urls.length,
    orgId: accounts.orgId,
    credits,
    answered: result.ok,
    refused: codes["402"] ?? 0,
    // Anything else that is not a 2xx or a 402 is a failure of the run.
    failed: result.errors + result.timeouts + Object.entries(codes).filter(([code]) => !code.startsWith("2") && code !== "402").reduce((a, [, n]) => a + n, 0),
    codes
  }
}

/** What a drained org's pool was granted and what is left, from the ledger and the accounts. */
export const drainedOutcome = async (url, drained) => {
  const [row] = await Postgres.query(
    url,
    `SELECT COALESCE(SUM(a.balance), 0)::float8 AS balance,
            COALESCE((SELECT SUM(l.delta) FROM credit_ledger l JOIN credit_accounts b ON b.id = l.account_id
                      WHERE b.owner_type = 'org' AND b.owner_id = $1 AND l.kind = 'grant'), 0)::float8 AS granted
     FROM credit_accounts a WHERE a.owner_type = 'org' AND a.owner_id = $1`,
    [drained.orgId]
  )
  const charged = row.granted - row.balance
  const owed = drained.answered * Huddle.costPerAnswer
  return {
    ...drained,
    granted: row.granted,
    balance: row.balance,
    charged,
    owed,
    // More answered (at their price), or more charged, than the pool was granted.
    overspend: Math.max(0, owed - row.granted, charged - row.granted),
    // Answers the ledger did not charge for (cut requests may be charged without an answer counted).
    unpaid: Math.max(0, owed - charged),
    exhausted: drained.refused > 0
  }
}
