/**
 * The laws of credit leases (decision 0021), on every engine: a lost instance's leases give back
 * every credit and a paused one that comes back charges nothing against them; two instances on one
 * account never spend more than it holds and every charge is in the ledger; a clean stop returns
 * what its leases did not use. Instances share one database: PostgreSQL only (each PGlite runtime
 * is a database of its own); the laws of one instance with leases, on both engines, are those of
 * `Credits.contract.test.ts` in its leased mode.
 */
import { SqlClient, Statement } from "@effect/sql"
import { type Cap, CreditStore } from "@huddle/domain/credits/CreditStore"
import * as Credits from "@huddle/domain/credits/Credits"
import * as InstanceLiveness from "@huddle/domain/instances/InstanceLiveness"
import { Instances } from "@huddle/domain/instances/Instances"
import { Database, LeasedCreditStore } from "@huddle/adapters"
import { CreditsHarness, TestDatabase } from "@huddle/testkit"
import { Duration, Effect, Either, FastCheck as fc, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

type Runtime = ManagedRuntime.ManagedRuntime<Layer.Layer.Success<ReturnType<typeof CreditsHarness.layer>>, never>

// PostgreSQL only: two instances need one database (each PGlite runtime is a database of its own).
const engine = "postgres" as const
describe.skipIf(!TestDatabase.availableEngines().includes(engine))(`credit leases on ${engine}`, () => {
  let database: TestDatabase.FreshDatabase
  const runtimes: Array<Runtime> = []
  /** An instance of the store over the shared database; `tick` how often it writes its batch. */
  const instance = (tick: Duration.DurationInput): Runtime => {
    const runtime = ManagedRuntime.make(
      CreditsHarness.layer(Database.layer(database.engine)).pipe(
        Layer.provide(Layer.succeed(LeasedCreditStore.CreditLeases, { ...LeasedCreditStore.defaults, tick: Duration.decode(tick) })),
        Layer.orDie
      )
    )
    runtimes.push(runtime)
    return runtime
  }
  let a: Runtime

  beforeAll(async () => {
    database = await TestDatabase.fresh(engine)
    a = instance("20 millis")
  }, 60_000)
  afterAll(async () => {
    for (const runtime of runtimes) await runtime.dispose().catch(() => undefined)
    await database.drop()
  })

  const leasedOn = (userId: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ leased: string }>`SELECT leased FROM credit_accounts WHERE owner_type = 'user' AND owner_id = ${userId}`.pipe(
        Effect.map(([row]) => Number(row?.leased ?? 0)),
        Effect.orDie
      ))
  const heldOf = (userId: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ held: string }>`
        SELECT COALESCE(SUM(r.amount), 0)::bigint AS held FROM credit_reservations r JOIN credit_accounts c ON c.id = r.account_id
        WHERE c.owner_id = ${userId} AND r.status = 'held'`.pipe(Effect.map(([row]) => Number(row!.held)), Effect.orDie))

  /** A new payer with `amount` credits granted to its personal account. */
  const grantedPayer = async (amount: number) => {
    const { authority, userId } = await a.runPromise(CreditsHarness.makePayer(null))
    const personal = { ownerType: "user", ownerId: userId, pool: "personal" } as const
    await a.runPromise(Effect.flatMap(CreditStore, (store) => store.grant({ account: personal, amount, reason: "test", actorId: null })))
    return { authority, userId, personal }
  }
  /**
   * The database refuses `userId`'s reservations (a trigger), through a batch's retries too,
   * until `allow`; `remove` (in a `finally`) leaves nothing behind.
   */
  const refuseReservationsOf = async (userId: string) => {
    const sql = (text: string) => a.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text)).pipe(Effect.orDie))
    await sql(`CREATE OR REPLACE FUNCTION huddle_test_refuse() RETURNS trigger AS $$ BEGIN
                 IF NEW.user_id = '${userId}' THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`)
    await sql("CREATE TRIGGER huddle_test_refuse BEFORE INSERT OR UPDATE ON credit_reservations FOR EACH ROW EXECUTE FUNCTION huddle_test_refuse()")
    const allow = () => sql("DROP TRIGGER IF EXISTS huddle_test_refuse ON credit_reservations")
    return { allow, remove: () => allow().then(() => sql("DROP FUNCTION IF EXISTS huddle_test_refuse()")) }
  }

  it("gives back every credit of a lost instance's lease; the instance, back from a pause, charges nothing against it", async () => {
    const paused = instance("1 hour") // writes nothing until asked
    const { authority, personal, userId } = await grantedPayer(100)
    const reserve = (amount: number) => (credits: Credits.Service) =>
      credits.reserve({ userId, orgId: null, amount, creditFallback: false, purpose: "lease", authority })

    // The paused instance takes a lease and reserves from it in memory, then stops answering.
    const { id, onLease } = await paused.runPromise(Effect.gen(function*() {
      const credits = yield* Credits.Credits
      const first = yield* reserve(30)(credits)
      // Settled for nothing: closed in memory, unwritten (a charge would be written at once, decision 0041).
      yield* credits.settle(first, 0)
      yield* reserve(20)(credits)
      const sql = yield* SqlClient.SqlClient
      const id = (yield* Instances).id
      yield* sql`INSERT INTO instances (id, started_at, heartbeat_at) VALUES (${id}, now() - interval '1 hour', now() - interval '5 minutes')`
      return { id, onLease: yield* leasedOn(userId) }
    }))
    expect(onLease).toBe(100)

    const afterReclaim = await a.runPromise(Effect.gen(function*() {
      const credits = yield* Credits.Credits
      const store = yield* CreditStore
      const liveness = { every: Duration.seconds(10), staleAfter: Duration.seconds(30) }
      const reclaimed = yield* InstanceLiveness.reclaim.pipe(Effect.provideService(InstanceLiveness.InstanceLiveness, liveness))
      const leased = yield* leasedOn(userId)
      // All of it is spendable again, here.
      const all = yield* reserve(100)(credits)
      yield* credits.release(all)
      return { reclaimed, leased, balance: yield* store.balance(personal), ledger: yield* store.ledgerTotal(personal) }
    }))
    expect(afterReclaim.reclaimed.instances).toBe(1)
    expect(afterReclaim.leased).toBe(0)
    expect(afterReclaim.balance).toBe(100)
    expect(afterReclaim.ledger).toBe(100)

    // Back from its pause, the instance writes its batch: its leases were reclaimed, so nothing is charged.
    const afterReturn = await paused.runPromise(Effect.gen(function*() {
      const store = yield* CreditStore
      const credits = yield* Credits.Credits
      const balance = yield* store.balance(personal)
      const ledger = yield* store.ledgerTotal(personal)
      // And it works on: a new lease, a new reservation, written by the next batch.
      const next = yield* reserve(5)(credits)
      yield* credits.settle(next, 5)
      return { balance, ledger, after: yield* store.balance(personal), afterLedger: yield* store.ledgerTotal(personal) }
    }))
    expect(afterReturn).toEqual({ balance: 100, ledger: 100, after: 95, afterLedger: 95 })
    expect(await a.runPromise(Effect.all([leasedOn(userId), heldOf(userId)]))).toEqual([0, 0])
    expect(id).toMatch(/^ins_/)
  }, 60_000)

  it("never lets two instances on one account spend more than it holds, and writes every charge to the ledger", async () => {
    const b = instance("7 millis")
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          grant: fc.integer({ min: 0, max: 400 }),
          requests: fc.array(
            fc.record({ on: fc.boolean(), amount: fc.integer({ min: 1, max: 60 }), use: fc.double({ min: 0, max: 1.2, noNaN: true }), close: fc.constantFrom("settle", "release"), pause: fc.nat(15) }),
            { maxLength: 40 }
          )
        }),
        async ({ grant, requests }) => {
          const { authority, userId } = await a.runPromise(CreditsHarness.makePayer(null))
          const personal = { ownerType: "user", ownerId: userId, pool: "personal" } as const
          if (grant > 0) await a.runPromise(Effect.flatMap(CreditStore, (store) => store.grant({ account: personal, amount: grant, reason: "test", actorId: null })))
          const outcomes = await Promise.all(requests.map((request) =>
            (request.on ? a : b).runPromise(Effect.gen(function*() {
              const credits = yield* Credits.Credits
              const held = yield* Effect.either(
                credits.reserve({ userId, orgId: null, amount: request.amount, creditFallback: false, purpose: "two", authority })
              )
              if (Either.isLeft(held)) return { held: 0, charged: 0 }
              yield* Effect.sleep(Duration.millis(request.pause))
              const charged = request.close === "settle"
                ? yield* credits.settle(held.right, Math.round(request.amount * request.use))
                : yield* Effect.as(credits.release(held.right), 0)
              return { held: request.amount, charged }
            }))
          ))
          const charged = outcomes.reduce((sum, o) => sum + o.charged, 0)
          // Held at once can never exceed the grant; what was charged neither.
          expect(charged).toBeLessThanOrEqual(grant)
          await b.runPromise(Effect.flatMap(CreditStore, (store) => store.balance(personal)))
          const [balance, ledger, leased, held] = await a.runPromise(Effect.flatMap(CreditStore, (store) =>
            Effect.all([store.balance(personal), store.ledgerTotal(personal), leasedOn(userId), heldOf(userId)])))
          expect({ balance, ledger, leased, held }).toEqual({ balance: grant - charged, ledger: grant - charged, leased: 0, held: 0 })
        }
      ),
      { numRuns: 30 }
    )
  }, 120_000)

  it("answers 402 only when the account is short, whichever instance holds the lease", async () => {
    const b = instance("20 millis")
    const { authority, userId } = await grantedPayer(100)
    const reserve = (runtime: Runtime, amount: number) =>
      runtime.runPromise(Effect.flatMap(Credits.Credits, (credits) =>
        Effect.either(credits.reserve({ userId, orgId: null, amount, creditFallback: false, purpose: "short", authority }))))
    // A leases all 100 for a reservation of 10; B asks for 90 before A's tick gives the rest back.
    const first = await reserve(a, 10)
    const second = await reserve(b, 90)
    const third = await reserve(b, 1)
    expect([first._tag, second._tag, third._tag]).toEqual(["Right", "Right", "Left"])
  }, 60_000)

  it("pays from a lease of the org pool without locking a member's empty personal account, and from the personal balance as soon as it is granted", async () => {
    const orgId = await a.runPromise(CreditsHarness.makeOrg)
    const { authority, userId } = await a.runPromise(CreditsHarness.makePayer(orgId))
    const personal = { ownerType: "user", ownerId: userId, pool: "personal" } as const
    const pool = { ownerType: "org", ownerId: orgId, pool: "subscription" } as const
    await a.runPromise(Effect.flatMap(CreditStore, (store) => store.grant({ account: pool, amount: 1000, reason: "test", actorId: null })))
    const statements: Array<string> = []
    /** The accounts leases were taken of, by owner type. */
    const locked: Array<unknown> = []
    const paidBy = (amount: number) =>
      a.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const held = yield* credits.reserve({ userId, orgId, amount, creditFallback: true, purpose: "empty", authority })
        yield* credits.settle(held, amount)
        return held.source
      }).pipe((effect) =>
        Statement.withTransformer(effect, (statement) =>
          Effect.sync(() => {
            const [text, params] = statement.compile()
            statements.push(text.replace(/\s+/g, " ").trim())
            // A lease is taken by one statement, which locks the account it names (its third parameter: the owner type).
            if (/huddle_take_lease/.test(text)) locked.push(params[2])
            return statement
          }))
      ))
    // No personal account at all, then one with too little: the pool pays, from a lease of its
    // own, and the personal account is never locked (the lease's statements run in the request's
    // fiber, where they would be seen).
    for (const grant of [0, 5]) {
      if (grant > 0) await a.runPromise(Effect.flatMap(CreditStore, (store) => store.grant({ account: personal, amount: grant, reason: "test", actorId: null })))
      statements.length = 0
      locked.length = 0
      expect(await paidBy(10)).toBe("subscription")
      expect(locked, statements.join("\n")).not.toContain("user")
      // The pool's statement of the SQL store (a reservation per request) is not used.
      expect(statements.filter((sql) => /INSERT INTO credit_reservations/.test(sql)), statements.join("\n")).toEqual([])
    }
    // Granted enough (on another instance): the very next reservation is paid by the member, from a lease.
    await instance("20 millis").runPromise(Effect.flatMap(CreditStore, (store) => store.grant({ account: personal, amount: 100, reason: "test", actorId: null })))
    statements.length = 0
    expect(await paidBy(10)).toBe("personal")
    expect(locked, statements.join("\n")).toContain("user")
    statements.length = 0
    expect(await paidBy(10)).toBe("personal")
    const [balance, ledger] = await a.runPromise(Effect.flatMap(CreditStore, (store) => Effect.all([store.balance(personal), store.ledgerTotal(personal)])))
    expect([balance, ledger]).toEqual([85, 85])
    expect(await a.runPromise(Effect.flatMap(CreditStore, (store) => store.balance(pool)))).toBe(980)
  }, 60_000)

  const memberLeased = (orgId: string, userId: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ leased: string }>`SELECT leased FROM member_spending WHERE org_id = ${orgId} AND user_id = ${userId}`.pipe(
        Effect.map(([row]) => Number(row?.leased ?? 0)),
        Effect.orDie
      ))
  const poolLeased = (orgId: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ leased: string }>`SELECT COALESCE(SUM(leased), 0)::bigint AS leased FROM credit_accounts WHERE owner_type = 'org' AND owner_id = ${orgId}`.pipe(
        Effect.map(([row]) => Number(row!.leased)),
        Effect.orDie
      ))

  it("keeps a member's cap exact when two instances lease the org's pools, and answers 402 only at the cap or the pools' end", async () => {
    const b = instance("9 millis")
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          subscription: fc.integer({ min: 0, max: 300 }),
          addon: fc.integer({ min: 0, max: 300 }),
          cap: fc.option(fc.record({ amount: fc.integer({ min: 0, max: 250 }), period: fc.constantFrom("month" as const, "total" as const) }), { nil: null }),
          amount: fc.integer({ min: 1, max: 40 }),
          requests: fc.array(fc.record({ on: fc.boolean(), use: fc.double({ min: 0, max: 1.2, noNaN: true }), pause: fc.nat(10) }), { maxLength: 30 })
        }),
        async ({ addon, amount, cap, requests, subscription }) => {
          const orgId = await a.runPromise(CreditsHarness.makeOrg)
          const { authority, userId } = await a.runPromise(CreditsHarness.makePayer(orgId))
          const pools = [{ ownerType: "org", ownerId: orgId, pool: "subscription" }, { ownerType: "org", ownerId: orgId, pool: "addon" }] as const
          await a.runPromise(Effect.gen(function*() {
            const store = yield* CreditStore
            if (subscription > 0) yield* store.grant({ account: pools[0], amount: subscription, reason: "test", actorId: null })
            if (addon > 0) yield* store.grant({ account: pools[1], amount: addon, reason: "test", actorId: null })
            if (cap !== null) yield* store.setCap(orgId, userId, cap)
          }))
          const outcomes = await Promise.all(requests.map((request) =>
            (request.on ? a : b).runPromise(Effect.gen(function*() {
              const credits = yield* Credits.Credits
              const held = yield* Effect.either(credits.reserve({ userId, orgId, amount, creditFallback: true, purpose: "member", authority }))
              if (Either.isLeft(held)) return { held: false, charged: 0, message: held.left.message }
              yield* Effect.sleep(Duration.millis(request.pause))
              return { held: true, charged: yield* credits.settle(held.right, Math.round(amount * request.use)), message: "" }
            }))
          ))
          const charged = outcomes.reduce((sum, o) => sum + o.charged, 0)
          const limit = Math.min(subscription + addon, cap?.amount ?? Infinity)
          expect(charged).toBeLessThanOrEqual(limit)
          // Refused only when, as it asked, what was still held or charged left too little to pay.
          for (const refused of outcomes.filter((o) => !o.held)) expect(refused.message).toMatch(/cannot cover/)
          // A refusal means that, at its moment, the reservations held (or charged, at most what
          // they held) left less than `amount` under the cap or in the larger pool (a reservation
          // comes whole from one pool).
          const heldOnes = outcomes.filter((o) => o.held).length
          const onePool = Math.min(Math.max(subscription, addon), cap?.amount ?? Infinity)
          if (heldOnes < requests.length) expect(heldOnes * amount).toBeGreaterThan(onePool - amount)
          await b.runPromise(Effect.flatMap(CreditStore, (store) => store.balance(pools[0])))
          const after = await a.runPromise(Effect.gen(function*() {
            const store = yield* CreditStore
            const spent = (yield* store.spending(orgId, [userId])).get(userId)!
            return {
              balance: (yield* store.balance(pools[0])) + (yield* store.balance(pools[1])),
              ledger: (yield* store.ledgerTotal(pools[0])) + (yield* store.ledgerTotal(pools[1])),
              month: spent.month,
              total: spent.total,
              leased: (yield* poolLeased(orgId)) + (yield* memberLeased(orgId, userId))
            }
          }))
          const granted = subscription + addon
          expect(after).toEqual({ balance: granted - charged, ledger: granted - charged, month: charged, total: charged, leased: 0 })
        }
      ),
      { numRuns: 25 }
    )
  }, 180_000)

  /** A member of a new org whose subscription pool holds `grant`, capped at `cap` on it. */
  const cappedMember = async (grant: number, cap: Cap) => {
    const orgId = await a.runPromise(CreditsHarness.makeOrg)
    const { authority, userId } = await a.runPromise(CreditsHarness.makePayer(orgId))
    const pool = { ownerType: "org", ownerId: orgId, pool: "subscription" } as const
    await a.runPromise(Effect.flatMap(CreditStore, (store) =>
      Effect.zipRight(store.grant({ account: pool, amount: grant, reason: "test", actorId: null }), store.setCap(orgId, userId, cap))))
    return { authority, orgId, pool, userId }
  }

  it("serves a capped member up to the cap exactly, whichever instance holds the earmark", async () => {
    const b = instance("20 millis")
    const { authority, orgId, userId } = await cappedMember(10_000, { amount: 100, period: "month" })
    const reserve = (runtime: Runtime) =>
      runtime.runPromise(Effect.flatMap(Credits.Credits, (credits) =>
        Effect.either(Effect.tap(credits.reserve({ userId, orgId, amount: 7, creditFallback: true, purpose: "cap", authority }), (held) => credits.settle(held, 7)))))
    // A's first lease earmarks the whole cap (100 of the 224 it would take); B waits for A's tick.
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => reserve(i % 2 === 0 ? a : b)))
    expect(outcomes.filter(Either.isRight).length).toBe(14)
    const refusal = outcomes.find(Either.isLeft)!
    expect(Either.isLeft(refusal) && refusal.left.message).toMatch(/spending cap on the organization's pool \(100 credits a month\) leaves 2/)
    const spent = await a.runPromise(Effect.flatMap(CreditStore, (store) => store.spending(orgId, [userId])))
    expect(spent.get(userId)).toMatchObject({ month: 98, total: 98 })
    expect(await a.runPromise(Effect.all([poolLeased(orgId), memberLeased(orgId, userId)]))).toEqual([0, 0])
  }, 60_000)

  it("gives a lost instance's earmark on an org pool back to the pool and to the member's cap", async () => {
    const paused = instance("1 hour")
    const { authority, orgId, pool, userId } = await cappedMember(1000, { amount: 50, period: "total" })
    const reserve = (amount: number) => (credits: Credits.Service) =>
      credits.reserve({ userId, orgId, amount, creditFallback: true, purpose: "lost", authority })
    const earmarked = await paused.runPromise(Effect.gen(function*() {
      const credits = yield* Credits.Credits
      // Settled for nothing: closed in memory, unwritten (a charge would be written at once, decision 0041).
      yield* credits.settle(yield* reserve(10)(credits), 0)
      yield* reserve(10)(credits)
      const sql = yield* SqlClient.SqlClient
      const id = (yield* Instances).id
      yield* sql`INSERT INTO instances (id, started_at, heartbeat_at) VALUES (${id}, now() - interval '1 hour', now() - interval '5 minutes')`
      return yield* Effect.all([poolLeased(orgId), memberLeased(orgId, userId)])
    }))
    expect(earmarked).toEqual([50, 50])
    const after = await a.runPromise(Effect.gen(function*() {
      const credits = yield* Credits.Credits
      const store = yield* CreditStore
      const liveness = { every: Duration.seconds(10), staleAfter: Duration.seconds(30) }
      yield* InstanceLiveness.reclaim.pipe(Effect.provideService(InstanceLiveness.InstanceLiveness, liveness))
      const leased = yield* Effect.all([poolLeased(orgId), memberLeased(orgId, userId)])
      // The whole cap is the member's again, here.
      yield* credits.settle(yield* reserve(50)(credits), 50)
      const refused = yield* Effect.either(reserve(1)(credits))
      return { leased, refused: Either.isLeft(refused), balance: yield* store.balance(pool), ledger: yield* store.ledgerTotal(pool) }
    }))
    expect(after).toEqual({ leased: [0, 0], refused: true, balance: 950, ledger: 950 })
    const spent = await a.runPromise(Effect.flatMap(CreditStore, (store) => store.spending(orgId, [userId])))
    expect(spent.get(userId)).toMatchObject({ total: 50 })
  }, 60_000)

  it("looks for an account's held reservations in an index of its own (a short member's check on every request)", async () => {
    const plan = await a.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      // The planner would scan the (small) table otherwise; what matters is that an index can serve the query.
      sql.withTransaction(Effect.zipRight(
        sql`SET LOCAL enable_seqscan = off`,
        sql<{ "QUERY PLAN": unknown }>`EXPLAIN (FORMAT JSON)
          SELECT EXISTS (SELECT 1 FROM credit_reservations r WHERE r.account_id = ${"acc_x"} AND r.status = 'held')`
      )).pipe(Effect.orDie)))
    expect(JSON.stringify(plan)).toContain("credit_reservations_account_held_idx")
  })

  it("loses and doubles nothing when a batch fails: the next batch writes each reservation once and gives the unused lease back", async () => {
    const failing = instance("1 hour") // writes only when asked
    const { authority, personal, userId } = await grantedPayer(1000)
    // The database refuses this payer's reservations for a while (a batch's retries too).
    const refusal = await refuseReservationsOf(userId)
    try {
      const during = await failing.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        const reserve = (amount: number) => credits.reserve({ userId, orgId: null, amount, creditFallback: false, purpose: "failed batch", authority })
        yield* credits.settle(yield* reserve(30), 10)
        yield* credits.release(yield* reserve(20))
        const held = yield* reserve(15)
        yield* store.flush // fails, after its retries: nothing is written
        return { held, leased: yield* leasedOn(userId), written: yield* heldOf(userId) }
      }))
      // The lease stays taken, and no reservation reached the database.
      expect(during.leased).toBeGreaterThan(0)
      expect(during.written).toBe(0)

      await refusal.allow()
      const after = await failing.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        yield* store.flush
        const afterFirst = [yield* store.balance(personal), yield* store.ledgerTotal(personal), yield* leasedOn(userId), yield* heldOf(userId)]
        yield* credits.settle(during.held, 15)
        yield* store.flush
        return { afterFirst, afterAll: [yield* store.balance(personal), yield* store.ledgerTotal(personal), yield* leasedOn(userId), yield* heldOf(userId)] }
      }))
      // Charged 10, 15 still held; the lease's rest given back; the ledger agrees with the balance.
      expect(after.afterFirst).toEqual([1000 - 10 - 15, 1000 - 10 - 15, 0, 15])
      expect(after.afterAll).toEqual([1000 - 10 - 15, 1000 - 10 - 15, 0, 0])
      const rows = await a.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ status: string; amount: string; actual: string | null }>`
          SELECT status, amount, actual FROM credit_reservations WHERE user_id = ${userId} ORDER BY amount`).pipe(Effect.orDie))
      expect(rows.map((row) => [row.status, Number(row.amount), row.actual === null ? null : Number(row.actual)])).toEqual([
        ["settled", 15, 15],
        ["released", 20, 0],
        ["settled", 30, 10]
      ])
    } finally {
      await refusal.remove()
    }
  }, 60_000)

  it("charges nothing against the lease of a failed batch that another instance reclaimed meanwhile", async () => {
    const failing = instance("1 hour")
    const { authority, personal, userId } = await grantedPayer(100)
    // The database refuses this payer's reservations for a while (a batch's retries too).
    const refusal = await refuseReservationsOf(userId)
    try {
      // It reserves and settles from its lease, its batch fails, and it goes silent.
      await failing.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        yield* credits.settle(yield* credits.reserve({ userId, orgId: null, amount: 30, creditFallback: false, purpose: "failed batch", authority }), 10)
        yield* (yield* CreditStore).flush
        const id = (yield* Instances).id
        yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql`INSERT INTO instances (id, started_at, heartbeat_at) VALUES (${id}, now() - interval '1 hour', now() - interval '5 minutes')
              ON CONFLICT (id) DO UPDATE SET heartbeat_at = now() - interval '5 minutes'`)
      }).pipe(Effect.orDie))
      await refusal.allow()
      // Another instance reclaims its lease: all 100 credits are the account's again.
      const reclaimed = await a.runPromise(Effect.gen(function*() {
        const liveness = { every: Duration.seconds(10), staleAfter: Duration.seconds(30) }
        yield* InstanceLiveness.reclaim.pipe(Effect.provideService(InstanceLiveness.InstanceLiveness, liveness))
        const store = yield* CreditStore
        return [yield* store.balance(personal), yield* leasedOn(userId)]
      }))
      expect(reclaimed).toEqual([100, 0])
      // Back, it writes its batch again: the lease it paid from was reclaimed, so nothing is charged.
      const after = await failing.runPromise(Effect.gen(function*() {
        const store = yield* CreditStore
        yield* store.flush
        return [yield* store.balance(personal), yield* store.ledgerTotal(personal), yield* leasedOn(userId), yield* heldOf(userId)]
      }))
      expect(after).toEqual([100, 100, 0, 0])
    } finally {
      await refusal.remove()
    }
  }, 60_000)

  it("refuses, on every instance, a reservation made after its key's revocation was answered, whatever it waited for", async () => {
    // A holds the whole balance earmarked for a while; B's requests, asked before the revoke, wait
    // for that earmark to come back (its tick) and would reserve from it after the revoke answered.
    const holder = instance("300 millis")
    const b = instance("20 millis")
    const { authority, personal, userId } = await grantedPayer(100)
    // Both built (a runtime builds its layers on first use), so that B's requests ask at once.
    for (const runtime of [holder, b]) await runtime.runPromise(Effect.flatMap(CreditStore, (store) => store.balance(personal)))
    const reserveOn = (runtime: Runtime, amount: number) =>
      runtime.runPromise(Effect.flatMap(Credits.Credits, (credits) =>
        Effect.either(Effect.tap(
          credits.reserve({ userId, orgId: null, amount, creditFallback: false, purpose: "revoke", authority }),
          (held) => credits.settle(held, amount)
        ))))
    // Held, not settled (a charge is written at once, which gives the earmark back): a block of
    // 32 × 4 earmarks all 100 until the holder's tick, 300 ms later.
    const held = await holder.runPromise(Effect.flatMap(Credits.Credits, (credits) =>
      credits.reserve({ userId, orgId: null, amount: 4, creditFallback: false, purpose: "revoke", authority })))
    const waiting = Array.from({ length: 8 }, () => reserveOn(b, 5).then((outcome) => ({ outcome, at: Date.now() })))
    await new Promise((done) => setTimeout(done, 100))
    await a.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${authority.credentialId}`).pipe(Effect.orDie))
    const revokeAnswered = Date.now()
    const outcomes = await Promise.all(waiting)
    // Every one of them was still waiting when the revoke was answered: none may be charged.
    expect(outcomes.map(({ at, outcome }) => at > revokeAnswered ? "after" : `before: ${Either.isLeft(outcome) ? outcome.left._tag : "Right"}`))
      .toEqual(Array(8).fill("after"))
    const reservedAfter = outcomes.filter(({ outcome }) => outcome._tag === "Right").length
    expect(reservedAfter).toBe(0)
    expect(outcomes.map(({ outcome }) => Either.isLeft(outcome) ? outcome.left._tag : "Right")).toEqual(Array(8).fill("Unauthorized"))
    // Only the holder's reservation, made before the revoke, is charged.
    await holder.runPromise(Effect.flatMap(Credits.Credits, (credits) => credits.settle(held, 4)))
    const after = await b.runPromise(Effect.flatMap(CreditStore, (store) =>
      Effect.all([store.balance(personal), store.ledgerTotal(personal), leasedOn(userId), heldOf(userId)])))
    expect(after).toEqual([96, 96, 0, 0])
  }, 60_000)

  it("answers a settle that charges only once the charge is written, and so the settles ending together", async () => {
    const slow = instance("1 hour") // no tick would write it: only the settle's own wait does
    const { authority, personal, userId } = await grantedPayer(1000)
    /** What the database says, read directly (no instance's batch written first). */
    const inDatabase = () =>
      a.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ balance: string; settled: string }>`
          SELECT c.balance, (SELECT count(*) FROM credit_reservations r WHERE r.account_id = c.id AND r.status = 'settled') AS settled
          FROM credit_accounts c WHERE c.owner_type = 'user' AND c.owner_id = ${userId} AND c.pool = 'personal'`.pipe(
          Effect.map(([row]) => ({ balance: Number(row!.balance), settled: Number(row!.settled) })),
          Effect.orDie
        )))
    const reserveAndSettle = (charge: number) =>
      slow.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const held = yield* credits.reserve({ userId, orgId: null, amount: 10, creditFallback: false, purpose: "durable", authority })
        return yield* credits.settle(held, charge)
      }))
    expect(await reserveAndSettle(7)).toBe(7)
    expect(await inDatabase()).toEqual({ balance: 993, settled: 1 })
    // Twenty ending together: every one answered with its charge in the database.
    const charges = await Promise.all(Array.from({ length: 20 }, (_, i) => reserveAndSettle(1 + (i % 5))))
    expect(await inDatabase()).toEqual({ balance: 993 - charges.reduce((sum, c) => sum + c, 0), settled: 21 })
    const after = await slow.runPromise(Effect.flatMap(CreditStore, (store) =>
      Effect.all([store.balance(personal), store.ledgerTotal(personal), leasedOn(userId), heldOf(userId)])))
    expect(after).toEqual([993 - 60, 993 - 60, 0, 0])
  }, 60_000)

  it("returns, on a clean stop, what its leases did not use, and writes what is still held", async () => {
    const stopping = instance("1 hour")
    const { authority, personal, userId } = await grantedPayer(1000)
    const leased = await stopping.runPromise(Effect.gen(function*() {
      const credits = yield* Credits.Credits
      const reserve = credits.reserve({ userId, orgId: null, amount: 10, creditFallback: false, purpose: "stop", authority })
      yield* credits.settle(yield* reserve, 4)
      yield* reserve // still held when the instance stops
      return yield* leasedOn(userId)
    }))
    expect(leased).toBe(320)
    await stopping.dispose()
    const after = await a.runPromise(Effect.flatMap(CreditStore, (store) =>
      Effect.all([store.balance(personal), store.ledgerTotal(personal), leasedOn(userId), heldOf(userId)])))
    expect(after).toEqual([1000 - 4 - 10, 1000 - 4 - 10, 0, 10])
  }, 60_000)
})
