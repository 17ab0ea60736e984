/**
 * Money: the domain's Credits service over real storage, on every engine. Properties against a
 * model (fallback order, policy gate, conservation, no negative balance), concurrency within a
 * process and, on PostgreSQL, across two processes.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { SqlClient, Statement } from "@effect/sql"
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import type { CreditAccountRef, CreditPool } from "@huddle/domain/credits/CreditStore"
import * as Credits from "@huddle/domain/credits/Credits"
import * as InstanceLiveness from "@huddle/domain/instances/InstanceLiveness"
import * as ReservationExpiry from "@huddle/domain/credits/ReservationExpiry"
import { Database, LeasedCreditStore } from "@huddle/adapters"
import { CreditsHarness, TestDatabase } from "@huddle/testkit"
import { DateTime, Duration, Effect, Either, FastCheck as fc, Layer, ManagedRuntime, Option, Redacted } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const run = promisify(execFile)

type Op =
  | { readonly _tag: "reserve"; readonly amount: number }
  | { readonly _tag: "settle"; readonly index: number; readonly actual: number }
  | { readonly _tag: "release"; readonly index: number }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ _tag: fc.constant("reserve" as const), amount: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ _tag: fc.constant("settle" as const), index: fc.nat(20), actual: fc.integer({ min: 0, max: 50 }) }),
  fc.record({ _tag: fc.constant("release" as const), index: fc.nat(20) })
)

/**
 * Every law holds with and without credit leases (decision 0021). The tests that reach into the
 * reservation rows (ages, instances, what a row holds) are the SQL store's; the lease's own laws
 * are in `CreditLeases.contract.test.ts`.
 */
const modes = [
  { name: "direct", leases: { ...LeasedCreditStore.defaults, enabled: false } },
  { name: "leased", leases: LeasedCreditStore.defaults }
] as const

for (const engine of TestDatabase.availableEngines()) for (const mode of modes) {
  const direct = mode.name === "direct"
  describe(`credits on ${engine}, ${mode.name}`, () => {
    let database: TestDatabase.FreshDatabase
    let runtime: ManagedRuntime.ManagedRuntime<Layer.Layer.Success<ReturnType<typeof CreditsHarness.layer>>, never>

    beforeAll(async () => {
      database = await TestDatabase.fresh(engine)
      runtime = ManagedRuntime.make(
        CreditsHarness.layer(Database.layer(database.engine)).pipe(
          Layer.provide(Layer.succeed(LeasedCreditStore.CreditLeases, mode.leases)),
          Layer.orDie
        )
      )
    }, 60_000)
    afterAll(async () => {
      await runtime.dispose()
      await database.drop()
    })

    const makeOrg = () => CreditsHarness.makeOrg
    const makePayer = (orgId: string | null) => runtime.runPromise(CreditsHarness.makePayer(orgId))

    const grant = (account: CreditAccountRef, amount: number) =>
      amount > 0
        ? Effect.flatMap(CreditStore, (store) => store.grant({ account, amount, reason: "test", actorId: null }))
        : Effect.void

    it("follows the fallback order, honours the policy gate, never overdraws, and conserves credits", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            personal: fc.nat(60),
            subscription: fc.nat(60),
            addon: fc.nat(60),
            inOrg: fc.boolean(),
            creditFallback: fc.boolean(),
            ops: fc.array(opArb, { maxLength: 14 })
          }),
          async ({ addon, creditFallback, inOrg, ops, personal, subscription }) => {
            const orgId = await runtime.runPromise(makeOrg())
            const { authority, userId } = await makePayer(inOrg ? orgId : null)
            const account = (pool: CreditPool): CreditAccountRef =>
              pool === "personal" ? { ownerType: "user", ownerId: userId, pool } : { ownerType: "org", ownerId: orgId, pool }
            const pools: ReadonlyArray<CreditPool> = ["personal", "subscription", "addon"]
            const model: Record<CreditPool, number> = { personal, subscription, addon }
            const initial = personal + subscription + addon
            const allowed: ReadonlyArray<CreditPool> = inOrg && creditFallback ? pools : ["personal"]

            await runtime.runPromise(Effect.gen(function*() {
              const credits = yield* Credits.Credits
              const store = yield* CreditStore
              for (const pool of pools) yield* grant(account(pool), model[pool])
              const held: Array<{ reservation: Credits.Reservation; open: boolean }> = []
              let charged = 0
              for (const op of ops) {
                if (op._tag === "reserve") {
                  const expected = allowed.find((pool) => model[pool] >= op.amount)
                  const outcome = yield* Effect.either(credits.reserve({
                    userId,
                    orgId: inOrg ? orgId : null,
                    amount: op.amount,
                    creditFallback,
                    purpose: "property",
                    authority
                  }))
                  if (expected === undefined) {
                    expect(Either.isLeft(outcome)).toBe(true)
                  } else {
                    expect(Either.isRight(outcome)).toBe(true)
                    if (Either.isRight(outcome)) {
                      expect(outcome.right.source).toBe(expected)
                      model[expected] -= op.amount
                      held.push({ reservation: outcome.right, open: true })
                    }
                  }
                } else {
                  const entry = held[op.index]
                  if (entry === undefined) continue
                  if (op._tag === "settle") {
                    const result = yield* credits.settle(entry.reservation, op.actual)
                    const expected = entry.open ? Math.min(op.actual, entry.reservation.amount) : 0
                    expect(result).toBe(expected)
                    if (entry.open) {
                      model[entry.reservation.source] += entry.reservation.amount - expected
                      charged += expected
                    }
                  } else {
                    yield* credits.release(entry.reservation)
                    if (entry.open) model[entry.reservation.source] += entry.reservation.amount
                  }
                  entry.open = false
                }
              }
              let total = 0
              for (const pool of pools) {
                const balance = yield* store.balance(account(pool))
                expect(balance, pool).toBe(model[pool])
                expect(balance).toBeGreaterThanOrEqual(0)
                expect(yield* store.ledgerTotal(account(pool)), `ledger of ${pool}`).toBe(balance)
                total += balance
              }
              const stillHeld = held.filter((h) => h.open).reduce((sum, h) => sum + h.reservation.amount, 0)
              expect(total + stillHeld + charged).toBe(initial)
            }))
          }
        ),
        { numRuns: engine === "pglite" ? 40 : 25 }
      )
    }, 120_000)

    it("lets exactly as many parallel reservations succeed as the balances can pay", async () => {
      const orgId = await runtime.runPromise(makeOrg())
      const { authority, userId } = await makePayer(orgId)
      const result = await runtime.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        yield* grant({ ownerType: "user", ownerId: userId, pool: "personal" }, 95)
        yield* grant({ ownerType: "org", ownerId: orgId, pool: "subscription" }, 150)
        yield* grant({ ownerType: "org", ownerId: orgId, pool: "addon" }, 7)
        const outcomes = yield* Effect.forEach(
          Array.from({ length: 60 }),
          () => Effect.either(credits.reserve({ userId, orgId, amount: 10, creditFallback: true, purpose: "burst", authority })),
          { concurrency: "unbounded" }
        )
        const balances = yield* Effect.forEach(
          [
            { ownerType: "user", ownerId: userId, pool: "personal" },
            { ownerType: "org", ownerId: orgId, pool: "subscription" },
            { ownerType: "org", ownerId: orgId, pool: "addon" }
          ] as const,
          (account) => Effect.all([store.balance(account), store.ledgerTotal(account)])
        )
        return { succeeded: outcomes.filter(Either.isRight).length, balances }
      }))
      // 9 from the personal 95, 15 from the subscription 150, none from the add-on 7.
      expect(result.succeeded).toBe(24)
      expect(result.balances).toEqual([[5, 5], [0, 0], [7, 7]])
    }, 60_000)

    it("lets members who share a pool spend every credit of it between them, none twice", async () => {
      const orgId = await runtime.runPromise(makeOrg())
      const members = await Promise.all([makePayer(orgId), makePayer(orgId), makePayer(orgId)])
      const pool = { ownerType: "org", ownerId: orgId, pool: "subscription" } as const
      const result = await runtime.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        yield* grant(pool, 1000)
        // 30 reservations of 40 (1 200) for a pool of 1 000: exactly 25 fit, whoever asks first.
        const outcomes = yield* Effect.forEach(
          Array.from({ length: 30 }, (_, i) => members[i % members.length]!),
          ({ authority, userId }) =>
            Effect.either(Effect.tap(
              credits.reserve({ userId, orgId, amount: 40, creditFallback: true, purpose: "shared", authority }),
              (held) => credits.settle(held, 40)
            )),
          { concurrency: "unbounded" }
        )
        const spending = yield* store.spending(orgId, members.map((m) => m.userId))
        return {
          succeeded: outcomes.filter(Either.isRight).length,
          balance: yield* store.balance(pool),
          ledger: yield* store.ledgerTotal(pool),
          spent: [...spending.values()].reduce((sum, s) => sum + s.total, 0)
        }
      }))
      expect(result).toEqual({ succeeded: 25, balance: 0, ledger: 0, spent: 1000 })
    }, 60_000)

    it("settles and releases at most once, even when asked twice at the same time", async () => {
      const { authority, userId } = await makePayer(null)
      const outcome = await runtime.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        const personal = { ownerType: "user", ownerId: userId, pool: "personal" } as const
        yield* grant(personal, 100)
        const reservation = yield* credits.reserve({ userId, orgId: null, amount: 40, creditFallback: false, purpose: "twice", authority })
        const charges = yield* Effect.all(
          [credits.settle(reservation, 25), credits.settle(reservation, 25), credits.release(reservation).pipe(Effect.as(-1))],
          { concurrency: "unbounded" }
        )
        return { charges, balance: yield* store.balance(personal), ledger: yield* store.ledgerTotal(personal) }
      }))
      const settled = outcome.charges.filter((c) => c === 25).length
      expect(settled).toBeLessThanOrEqual(1)
      // Either it was settled once (75 left) or released first (100 left); never both, never twice.
      expect([75, 100]).toContain(outcome.balance)
      expect(outcome.balance === 75).toBe(settled === 1)
      expect(outcome.ledger).toBe(outcome.balance)
    }, 60_000)

    it("writes the tokens a settled call consumed on its settle row, settled before or after the reservation was written", async () => {
      const { authority, userId } = await makePayer(null)
      const rows = await runtime.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        const sql = yield* SqlClient.SqlClient
        yield* grant({ ownerType: "user", ownerId: userId, pool: "personal" }, 100)
        const reserve = (purpose: string) => credits.reserve({ userId, orgId: null, amount: 20, creditFallback: false, purpose, authority })
        const quick = yield* reserve("a: settled at once")
        yield* credits.settle(quick, 3, { inputTokens: 120, outputTokens: 7 })
        // Written held by a batch first (with leases), then settled: the close is written on its own.
        const long = yield* reserve("b: settled after a batch")
        yield* store.flush
        yield* credits.settle(long, 4, { inputTokens: 2_000, outputTokens: 0 })
        const untold = yield* reserve("c: settled without tokens")
        yield* credits.settle(untold, 1)
        const released = yield* reserve("d: released")
        yield* credits.release(released)
        yield* store.flush
        return yield* sql<{ reason: string; kind: string; input_tokens: string | null; output_tokens: string | null }>`
          SELECT l.reason, l.kind, l.input_tokens, l.output_tokens FROM credit_ledger l
          WHERE l.reservation_id IN (${quick.id}, ${long.id}, ${untold.id}, ${released.id}) ORDER BY l.reason, l.kind`
      }))
      expect(rows.map((row) => [row.reason.slice(0, 1), row.kind, row.input_tokens === null ? null : Number(row.input_tokens), row.output_tokens === null ? null : Number(row.output_tokens)]))
        .toEqual([
          ["a", "reserve", null, null],
          ["a", "settle", 120, 7],
          ["b", "reserve", null, null],
          ["b", "settle", 2_000, 0],
          ["c", "reserve", null, null],
          ["c", "settle", null, null],
          ["d", "release", null, null],
          ["d", "reserve", null, null]
        ])
    }, 60_000)

    it.runIf(direct)("gives back reservations left held past their expiry, and only those", async () => {
      const { authority, userId } = await makePayer(null)
      const outcome = await runtime.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        const sql = yield* SqlClient.SqlClient
        const personal = { ownerType: "user", ownerId: userId, pool: "personal" } as const
        yield* grant(personal, 100)
        const reserve = (purpose: string) => credits.reserve({ userId, orgId: null, amount: 20, creditFallback: false, purpose, authority })
        const orphaned = yield* reserve("orphaned")
        const settledOld = yield* reserve("settled long ago")
        yield* credits.settle(settledOld, 5)
        const running = yield* reserve("still running")
        // The first two were made an hour ago; the third is a call in progress.
        yield* sql`UPDATE credit_reservations SET created_at = now() - interval '1 hour'
                   WHERE id IN (${orphaned.id}, ${settledOld.id})`
        const afterOrphanSwept = yield* ReservationExpiry.sweep.pipe(
          Effect.provideService(ReservationExpiry.ReservationExpiry, { after: Duration.minutes(30), every: Duration.minutes(1) })
        )
        const again = yield* ReservationExpiry.sweep.pipe(
          Effect.provideService(ReservationExpiry.ReservationExpiry, { after: Duration.minutes(30), every: Duration.minutes(1) })
        )
        const statuses = yield* sql<{ purpose: string; status: string }>`
          SELECT purpose, status FROM credit_reservations r JOIN credit_accounts a ON a.id = r.account_id
          WHERE a.owner_id = ${userId} ORDER BY purpose`
        // The running call still settles normally afterwards.
        const charged = yield* credits.settle(running, 7)
        return {
          released: [afterOrphanSwept, again],
          statuses: statuses.map((row) => `${row.purpose}: ${row.status}`),
          charged,
          balance: yield* store.balance(personal),
          ledger: yield* store.ledgerTotal(personal)
        }
      }))
      expect(outcome.released).toEqual([1, 0])
      expect(outcome.statuses).toEqual(["orphaned: released", "settled long ago: settled", "still running: held"])
      expect(outcome.charged).toBe(7)
      // 100 − 5 (settled) − 7 (settled after the sweep); the orphan's 20 came back.
      expect(outcome.balance).toBe(88)
      expect(outcome.ledger).toBe(88)
    }, 60_000)

    it("refuses, as it takes the credits, a key revoked or a membership removed since the caller was authenticated", async () => {
      const orgId = await runtime.runPromise(makeOrg())
      const { authority, userId } = await makePayer(orgId)
      const outcome = await runtime.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        const sql = yield* SqlClient.SqlClient
        const subscription = { ownerType: "org", ownerId: orgId, pool: "subscription" } as const
        yield* grant(subscription, 100)
        const reserve = (who: typeof authority) =>
          Effect.either(credits.reserve({ userId, orgId, amount: 10, creditFallback: true, purpose: "authority", authority: who }))
        const before = yield* reserve(authority)
        // What an instance's caches do not know yet: the statement reads the rows themselves.
        yield* sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${authority.credentialId}`
        const revoked = yield* reserve(authority)
        const other = yield* CreditsHarness.makePayer(orgId, userId)
        yield* sql`DELETE FROM memberships WHERE org_id = ${orgId} AND user_id = ${userId}`
        const removed = yield* reserve(other.authority)
        const session = { via: "session" as const, credentialId: "ses_missing", actorId: userId }
        const unknownSession = yield* Effect.either(
          credits.reserve({ userId, orgId: null, amount: 1, creditFallback: false, purpose: "authority", authority: session })
        )
        return { before, revoked, removed, unknownSession, balance: yield* store.balance(subscription) }
      }))
      expect(Either.isRight(outcome.before)).toBe(true)
      expect(Either.getLeft(outcome.revoked).pipe((e) => e._tag === "Some" ? e.value._tag : "none")).toBe("Unauthorized")
      expect(Either.getLeft(outcome.removed).pipe((e) => e._tag === "Some" ? e.value._tag : "none")).toBe("NotFound")
      expect(Either.getLeft(outcome.unknownSession).pipe((e) => e._tag === "Some" ? e.value._tag : "none")).toBe("Unauthorized")
      expect(outcome.balance).toBe(90)
    }, 60_000)

    it("decides each of many concurrent reservations on its own credential and membership", async () => {
      const orgId = await runtime.runPromise(makeOrg())
      const payers = await Promise.all(Array.from({ length: 6 }, () => makePayer(orgId)))
      const [revokedKey, removedMember] = payers
      const outcome = await runtime.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        const sql = yield* SqlClient.SqlClient
        const personal = (userId: string) => ({ ownerType: "user", ownerId: userId, pool: "personal" }) as const
        yield* Effect.forEach(
          payers,
          ({ userId }) => store.grant({ account: personal(userId), amount: 100, reason: "test", actorId: null }),
          { discard: true }
        )
        yield* sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${revokedKey!.authority.credentialId}`
        yield* sql`DELETE FROM memberships WHERE org_id = ${orgId} AND user_id = ${removedMember!.userId}`
        // Eight reservations per payer at once, interleaved: the reads of their authority share round trips.
        const outcomes = yield* Effect.forEach(
          Array.from({ length: 8 }).flatMap(() => payers),
          ({ authority, userId }) =>
            Effect.either(credits.reserve({ userId, orgId, amount: 5, creditFallback: false, purpose: "burst", authority })).pipe(
              Effect.map((result) => ({ userId, result: Either.match(result, { onLeft: (e) => e._tag, onRight: () => "held" }) }))
            ),
          { concurrency: "unbounded" }
        )
        const byPayer = payers.map(({ userId }) => [...new Set(outcomes.filter((o) => o.userId === userId).map((o) => o.result))])
        const balances = yield* Effect.forEach(payers, ({ userId }) => store.balance(personal(userId)))
        return { byPayer, balances }
      }))
      expect(outcome.byPayer).toEqual([["Unauthorized"], ["NotFound"], ["held"], ["held"], ["held"], ["held"]])
      expect(outcome.balances).toEqual([100, 100, 60, 60, 60, 60])
    }, 60_000)

    it("keeps each member's cap on the org pool under concurrency, and counts only what was finally charged", async () => {
      const orgId = await runtime.runPromise(makeOrg())
      const { authority, userId } = await makePayer(orgId)
      const outcome = await runtime.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        yield* grant({ ownerType: "org", ownerId: orgId, pool: "subscription" }, 1000)
        yield* store.setCap(orgId, userId, { amount: 55, period: "month" })
        const reserve = () => credits.reserve({ userId, orgId, amount: 10, creditFallback: true, purpose: "capped", authority })
        const burst = yield* Effect.forEach(Array.from({ length: 30 }), () => Effect.either(reserve()), { concurrency: "unbounded" })
        const held = burst.flatMap((o) => Either.isRight(o) ? [o.right] : [])
        const denied = burst.flatMap((o) => Either.isLeft(o) ? [o.left] : [])
        const afterBurst = (yield* store.spending(orgId, [userId])).get(userId)
        // Two settle low: the unused part goes back to the member's allowance.
        yield* credits.settle(held[0]!, 3)
        yield* credits.settle(held[1]!, 4)
        yield* credits.release(held[2]!)
        const afterSettle = (yield* store.spending(orgId, [userId])).get(userId)
        const twoMore = yield* Effect.all([Effect.either(reserve()), Effect.either(reserve())])
        const overCap = yield* Effect.either(reserve())
        return { held: held.length, denied, afterBurst, afterSettle, twoMore, overCap, balance: yield* store.balance({ ownerType: "org", ownerId: orgId, pool: "subscription" }) }
      }))
      expect(outcome.held).toBe(5)
      expect(outcome.denied.every((e) => e._tag === "InsufficientCredits")).toBe(true)
      expect(outcome.denied[0]?.message).toMatch(/spending cap .*55 credits a month.* leaves 5/)
      expect(outcome.afterBurst).toEqual({ cap: { amount: 55, period: "month" }, month: 50, total: 50 })
      // 50 − (10 − 3) − (10 − 4) − 10 = 27
      expect(outcome.afterSettle).toEqual({ cap: { amount: 55, period: "month" }, month: 27, total: 27 })
      // 27 + 10 + 10 = 47 fits in 55; 10 more would not (8 left).
      expect(outcome.twoMore.map((o) => o._tag)).toEqual(["Right", "Right"])
      expect(Either.getLeft(outcome.overCap).pipe((e) => e._tag === "Some" ? e.value.message : "")).toMatch(/leaves 8$/)
      // The pool gave exactly what the member holds or was charged.
      expect(outcome.balance).toBe(1000 - 47)
    }, 60_000)

    it.runIf(engine === "postgres")(
      "closes a reservation taking the account row before the member's spending row, the order reserving takes them in",
      async () => {
        const orgId = await runtime.runPromise(makeOrg())
        const { authority, userId } = await makePayer(orgId)
        const subscription = { ownerType: "org", ownerId: orgId, pool: "subscription" } as const
        const reservation = await runtime.runPromise(Effect.gen(function*() {
          yield* grant(subscription, 1000)
          yield* (yield* CreditStore).setCap(orgId, userId, { amount: 500, period: "total" })
          return yield* (yield* Credits.Credits).reserve({ userId, orgId, amount: 10, creditFallback: true, purpose: "order", authority })
        }))
        const url = database.engine._tag === "Postgres" ? Redacted.value(database.engine.url) : ""
        const holder = new pg.Client({ connectionString: url })
        const prober = new pg.Client({ connectionString: url })
        await holder.connect()
        await prober.connect()
        try {
          // Another request holds the pool's account row.
          await holder.query("BEGIN")
          await holder.query(
            "SELECT id FROM credit_accounts WHERE owner_type = 'org' AND owner_id = $1 AND pool = 'subscription' FOR UPDATE",
            [orgId]
          )
          const settling = runtime.runPromise(Effect.flatMap(Credits.Credits, (credits) => credits.settle(reservation, 3)))
          await new Promise((resolve) => setTimeout(resolve, 500))
          // The settlement waits for the account row without holding the spending row: a
          // reservation (account, then spending) can take both, so the two cannot deadlock.
          await prober.query("BEGIN")
          const probe = await prober.query(
            "SELECT user_id FROM member_spending WHERE org_id = $1 AND user_id = $2 FOR UPDATE NOWAIT",
            [orgId, userId]
          ).then(() => "free", (error: { code?: string }) => error.code ?? "error")
          await prober.query("ROLLBACK")
          expect(probe).toBe("free")
          await holder.query("ROLLBACK")
          expect(await settling).toBe(3)
        } finally {
          await holder.end()
          await prober.end()
        }
      },
      60_000
    )

    it("runs reservations and settlements of one capped member concurrently without deadlock, within the cap, conserving credits", async () => {
      const orgId = await runtime.runPromise(makeOrg())
      const { authority, userId } = await makePayer(orgId)
      const outcome = await runtime.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        const subscription = { ownerType: "org", ownerId: orgId, pool: "subscription" } as const
        yield* grant(subscription, 10_000)
        yield* store.setCap(orgId, userId, { amount: 120, period: "total" })
        // Each request reserves 10 and settles for 0 to 10 of it, all at once.
        const runs = yield* Effect.forEach(
          Array.from({ length: 60 }, (_, i) => i % 11),
          (actual) =>
            credits.reserve({ userId, orgId, amount: 10, creditFallback: true, purpose: "mixed", authority }).pipe(
              Effect.flatMap((reservation) => credits.settle(reservation, actual)),
              Effect.either
            ),
          { concurrency: "unbounded" }
        )
        const charged = runs.flatMap((run) => Either.isRight(run) ? [run.right] : []).reduce((sum, n) => sum + n, 0)
        const spent = (yield* store.spending(orgId, [userId])).get(userId)
        return {
          refused: runs.filter(Either.isLeft).map((run) => run.left._tag),
          charged,
          spent,
          balance: yield* store.balance(subscription),
          ledger: yield* store.ledgerTotal(subscription)
        }
      }))
      expect(new Set(outcome.refused)).toEqual(new Set(outcome.refused.length > 0 ? ["InsufficientCredits"] : []))
      expect(outcome.spent?.total).toBe(outcome.charged)
      expect(outcome.charged).toBeLessThanOrEqual(120)
      expect(outcome.balance).toBe(10_000 - outcome.charged)
      expect(outcome.ledger).toBe(outcome.balance)
    }, 60_000)

    it.runIf(direct)("gives back, within one look, what a lost instance held, and nothing of a live one", async () => {
      const { authority, userId } = await makePayer(null)
      const outcome = await runtime.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        const sql = yield* SqlClient.SqlClient
        const personal = { ownerType: "user", ownerId: userId, pool: "personal" } as const
        yield* grant(personal, 100)
        const reserve = (purpose: string) => credits.reserve({ userId, orgId: null, amount: 30, creditFallback: false, purpose, authority })
        const onLost = yield* reserve("on a killed instance")
        const onLive = yield* reserve("on a live instance")
        const lost = `ins_lost_${userId}`
        const live = `ins_live_${userId}`
        yield* sql`INSERT INTO instances (id, started_at, heartbeat_at) VALUES
                     (${lost}, now() - interval '1 hour', now() - interval '5 minutes'),
                     (${live}, now() - interval '1 hour', now())`
        yield* sql`UPDATE credit_reservations SET instance_id = ${lost} WHERE id = ${onLost.id}`
        yield* sql`UPDATE credit_reservations SET instance_id = ${live} WHERE id = ${onLive.id}`
        const liveness = { every: Duration.seconds(10), staleAfter: Duration.seconds(30) }
        const first = yield* InstanceLiveness.reclaim.pipe(Effect.provideService(InstanceLiveness.InstanceLiveness, liveness))
        const second = yield* InstanceLiveness.reclaim.pipe(Effect.provideService(InstanceLiveness.InstanceLiveness, liveness))
        const instances = yield* sql<{ id: string }>`SELECT id FROM instances WHERE id IN (${lost}, ${live}) ORDER BY id`
        // The live instance's call still settles normally.
        const charged = yield* credits.settle(onLive, 12)
        return {
          first,
          second,
          instances: instances.map((row) => row.id),
          charged,
          balance: yield* store.balance(personal),
          ledger: yield* store.ledgerTotal(personal)
        }
      }))
      expect(outcome.first).toMatchObject({ instances: 1, reservations: 1 })
      expect(outcome.second).toMatchObject({ instances: 0, reservations: 0 })
      expect(outcome.instances).toEqual([`ins_live_${userId}`])
      expect(outcome.charged).toBe(12)
      expect(outcome.balance).toBe(88)
      expect(outcome.ledger).toBe(88)
    }, 60_000)

    /** What a reservation still holds, as the store has it. */
    const holds = (id: string) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ amount: string; status: string }>`SELECT amount, status FROM credit_reservations WHERE id = ${id}`.pipe(
          Effect.map(([row]) => ({ amount: Number(row!.amount), status: row!.status })),
          Effect.orDie
        ))

    it("carves parts of a held reservation that settle and release on their own, conserving credits", async () => {
      const { authority, userId } = await makePayer(null)
      const outcome = await runtime.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        const personal = { ownerType: "user", ownerId: userId, pool: "personal" } as const
        yield* grant(personal, 1000)
        const run = yield* credits.reserve({ userId, orgId: null, amount: 100, creditFallback: false, purpose: "council", authority })
        const carve = (amount: number) => Effect.map(credits.carve(run, amount), Option.getOrThrow)
        const a = yield* carve(30)
        const b = yield* carve(20)
        const c = yield* carve(24.2) // rounded up
        const d = yield* carve(10)
        const whileHeld = yield* store.balance(personal)
        const parentAfterCarves = yield* holds(run.id)
        // More than the parent still holds (15): nothing carved, nothing moved.
        const tooMuch = yield* credits.carve(run, 16)
        const parentAfterTooMuch = yield* holds(run.id)
        const charges = {
          a: yield* credits.settle(a, 12),
          b: yield* credits.settle(b, 50), // at most its part
          c: yield* credits.release(c).pipe(Effect.as(0)),
          // The parent's object says 100; it holds 15 and charges at most that.
          run: yield* credits.settle(run, 100)
        }
        const ofClosedParent = yield* credits.carve(run, 1)
        const ofClosedPart = yield* credits.carve(a, 1)
        const beforeLast = yield* store.balance(personal)
        yield* credits.release(d)
        const ids = new Set([run.id, a.id, b.id, c.id, d.id])
        const ledger = (yield* store.ledger(personal, { limit: 100 })).filter((entry) => ids.has(entry.reservation_id ?? ""))
        return {
          parts: [a, b, c, d].map((part) => [part.source, part.amount]),
          whileHeld,
          parentAfterCarves,
          tooMuch: Option.isSome(tooMuch),
          parentAfterTooMuch,
          charges,
          closed: [Option.isSome(ofClosedParent), Option.isSome(ofClosedPart)],
          beforeLast,
          ledgerKinds: ledger.map((entry) => entry.kind).sort(),
          ledgerSum: ledger.reduce((sum, entry) => sum + entry.delta, 0),
          balance: yield* store.balance(personal),
          ledgerTotal: yield* store.ledgerTotal(personal)
        }
      }))
      expect(outcome.parts).toEqual([["personal", 30], ["personal", 20], ["personal", 25], ["personal", 10]])
      // Carving moves nothing out of the account: the 100 stay held.
      expect(outcome.whileHeld).toBe(900)
      expect(outcome.parentAfterCarves).toEqual({ amount: 15, status: "held" })
      expect(outcome.tooMuch).toBe(false)
      expect(outcome.parentAfterTooMuch).toEqual({ amount: 15, status: "held" })
      expect(outcome.charges).toEqual({ a: 12, b: 20, c: 0, run: 15 })
      expect(outcome.closed).toEqual([false, false])
      // 1000 − 12 − 20 − 15 charged − 10 still held by the last part.
      expect(outcome.beforeLast).toBe(943)
      // One reserve row for the run, one closing row for each of the five reservations, none for a carve.
      expect(outcome.ledgerKinds).toEqual(["release", "release", "reserve", "settle", "settle", "settle"])
      expect(outcome.ledgerSum).toBe(-(12 + 20 + 15))
      expect(outcome.balance).toBe(953)
      expect(outcome.ledgerTotal).toBe(953)
    }, 60_000)

    it.runIf(direct)("never carves more than a reservation holds, under concurrent carves", async () => {
      const { authority, userId } = await makePayer(null)
      const outcome = await runtime.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        const personal = { ownerType: "user", ownerId: userId, pool: "personal" } as const
        yield* grant(personal, 500)
        const run = yield* credits.reserve({ userId, orgId: null, amount: 100, creditFallback: false, purpose: "council", authority })
        const parts = yield* Effect.forEach(Array.from({ length: 20 }), () => credits.carve(run, 7), { concurrency: "unbounded" })
        const carved = parts.flatMap((part) => Option.isSome(part) ? [part.value] : [])
        const amounts = yield* Effect.forEach(carved, (part) => holds(part.id))
        // Every part settles for 1; the parent is released.
        const charged = yield* Effect.forEach(carved, (part) => credits.settle(part, 1), { concurrency: "unbounded" })
        yield* credits.release(run)
        return {
          carved: carved.length,
          distinct: new Set(carved.map((part) => part.id)).size,
          held: amounts.reduce((sum, part) => sum + part.amount, 0),
          parent: yield* holds(run.id),
          charged: charged.reduce((sum, n) => sum + n, 0),
          balance: yield* store.balance(personal),
          ledgerTotal: yield* store.ledgerTotal(personal)
        }
      }))
      // 14 parts of 7 fit in 100; 2 stay with the parent.
      expect(outcome.carved).toBe(14)
      expect(outcome.distinct).toBe(14)
      expect(outcome.held).toBe(98)
      expect(outcome.parent).toEqual({ amount: 2, status: "released" })
      expect(outcome.charged).toBe(14)
      expect(outcome.balance).toBe(500 - 14)
      expect(outcome.ledgerTotal).toBe(500 - 14)
    }, 60_000)

    it.runIf(direct)("gives back what the parts and the parent still hold when their instance is lost or they expire", async () => {
      const { authority, userId } = await makePayer(null)
      const outcome = await runtime.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        const sql = yield* SqlClient.SqlClient
        const personal = { ownerType: "user", ownerId: userId, pool: "personal" } as const
        yield* grant(personal, 200)
        const reserve = () => credits.reserve({ userId, orgId: null, amount: 60, creditFallback: false, purpose: "council", authority })
        const carve = (parent: Credits.Reservation, amount: number) => Effect.map(credits.carve(parent, amount), Option.getOrThrow)

        // A run on an instance that died: one part settled, one still held, the parent holding the rest.
        const lostRun = yield* reserve()
        const settledPart = yield* carve(lostRun, 10)
        const heldPart = yield* carve(lostRun, 20)
        yield* credits.settle(settledPart, 4)
        const lost = `ins_lost_${userId}`
        yield* sql`UPDATE credit_reservations SET instance_id = ${lost} WHERE id IN (${lostRun.id}, ${settledPart.id}, ${heldPart.id})`
        const releasedLost = yield* store.releaseHeldBy([lost])
        const afterLost = yield* store.balance(personal)

        // A run whose parent expired while one of its calls, carved since, is still running.
        const oldRun = yield* reserve()
        const running = yield* carve(oldRun, 25)
        yield* sql`UPDATE credit_reservations SET created_at = now() - interval '1 hour' WHERE id = ${oldRun.id}`
        const releasedExpired = yield* store.releaseExpired(DateTime.unsafeMake(Date.now() - 30 * 60_000))
        const runningAfterSweep = yield* holds(running.id)
        const chargedAfterSweep = yield* credits.settle(running, 9)
        return {
          releasedLost,
          afterLost,
          statuses: [yield* holds(lostRun.id), yield* holds(settledPart.id), yield* holds(heldPart.id)],
          releasedExpired,
          runningAfterSweep,
          chargedAfterSweep,
          balance: yield* store.balance(personal),
          ledgerTotal: yield* store.ledgerTotal(personal)
        }
      }))
      // The parent's 30 and the held part's 20 came back; the settled part's 4 stays charged.
      expect(outcome.releasedLost).toBe(2)
      expect(outcome.afterLost).toBe(196)
      expect(outcome.statuses).toEqual([
        { amount: 30, status: "released" },
        { amount: 10, status: "settled" },
        { amount: 20, status: "released" }
      ])
      // Each reservation expires by its own age: the parent's 35 came back, the part made since is still held.
      expect(outcome.releasedExpired).toBe(1)
      expect(outcome.runningAfterSweep).toEqual({ amount: 25, status: "held" })
      expect(outcome.chargedAfterSweep).toBe(9)
      expect(outcome.balance).toBe(200 - 4 - 9)
      expect(outcome.ledgerTotal).toBe(200 - 4 - 9)
    }, 60_000)

    it("counts against a member's cap on the org pool only what the parts of a reservation charged", async () => {
      const orgId = await runtime.runPromise(makeOrg())
      const { authority, userId } = await makePayer(orgId)
      const outcome = await runtime.runPromise(Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        const subscription = { ownerType: "org", ownerId: orgId, pool: "subscription" } as const
        const spent = Effect.map(store.spending(orgId, [userId]), (all) => all.get(userId))
        yield* grant(subscription, 1000)
        yield* store.setCap(orgId, userId, { amount: 100, period: "month" })
        const run = yield* credits.reserve({ userId, orgId, amount: 60, creditFallback: true, purpose: "council", authority })
        const a = Option.getOrThrow(yield* credits.carve(run, 20))
        const b = Option.getOrThrow(yield* credits.carve(run, 25))
        const afterCarves = yield* spent
        const charged = (yield* credits.settle(a, 5)) + (yield* credits.settle(b, 25)) + (yield* credits.settle(run, 3))
        const afterSettle = yield* spent
        // What is left under the cap (100 − 33) is the member's again.
        const next = yield* Effect.either(
          credits.reserve({ userId, orgId, amount: 67, creditFallback: true, purpose: "next", authority })
        )
        return {
          source: a.source,
          afterCarves,
          charged,
          afterSettle,
          next: next._tag,
          afterNext: yield* spent,
          balance: yield* store.balance(subscription),
          ledgerTotal: yield* store.ledgerTotal(subscription)
        }
      }))
      expect(outcome.source).toBe("subscription")
      expect(outcome.afterCarves).toEqual({ cap: { amount: 100, period: "month" }, month: 60, total: 60 })
      expect(outcome.charged).toBe(5 + 25 + 3)
      expect(outcome.afterSettle).toEqual({ cap: { amount: 100, period: "month" }, month: 33, total: 33 })
      expect(outcome.next).toBe("Right")
      expect(outcome.afterNext).toEqual({ cap: { amount: 100, period: "month" }, month: 100, total: 100 })
      expect(outcome.balance).toBe(1000 - 33 - 67)
      expect(outcome.ledgerTotal).toBe(1000 - 33 - 67)
    }, 60_000)

    // An idle instance is not woken every tick: its batches stop once nothing is left to write,
    // and start again with the next reservation.
    it.skipIf(direct)("writes no batch while idle, and the next reservation's within a few ticks", async () => {
      const statements: Array<string> = []
      const counting = ManagedRuntime.make(
        CreditsHarness.layer(Database.layer(database.engine)).pipe(
          Layer.provide(Layer.succeed(LeasedCreditStore.CreditLeases, { ...LeasedCreditStore.defaults, tick: Duration.millis(20) })),
          Layer.provide(Statement.setTransformer((statement) =>
            Effect.sync(() => {
              statements.push(statement.compile()[0])
              return statement
            })
          )),
          Layer.orDie
        )
      )
      try {
        const { authority, userId } = await counting.runPromise(CreditsHarness.makePayer(null))
        const personal = { ownerType: "user", ownerId: userId, pool: "personal" } as const
        const rowsOf = (id: string) =>
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql<{ status: string }>`SELECT status FROM credit_reservations WHERE id = ${id}`.pipe(Effect.orDie))
        const outcome = await counting.runPromise(Effect.gen(function*() {
          const credits = yield* Credits.Credits
          yield* grant(personal, 100)
          const first = yield* credits.reserve({ userId, orgId: null, amount: 10, creditFallback: false, purpose: "idle", authority })
          yield* credits.settle(first, 4)
          // Its batch (the tick's), then ten ticks with nothing to write.
          yield* Effect.sleep("200 millis")
          const before = statements.length
          yield* Effect.sleep("200 millis")
          const whileIdle = statements.slice(before)
          // Written by the ticks alone (no read here writes the batch first).
          const second = yield* credits.reserve({ userId, orgId: null, amount: 10, creditFallback: false, purpose: "idle", authority })
          yield* credits.settle(second, 6)
          let written = false
          for (let i = 0; i < 50 && !written; i++) {
            yield* Effect.sleep("20 millis")
            written = (yield* rowsOf(second.id)).some((row) => row.status === "settled")
          }
          return { whileIdle, written, balance: yield* Effect.flatMap(CreditStore, (store) => store.balance(personal)) }
        }))
        expect(outcome.whileIdle).toEqual([])
        expect(outcome.written).toBe(true)
        expect(outcome.balance).toBe(100 - 4 - 6)
      } finally {
        await counting.dispose()
      }
    }, 60_000)

    // The two processes run the store as the server does (with leases).
    if (engine === "postgres" && !direct) {
      it("never overspends across two processes sharing the database", async () => {
        const orgId = await runtime.runPromise(makeOrg())
        const { authority, userId } = await makePayer(orgId)
        await runtime.runPromise(Effect.all([
          grant({ ownerType: "user", ownerId: userId, pool: "personal" }, 200),
          grant({ ownerType: "org", ownerId: orgId, pool: "subscription" }, 300)
        ]))
        const script = fileURLToPath(new URL("../../testkit/dist/bin/reserveMany.js", import.meta.url))
        if (database.engine._tag !== "Postgres") throw new Error("expected PostgreSQL")
        const dbUrl = Redacted.value(database.engine.url)
        const [a, b] = await Promise.all([
          run(process.execPath, [script, dbUrl, userId, orgId, authority.credentialId, "40", "10"]),
          run(process.execPath, [script, dbUrl, userId, orgId, authority.credentialId, "40", "10"])
        ])
        const first = JSON.parse(a.stdout) as { reserved: number; denied: number }
        const second = JSON.parse(b.stdout) as { reserved: number; denied: number }
        expect(first.reserved + second.reserved).toBe(50)
        expect(first.denied + second.denied).toBe(30)
        const left = await runtime.runPromise(Effect.flatMap(CreditStore, (store) =>
          Effect.all([
            store.balance({ ownerType: "user", ownerId: userId, pool: "personal" }),
            store.balance({ ownerType: "org", ownerId: orgId, pool: "subscription" }),
            store.ledgerTotal({ ownerType: "user", ownerId: userId, pool: "personal" }),
            store.ledgerTotal({ ownerType: "org", ownerId: orgId, pool: "subscription" })
          ])))
        expect(left).toEqual([0, 0, 0, 0])
      }, 90_000)
    }
  })
}
