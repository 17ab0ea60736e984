/**
 * Spend over a year of ledger rows (docs/operations.md, Spend): seeds a throwaway PostgreSQL
 * database with a million ledger rows (500,000 reservations, each a `reserve` and a `settle`
 * row, spread over 365 days, 2,000 members, 50 orgs), then times the spend query of the SQL
 * adapter (the statement the endpoints run) for the year, for each grouping, for the
 * deployment and for the largest org, and pages that start one group before the end of a day
 * (of a member). Standalone: not part of `npm run bench`.
 *
 * Usage: npm run build (or npx tsc -b) && node bench/spend.mjs [postgres://user@host:5432/postgres] [--rows 1000000]
 * Creates and drops a database of its own (huddle_spend_bench_<pid>; `--keep` keeps it, to look at
 * plans, and `--reuse <name>` times a kept one again without seeding).
 */
import { parseArgs } from "node:util"
import pg from "pg"
import { Effect, Layer, Redacted } from "effect"
import { Database } from "../packages/adapters/dist/index.js"
import * as SqlSpendRepository from "../packages/adapters/dist/spend/SqlSpendRepository.js"
import { SpendRepository } from "../packages/domain/dist/spend/SpendRepository.js"

const { positionals, values } = parseArgs({ allowPositionals: true, options: { rows: { type: "string", default: "1000000" }, runs: { type: "string", default: "5" }, keep: { type: "boolean", default: false }, reuse: { type: "string" } } })
const adminUrl = new URL(positionals[0] ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres")
const reservations = Math.floor(Number(values.rows) / 2)
const runs = Number(values.runs)
const name = values.reuse ?? `huddle_spend_bench_${process.pid}`
const dbUrl = new URL(adminUrl)
dbUrl.pathname = `/${name}`

const admin = new pg.Client({ connectionString: adminUrl.toString() })
await admin.connect()
if (values.reuse === undefined) await admin.query(`CREATE DATABASE ${name}`)
try {
  const layer = SqlSpendRepository.layer.pipe(Layer.provideMerge(Database.layer({ _tag: "Postgres", url: Redacted.make(dbUrl.toString()) })))
  const seed = new pg.Client({ connectionString: dbUrl.toString() })
  await Effect.runPromise(Effect.scoped(Layer.build(layer))) // migrates
  seed.on("error", () => {}) // the database is dropped under it at the end
  await seed.connect()
  const started = performance.now()
  if (values.reuse === undefined) await seed.query(`
    INSERT INTO credit_accounts (id, owner_type, owner_id, pool, balance)
    SELECT 'acc_u' || u, 'user', 'usr_' || u, 'personal', 0 FROM generate_series(1, 2000) u;
    INSERT INTO credit_accounts (id, owner_type, owner_id, pool, balance)
    SELECT 'acc_o' || o || p, 'org', 'org_' || o, p, 0 FROM generate_series(1, 50) o, unnest(ARRAY['subscription', 'addon']) p;
    -- Member u belongs to org (u % 50) + 1; three in four requests are made in its context, most paid by its pool.
    CREATE TEMP TABLE r AS
    SELECT i, 1 + (i::bigint * 7919) % 2000 AS u, now() - interval '365 days' * ((i::bigint * 104729) % ${reservations})::float8 / ${reservations} AS at,
           (ARRAY['fake-economy', 'fake-standard', 'fake-premium', 'standard', 'economy'])[1 + i % 5] AS model,
           i % 4 AS kind, 20 + i % 180 AS amount
    FROM generate_series(1, ${reservations}) i;
    INSERT INTO credit_reservations (id, account_id, user_id, org_id, amount, actual, status, purpose, created_at, closed_at)
    SELECT 'res_' || i,
           CASE kind WHEN 0 THEN 'acc_u' || u WHEN 3 THEN 'acc_o' || (1 + u % 50) || 'addon' ELSE 'acc_o' || (1 + u % 50) || 'subscription' END,
           'usr_' || u, CASE WHEN kind = 0 AND i % 8 = 0 THEN NULL ELSE 'org_' || (1 + u % 50) END,
           amount, amount / 2, 'settled', 'chat completion (' || model || ')', at, at + interval '2 seconds'
    FROM r;
    INSERT INTO credit_ledger (id, account_id, delta, kind, reservation_id, reason, actor_id, created_at, input_tokens, output_tokens)
    SELECT 'led_' || r.i || k, c.account_id, CASE k WHEN 'a' THEN -r.amount ELSE r.amount - r.amount / 2 END,
           CASE k WHEN 'a' THEN 'reserve' ELSE 'settle' END, c.id, c.purpose, c.user_id,
           CASE k WHEN 'a' THEN c.created_at ELSE c.closed_at END,
           CASE k WHEN 'b' THEN 100 + r.i % 900 END, CASE k WHEN 'b' THEN r.amount * 10 END
    FROM r JOIN credit_reservations c ON c.id = 'res_' || r.i, unnest(ARRAY['a', 'b']) k;
  `)
  for (const table of ["credit_ledger", "credit_reservations", "credit_accounts"]) await seed.query(`VACUUM ANALYZE ${table}`)
  const { rows: [count] } = await seed.query(
    `SELECT count(*)::int AS n, -sum(delta)::bigint AS spent, sum(input_tokens)::bigint AS input, sum(output_tokens)::bigint AS output FROM credit_ledger`
  )
  console.log(`seeded ${count.n} ledger rows in ${((performance.now() - started) / 1000).toFixed(1)} s`)

  const to = new Date(Date.now() + 60_000)
  const from = new Date(to.getTime() - 366 * 86_400_000)
  const tiers = [["fake-economy", "economy"], ["fake-standard", "standard"], ["fake-premium", "premium"], ["economy", "economy"], ["standard", "standard"], ["premium", "premium"]]
  const groupings = [[], ["day"], ["week"], ["month"], ["model"], ["tier"], ["member"], ["source"], ["month", "model", "source"], ["day", "member"], ["member", "day"], ["source", "day", "member"], ["model", "member", "day"]]
  const scopes = [["deployment", { _tag: "Deployment" }], ["org (1/50 of the rows)", { _tag: "Org", orgId: "org_1" }]]
  // Pages that start one group before the end of a period (of a member): the next page's
  // windows must be sized by the period's groups, not by the one left after the cursor.
  const mid = new Date(to.getTime() - 180 * 86_400_000).toISOString().slice(0, 10)
  const { rows: ofDay } = await seed.query(`
    SELECT DISTINCT actor_id COLLATE "C" AS member FROM credit_ledger
    WHERE kind <> 'grant' AND created_at >= $1::date AND created_at < $1::date + 1 ORDER BY 1 DESC LIMIT 2`, [mid])
  const { rows: ofMember } = await seed.query(`
    SELECT DISTINCT to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') COLLATE "C" AS day FROM credit_ledger
    WHERE kind <> 'grant' AND actor_id = 'usr_1000' AND created_at >= $1 AND created_at < $2 ORDER BY 1 DESC LIMIT 2`, [from, to])
  const cursors = [
    [["day", "member"], ["", mid, ofDay[1].member], `after ${mid}'s next-to-last member`],
    [["member", "day"], ["", "usr_1000", ofMember[1].day], "after usr_1000's next-to-last day"],
    // Inside the second of three sources, and in the last member of the first source.
    [["source", "day", "member"], ["", "subscription", mid, ofDay[1].member], `in subscription, after ${mid}'s next-to-last member`],
    [["source", "member", "day"], ["", "personal", "usr_999", "9999"], "after personal's last member"]
  ]
  const program = Effect.gen(function*() {
    const repository = yield* SpendRepository
    const results = []
    for (const [label, scope] of scopes) {
      for (const groupBy of groupings) {
        const times = []
        let page
        for (let run = 0; run < runs; run++) {
          const t = performance.now()
          page = yield* repository.query(scope, { from, to, groupBy, limit: 100 }, tiers)
          times.push(performance.now() - t)
        }
        times.sort((a, b) => a - b)
        if (label === "deployment") {
          const ledger = [count.spent, count.input, count.output].map(Number)
          const totals = [page.totals.credits, page.totals.input_tokens, page.totals.output_tokens]
          if (totals.some((total, i) => total !== ledger[i])) throw new Error(`totals ${totals} ≠ ledger ${ledger}`)
        }
        results.push({ scope: label, group_by: groupBy.join(",") || "(none)", median_ms: Math.round(times[Math.floor(times.length / 2)]), max_ms: Math.round(times[times.length - 1]) })
      }
    }
    for (const [groupBy, after, label] of cursors) {
      const times = []
      for (let run = 0; run < runs; run++) {
        const t = performance.now()
        yield* repository.query({ _tag: "Deployment" }, { from, to, groupBy, limit: 100, after }, tiers)
        times.push(performance.now() - t)
      }
      times.sort((a, b) => a - b)
      results.push({ scope: `deployment, ${label}`, group_by: groupBy.join(","), median_ms: Math.round(times[Math.floor(times.length / 2)]), max_ms: Math.round(times[times.length - 1]) })
    }
    return results
  })
  console.table(await Effect.runPromise(Effect.scoped(Effect.provide(program, layer))))
  await seed.end()
} catch (error) {
  console.error(error)
  process.exitCode = 1
} finally {
  if (values.keep || values.reuse !== undefined) console.log(`kept ${dbUrl}`)
  else await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  await admin.end()
}
