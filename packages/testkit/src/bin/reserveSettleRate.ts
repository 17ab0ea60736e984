/**
 * The serialisation ceiling of one paying account:
 * `node reserveSettleRate.js <database url> [fibers] [seconds] [leased|direct] [personal|org]`
 * runs reserve → settle on one paying account (a user's personal balance, or an org's pool paying
 * for one member whose own balance is empty) from that many fibers for that long, through
 * the domain's `Credits` over the store the server uses, then checks the money (balance equals the
 * ledger, equals the grant minus what was charged; nothing left held) and prints
 * `{"rate": completions per second, "completed": n, "charged": c, "byBalance": grant − balance, "byLedger": grant − ledger, "held": h}`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Database, LeasedCreditStore } from "@huddle/adapters"
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import * as Credits from "@huddle/domain/credits/Credits"
import { Effect, Layer, Logger, LogLevel, Redacted, Ref } from "effect"
import * as CreditsHarness from "../CreditsHarness.js"

const [url, fibers = "32", seconds = "5", mode = "leased", payer = "personal"] = process.argv.slice(2)
if (!url || !["leased", "direct"].includes(mode) || !["personal", "org"].includes(payer)) {
  console.error("usage: reserveSettleRate <database url> [fibers] [seconds] [leased|direct] [personal|org]")
  process.exit(2)
}

const grant = 1_000_000_000

const program = Effect.gen(function*() {
  const credits = yield* Credits.Credits
  const store = yield* CreditStore
  const sql = yield* SqlClient.SqlClient
  const orgId = payer === "org" ? yield* CreditsHarness.makeOrg : null
  const { authority, userId } = yield* CreditsHarness.makePayer(orgId)
  const paying = orgId === null
    ? { ownerType: "user", ownerId: userId, pool: "personal" } as const
    : { ownerType: "org", ownerId: orgId, pool: "subscription" } as const
  yield* store.grant({ account: paying, amount: grant, reason: "rate", actorId: null })
  const completed = yield* Ref.make(0)
  const charged = yield* Ref.make(0)
  const until = Date.now() + Number(seconds) * 1000
  const started = Date.now()
  const worker = Effect.gen(function*() {
    while (Date.now() < until) {
      const reservation = yield* credits.reserve({ userId, orgId, amount: 40, creditFallback: orgId !== null, purpose: "rate", authority })
      const paid = yield* credits.settle(reservation, 7)
      yield* Ref.update(charged, (n) => n + paid)
      yield* Ref.update(completed, (n) => n + 1)
    }
  })
  yield* Effect.forEach(Array.from({ length: Number(fibers) }), () => worker, { concurrency: "unbounded", discard: true })
  const elapsed = (Date.now() - started) / 1000
  const done = yield* Ref.get(completed)
  const [held] = yield* sql<{ held: string }>`
    SELECT COALESCE(SUM(r.amount), 0)::bigint AS held FROM credit_reservations r JOIN credit_accounts a ON a.id = r.account_id
    WHERE a.owner_id = ${paying.ownerId} AND r.status = 'held'`.pipe(Effect.orDie)
  return {
    rate: Math.round(done / elapsed),
    completed: done,
    charged: yield* Ref.get(charged),
    byBalance: grant - (yield* store.balance(paying)),
    byLedger: grant - (yield* store.ledgerTotal(paying)),
    held: Number(held!.held)
  }
})

program.pipe(
  Effect.provide(CreditsHarness.layer(Database.layer({ _tag: "Postgres", url: Redacted.make(url), maxConnections: 16 })).pipe(
    Layer.provide(Layer.succeed(LeasedCreditStore.CreditLeases, { ...LeasedCreditStore.defaults, enabled: mode === "leased" }))
  )),
  Logger.withMinimumLogLevel(LogLevel.Warning),
  Effect.runPromise
).then(
  (result) => console.log(JSON.stringify(result)),
  (error) => {
    console.error(String(error))
    process.exit(1)
  }
)
