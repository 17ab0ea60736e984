import { SqlClient } from "@effect/sql"
import { Ids } from "@huddle/domain/Ids"
import { type CreditAccountRef, CreditStore } from "@huddle/domain/ports/CreditStore"
import { Effect, Layer } from "effect"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const ids = yield* Ids

  const accountWhere = (account: CreditAccountRef) =>
    sql`owner_type = ${account.ownerType} AND owner_id = ${account.ownerId} AND pool = ${account.pool}`

  return CreditStore.of({
    grant: ({ account, actorId, amount, reason }) =>
      Effect.gen(function*() {
        const accountId = yield* ids.next("res")
        const ledgerId = yield* ids.next("led")
        const [row] = yield* sql<{ id: string; balance: number }>`
          INSERT INTO credit_accounts (id, owner_type, owner_id, pool, balance)
          VALUES (${accountId}, ${account.ownerType}, ${account.ownerId}, ${account.pool}, ${amount})
          ON CONFLICT (owner_type, owner_id, pool)
          DO UPDATE SET balance = credit_accounts.balance + EXCLUDED.balance
          RETURNING id, balance`
        yield* sql`INSERT INTO credit_ledger (id, account_id, delta, kind, reason, actor_id, created_at)
                   VALUES (${ledgerId}, ${row!.id}, ${amount}, 'grant', ${reason}, ${actorId}, now())`
        return row!.balance
      }).pipe(sql.withTransaction, Effect.orDie),
    balance: (account) =>
      sql<{ balance: number }>`SELECT balance FROM credit_accounts WHERE ${accountWhere(account)}`.pipe(
        Effect.map((rows) => rows[0]?.balance ?? 0),
        Effect.orDie
      ),
    ledgerTotal: (account) =>
      sql<{ total: number }>`
        SELECT COALESCE(SUM(l.delta), 0)::bigint AS total
        FROM credit_ledger l JOIN credit_accounts a ON a.id = l.account_id
        WHERE ${accountWhere(account)}`.pipe(
        Effect.map((rows) => rows[0]?.total ?? 0),
        Effect.orDie
      )
  })
})

export const layer = Layer.effect(CreditStore, make)
