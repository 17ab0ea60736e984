/**
 * The `CreditStore` port in SQL, each operation a statement or a transaction of its own: the
 * store used when credit leases are off, and under `LeasedCreditStore` for what it does not keep
 * in memory (grants, reads, caps, sweeps, and everything once the instance is stopping).
 */
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import { Effect, Layer } from "effect"
import * as CreditSql from "./CreditSql.js"
import * as Accounts from "./SqlCreditAccounts.js"
import * as MemberSpending from "./SqlMemberSpending.js"
import { reserve } from "./SqlReservation.js"
import { release, settle, split } from "./SqlSettlement.js"
import { releaseExpired, releaseHeldBy } from "./SqlSweep.js"

export const make = Effect.map(CreditSql.make, (context) => {
  const { sql } = context
  return CreditStore.of({
    flush: Effect.void,
    grant: (grant) => Accounts.grant(context, grant),
    balance: (account) => Accounts.balance(sql, account),
    ledgerTotal: (account) => Accounts.ledgerTotal(sql, account),
    ledger: (account, page) => Accounts.ledger(sql, account, page),
    reserve: (reservation) => Effect.orDie(reserve(context, reservation)),
    settle: (reservationId, actual, tokens) => settle(context, reservationId, actual, tokens),
    release: (reservationId) => release(context, reservationId),
    split: (reservationId, amount) => split(context, reservationId, amount),
    releaseExpired: (heldBefore) => releaseExpired(context, heldBefore),
    releaseHeldBy: (instanceIds) => releaseHeldBy(context, instanceIds),
    orgUsageSince: (orgId, since) => Accounts.orgUsageSince(sql, orgId, since),
    setCap: (orgId, userId, cap) => MemberSpending.setCap(sql, orgId, userId, cap),
    spending: (orgId, userIds) => MemberSpending.spending(sql, orgId, userIds)
  })
})

export const layer = Layer.effect(CreditStore, make)
