/**
 * The laws of credit leases (decision 0021), on every engine: a lost instance's leases give back
 * every credit and a paused one that comes back charges nothing against them; two instances on one
 * account never spend more than it holds and every charge is in the ledger; a clean stop returns
 * what its leases did not use. Instances share one database: PostgreSQL only (each PGlite runtime
 * is a database of its own); the laws of one instance with leases, on both engines, are those of
 * `Credits.contract.test.ts` in its leased mode.
 */
import { SqlClient, Statement } from "@effect/sql"
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import * as Credits from "@huddle/domain/credits/Credits"
import * as InstanceLiveness from "@huddle/domain/credits/InstanceLiveness"
import { Instances } from "@huddle/domain/credits/Instances"
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

  it("gives back every credit of a lost instance's lease; the instance, back from a pause, charges nothing against it", async () => {
    const paused = instance("1 hour") // writes nothing until asked
    const { authority, userId } = await a.runPromise(CreditsHarness.makePayer(null))
    const personal = { ownerType: "user", ownerId: userId, pool: "personal" } as const
    await a.runPromise(Effect.flatMap(CreditStore, (store) => store.grant({ account: personal, amount: 100, reason: "test", actorId: null })))
    const reserve = (amount: number) => (credits: Credits.Service) =>
      credits.reserve({ userId, orgId: null, amount, creditFallback: false, purpose: "lease", authority })

    // The paused instance takes a lease and reserves from it in memory, then stops answering.
    const { id, onLease } = await paused.runPromise(Effect.gen(function*() {
      const credits = yield* Credits.Credits
      const first = yield* reserve(30)(credits)
      yield* credits.settle(first, 10)
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
    const { authority, userId } = await a.runPromise(CreditsHarness.makePayer(null))
    const personal = { ownerType: "user", ownerId: userId, pool: "personal" } as const
    await a.runPromise(Effect.flatMap(CreditStore, (store) => store.grant({ account: personal, amount: 100, reason: "test", actorId: null })))
    const reserve = (runtime: Runtime, amount: number) =>
      runtime.runPromise(Effect.flatMap(Credits.Credits, (credits) =>
        Effect.either(credits.reserve({ userId, orgId: null, amount, creditFallback: false, purpose: "short", authority }))))
    // A leases all 100 for a reservation of 10; B asks for 90 before A's tick gives the rest back.
    const first = await reserve(a, 10)
    const second = await reserve(b, 90)
    const third = await reserve(b, 1)
    expect([first._tag, second._tag, third._tag]).toEqual(["Right", "Right", "Left"])
  }, 60_000)

  it("pays from the org pool without locking a member's empty personal account, and from the personal balance as soon as it is granted", async () => {
    const orgId = await a.runPromise(CreditsHarness.makeOrg)
    const { authority, userId } = await a.runPromise(CreditsHarness.makePayer(orgId))
    const personal = { ownerType: "user", ownerId: userId, pool: "personal" } as const
    const pool = { ownerType: "org", ownerId: orgId, pool: "subscription" } as const
    await a.runPromise(Effect.flatMap(CreditStore, (store) => store.grant({ account: pool, amount: 1000, reason: "test", actorId: null })))
    const statements: Array<string> = []
    const paidBy = (amount: number) =>
      a.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const held = yield* credits.reserve({ userId, orgId, amount, creditFallback: true, purpose: "empty", authority })
        yield* credits.settle(held, amount)
        return held.source
      }).pipe((effect) =>
        Statement.withTransformer(effect, (statement) =>
          Effect.sync(() => {
            statements.push(statement.compile()[0].replace(/\s+/g, " ").trim())
            return statement
          }))
      ))
    // No personal account at all, then one with too little: the pool pays, and no lease is tried
    // (the lease's statements run in the request's fiber, where they would be seen).
    for (const grant of [0, 5]) {
      if (grant > 0) await a.runPromise(Effect.flatMap(CreditStore, (store) => store.grant({ account: personal, amount: grant, reason: "test", actorId: null })))
      statements.length = 0
      expect(await paidBy(10)).toBe("subscription")
      expect(statements.filter((sql) => /FOR UPDATE|^BEGIN|credit_leases/i.test(sql)), statements.join("\n")).toEqual([])
    }
    // Granted enough (on another instance): the very next reservation is paid by the member, from a lease.
    await instance("20 millis").runPromise(Effect.flatMap(CreditStore, (store) => store.grant({ account: personal, amount: 100, reason: "test", actorId: null })))
    statements.length = 0
    expect(await paidBy(10)).toBe("personal")
    expect(statements.some((sql) => /FOR UPDATE/.test(sql)), statements.join("\n")).toBe(true)
    statements.length = 0
    expect(await paidBy(10)).toBe("personal")
    const [balance, ledger] = await a.runPromise(Effect.flatMap(CreditStore, (store) => Effect.all([store.balance(personal), store.ledgerTotal(personal)])))
    expect([balance, ledger]).toEqual([85, 85])
    expect(await a.runPromise(Effect.flatMap(CreditStore, (store) => store.balance(pool)))).toBe(980)
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

  it("returns, on a clean stop, what its leases did not use, and writes what is still held", async () => {
    const stopping = instance("1 hour")
    const { authority, userId } = await a.runPromise(CreditsHarness.makePayer(null))
    const personal = { ownerType: "user", ownerId: userId, pool: "personal" } as const
    await a.runPromise(Effect.flatMap(CreditStore, (store) => store.grant({ account: personal, amount: 1000, reason: "test", actorId: null })))
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
