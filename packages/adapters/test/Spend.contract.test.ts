/**
 * The spend query against a model of it: random reservations (settled, released or still held,
 * closed minutes or days later, paid personally or from an org's pool, in an org's context or
 * not, for chat completions of several models or for intents) and grants, then random ranges,
 * groupings and page sizes. Walking every page gives exactly the groups the model computes from
 * the same ledger rows, in key order, and the totals are the ledger's sum. Tokens are summed from
 * the settle rows that carry them (rows written before they were recorded hold none). On both engines.
 */
import { SqlClient } from "@effect/sql"
import { Database } from "@huddle/adapters"
import * as SqlSpendRepository from "@huddle/adapters/spend/SqlSpendRepository"
import type { GroupKey, SpendRow } from "@huddle/domain/spend/SpendQuery"
import { SpendRepository, type SpendScope } from "@huddle/domain/spend/SpendRepository"
import { TestDatabase } from "@huddle/testkit"
import { Effect, FastCheck as fc, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const day = 86_400_000
const tiers: ReadonlyArray<readonly [string, string]> = [["m-eco", "economy"], ["m-std", "standard"], ["economy", "economy"], ["standard", "standard"]]
const users = ["usr_a", "usr_b", "usr_c", "usr_d", "usr_e", "usr_f"]
const orgs = ["org_x", "org_y"]

interface Reservation {
  readonly user: number
  /** Paid from the user's personal balance, or from the context org's subscription or add-on. */
  readonly pool: "personal" | "subscription" | "addon"
  /** The org context (required for an org pool). */
  readonly org: number | null
  readonly model: string | null
  readonly at: number
  readonly amount: number
  readonly outcome: "settled" | "released" | "held"
  readonly actualShare: number
  readonly closeAfter: number
  /** The tokens on its settle row; null for a row that has none. */
  readonly tokens: readonly [input: number, output: number] | null
}

const reservation = fc.record({
  user: fc.integer({ min: 0, max: users.length - 1 }),
  pool: fc.constantFrom("personal" as const, "subscription" as const, "addon" as const),
  org: fc.option(fc.integer({ min: 0, max: orgs.length - 1 }), { nil: null }),
  // "" names no model as surely as an intent does (its key is empty too).
  model: fc.constantFrom("m-eco", "m-std", "economy", "unlisted-model", "", null),
  at: fc.integer({ min: 0, max: 60 * day }),
  amount: fc.integer({ min: 1, max: 500 }),
  outcome: fc.constantFrom("settled" as const, "released" as const, "held" as const),
  actualShare: fc.double({ min: 0, max: 1, noNaN: true }),
  closeAfter: fc.integer({ min: 0, max: 3 * day }),
  tokens: fc.option(fc.tuple(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 100_000 })), { nil: null })
}).map((r): Reservation => r.pool !== "personal" && r.org === null ? { ...r, org: 0 } : r)

const groupBy = fc.tuple(
  fc.constantFrom<ReadonlyArray<GroupKey>>([], ["day"], ["week"], ["month"]),
  fc.subarray<GroupKey>(["model", "tier", "member", "source"])
).chain(([time, dims]) => fc.shuffledSubarray([...time, ...dims], { minLength: time.length + dims.length }))

const period = fc.constantFrom<GroupKey>("day", "week", "month")

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const periodOf = (key: GroupKey, ms: number) => {
  const d = new Date(ms)
  if (key === "day") return iso(ms)
  if (key === "month") return `${iso(ms).slice(0, 7)}-01`
  return iso(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - (d.getUTCDay() + 6) % 7))
}

describe.each(TestDatabase.availableEngines())("the spend query against a model of it (%s)", (engine) => {
  let database: TestDatabase.FreshDatabase
  let runtime: ManagedRuntime.ManagedRuntime<SpendRepository | SqlClient.SqlClient, never>
  let run = 0

  beforeAll(async () => {
    database = await TestDatabase.fresh(engine)
    runtime = ManagedRuntime.make(SqlSpendRepository.layer.pipe(Layer.provideMerge(Database.layer(database.engine)))) as typeof runtime
    await runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const user of users) yield* sql`INSERT INTO credit_accounts (id, owner_type, owner_id, pool) VALUES (${`acc_${user}`}, 'user', ${user}, 'personal')`
      for (const org of orgs) {
        for (const pool of ["subscription", "addon"]) {
          yield* sql`INSERT INTO credit_accounts (id, owner_type, owner_id, pool) VALUES (${`acc_${org}_${pool}`}, 'org', ${org}, ${pool})`
        }
      }
    }))
  }, 60_000)
  afterAll(async () => {
    await runtime.dispose()
    await database.drop()
  })

  const walksLikeTheModel = async (
    reservations: ReadonlyArray<Reservation>,
    keys: ReadonlyArray<GroupKey>,
    limit: number,
    [start, length]: readonly [number, number],
    orgScope: number | null
  ) => {
    // Each run in a year of its own: the ledger keeps what earlier runs wrote.
    const base = Date.UTC(2001 + run, 0, 3)
    const prefix = `r${run++}`
    interface LedgerRow {
      readonly at: number
      readonly delta: number
      readonly kind: string
      readonly r: Reservation
      readonly tokens: readonly [number, number] | null
    }
    const ledger: Array<LedgerRow> = []
    await runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const [i, r] of reservations.entries()) {
        const id = `res_${prefix}_${i}`
        const account = r.pool === "personal" ? `acc_${users[r.user]}` : `acc_${orgs[r.org!]}_${r.pool}`
        const purpose = r.model === null ? `intent int_${i}` : `chat completion (${r.model})`
        const at = new Date(base + r.at)
        const actual = r.outcome === "settled" ? Math.floor(r.amount * r.actualShare) : 0
        const closedAt = new Date(base + r.at + r.closeAfter)
        yield* sql`INSERT INTO credit_reservations (id, account_id, user_id, org_id, amount, actual, status, purpose, created_at, closed_at)
          VALUES (${id}, ${account}, ${users[r.user]!}, ${r.org === null ? null : orgs[r.org]!}, ${r.amount},
                  ${r.outcome === "held" ? null : actual}, ${r.outcome}, ${purpose}, ${at}, ${r.outcome === "held" ? null : closedAt})`
        const rows: Array<[string, number, Date]> = [["reserve", -r.amount, at]]
        if (r.outcome !== "held") rows.push([r.outcome === "settled" ? "settle" : "release", r.amount - actual, closedAt])
        for (const [j, [kind, delta, when]] of rows.entries()) {
          const tokens = kind === "settle" ? r.tokens : null
          yield* sql`INSERT INTO credit_ledger (id, account_id, delta, kind, reservation_id, reason, actor_id, created_at, input_tokens, output_tokens)
            VALUES (${`led_${prefix}_${i}_${j}`}, ${account}, ${delta}, ${kind}, ${id}, ${purpose}, ${users[r.user]!}, ${when},
                    ${tokens?.[0] ?? null}, ${tokens?.[1] ?? null})`
          ledger.push({ at: when.getTime(), delta, kind, r, tokens })
        }
        // A grant in the same window: never spend.
        yield* sql`INSERT INTO credit_ledger (id, account_id, delta, kind, reason, actor_id, created_at)
          VALUES (${`led_${prefix}_${i}_g`}, ${account}, 1000, 'grant', 'top-up', NULL, ${at})`
      }
    }))

    const from = base + start * day
    const to = from + length * day
    const scope: SpendScope = orgScope === null ? { _tag: "Deployment" } : { _tag: "Org", orgId: orgs[orgScope]! }
    // The model: the same rows, grouped in JavaScript.
    const expected = new Map<string, { keys: Array<string>; row: Record<string, unknown> }>()
    const totals = { credits: 0, calls: 0, input_tokens: 0, output_tokens: 0 }
    for (const row of ledger) {
      if (row.at < from || row.at >= to) continue
      if (orgScope !== null && row.r.org !== orgScope) continue
      const model = row.r.model === "" ? null : row.r.model
      const values: Record<GroupKey, string | null> = {
        day: periodOf("day", row.at),
        week: periodOf("week", row.at),
        month: periodOf("month", row.at),
        model,
        tier: tiers.find(([name]) => name === model)?.[1] ?? null,
        member: users[row.r.user]!,
        source: row.r.pool
      }
      const keyList = ["", ...keys.map((key) => values[key] ?? "")]
      const id = JSON.stringify(keyList)
      const group = expected.get(id) ?? { keys: keyList, row: { credits: 0, calls: 0, input_tokens: 0, output_tokens: 0 } }
      keys.forEach((key) => {
        group.row[key === "day" || key === "week" || key === "month" ? "period" : key] = values[key]
      })
      const added = { credits: -row.delta, calls: row.kind === "settle" ? 1 : 0, input_tokens: row.tokens?.[0] ?? 0, output_tokens: row.tokens?.[1] ?? 0 }
      for (const [field, value] of Object.entries(added) as Array<[keyof typeof totals, number]>) {
        group.row[field] = (group.row[field] as number) + value
        totals[field] += value
      }
      expected.set(id, group)
    }
    const compare = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => {
      for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1
      return 0
    }
    const want = [...expected.values()].sort((a, b) => compare(a.keys, b.keys)).map((group) => group.row)

    const walked: Array<SpendRow> = []
    let after: ReadonlyArray<string> | undefined
    for (let pages = 0; ; pages++) {
      const page = await runtime.runPromise(Effect.flatMap(SpendRepository, (repository) =>
        repository.query(scope, { from: new Date(from), to: new Date(to), groupBy: keys, limit, after }, tiers)))
      expect({ ...page.totals }).toEqual(totals)
      expect(page.rows.length).toBeLessThanOrEqual(limit)
      walked.push(...page.rows)
      if (page.next === null) break
      after = page.next
      expect(pages).toBeLessThan(100)
    }
    expect(walked.map((row) => ({ ...row }))).toEqual(want)
  }

  it("gives the model's groups, in key order, page after page, and the ledger's totals", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(reservation, { maxLength: 40 }),
        groupBy,
        fc.integer({ min: 1, max: 6 }),
        fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 70 })),
        fc.option(fc.integer({ min: 0, max: orgs.length - 1 }), { nil: null }),
        walksLikeTheModel
      ),
      // Each run writes to a database: shrinking a failure is bounded so that it reports in time.
      { numRuns: 40, interruptAfterTimeLimit: 120_000, markInterruptAsFailure: true }
    )
  }, 240_000)

  // A grouping that starts with a period, or with the member and then a period (after keys of few
  // values, or first), is paged window by window: pages that end inside a period or a member, or
  // inside a group of the leading keys, windows that grow over empty periods, weeks and months cut
  // by the range.
  it("pages a grouping by period first, or by member and period, after keys of few values or not, the same, whatever its windows", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(reservation, { minLength: 10, maxLength: 60 }),
        fc.oneof(
          fc.tuple(period, fc.shuffledSubarray<GroupKey>(["model", "member", "source"], { minLength: 1 })).map(([time, dims]) => [time, ...dims]),
          fc.tuple(period, fc.shuffledSubarray<GroupKey>(["model", "source"])).map(([time, dims]) => ["member" as const, time, ...dims]),
          // Leading keys of few values, then the member and a period in either order (and maybe more after).
          fc.tuple(
            fc.shuffledSubarray<GroupKey>(["model", "tier", "source"], { minLength: 1 }),
            period,
            fc.boolean(),
            fc.shuffledSubarray<GroupKey>(["model", "tier", "source"])
          ).map(([lead, time, memberFirst, after]) => [
            ...lead,
            ...(memberFirst ? ["member" as const, time] : [time, "member" as const]),
            ...after.filter((key) => !lead.includes(key))
          ])
        ),
        fc.integer({ min: 1, max: 4 }),
        fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 20, max: 70 })),
        fc.option(fc.integer({ min: 0, max: orgs.length - 1 }), { nil: null }),
        walksLikeTheModel
      ),
      { numRuns: 30, interruptAfterTimeLimit: 120_000, markInterruptAsFailure: true }
    )
  }, 240_000)

  // A cursor is the client's to send: a period that is not a date (`2025-02-30`, which a Date
  // reads as 2 March) pages by its key alone, from the first day after it in key order.
  it("pages after a made-up period by its key, skipping no day", async () => {
    const days = ["1990-02-27", "1990-02-28", "1990-03-01", "1990-03-02", "1990-03-03"]
    await runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const [i, day] of days.entries()) {
        const at = new Date(`${day}T12:00:00Z`)
        yield* sql`INSERT INTO credit_reservations (id, account_id, user_id, org_id, amount, actual, status, purpose, created_at, closed_at)
          VALUES (${`res_made_up_${i}`}, 'acc_usr_a', 'usr_a', NULL, 10, 10, 'settled', 'chat completion (m-eco)', ${at}, ${at})`
        yield* sql`INSERT INTO credit_ledger (id, account_id, delta, kind, reservation_id, reason, actor_id, created_at)
          VALUES (${`led_made_up_${i}`}, 'acc_usr_a', -10, 'reserve', ${`res_made_up_${i}`}, 'chat completion (m-eco)', 'usr_a', ${at})`
      }
    }))
    const query = (groupBy: ReadonlyArray<GroupKey>, after: ReadonlyArray<string>) =>
      runtime.runPromise(Effect.flatMap(SpendRepository, (repository) =>
        repository.query({ _tag: "Deployment" }, { from: new Date("1990-02-01T00:00:00Z"), to: new Date("1990-04-01T00:00:00Z"), groupBy, limit: 10, after }, tiers)))
    const byDay = await query(["day"], ["", "1990-02-30"])
    expect(byDay.rows.map((row) => row.period)).toEqual(["1990-03-01", "1990-03-02", "1990-03-03"])
    const byMonth = await query(["month", "member"], ["", "1990-02-30", ""])
    expect(byMonth.rows.map((row) => ({ ...row }))).toEqual([{ period: "1990-03-01", member: "usr_a", credits: 30, calls: 0, input_tokens: 0, output_tokens: 0 }])
  })
})
