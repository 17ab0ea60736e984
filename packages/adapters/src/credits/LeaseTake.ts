/**
 * Taking a lease (decision 0021): earmarks a block of an account for this instance (on an org
 * pool, for one member and within their cap) in one statement, `huddle_take_lease` (migration
 * 0016), which reads what is free under the account's row lock. What it earmarks joins the pot
 * in memory; what it could not earmark says why, and whether waiting may help.
 */
import type { Cap, CapPeriod, CreditAccountRef } from "@huddle/domain/credits/CreditStore"
import { Effect } from "effect"
import type { CreditSql } from "./CreditSql.js"
import { type LeaseLedger, potKey } from "./LeaseLedger.js"

/** Why a source could not pay: short (perhaps for a while, if others hold earmarks), or the member's cap. */
export interface Short {
  readonly _tag: "Short"
  readonly elsewhere: boolean
  readonly cap: (Cap & { readonly remaining: number }) | null
}

/**
 * Earmarks between `need` and `want` credits of the account (for the payer, within their cap, on
 * an org pool); none when fewer than `need` are free.
 */
export const take = (
  { ids, instance, sql }: CreditSql,
  ledger: LeaseLedger,
  account: CreditAccountRef,
  userId: string,
  need: number,
  want: number
) => {
  // On an org pool the earmark is the payer's, counted against their cap; a personal balance has no member.
  const memberId = account.ownerType === "org" ? userId : null
  return Effect.flatMap(ids.next("res"), (leaseId) =>
    sql<{
      taken: string
      account_id: string | null
      leased_before: string
      member_leased_before: string
      held_elsewhere: boolean
      cap_amount: string | null
      cap_period: CapPeriod | null
      cap_used: string | null
      room: string | null
      month_start: Date
    }>`SELECT * FROM huddle_take_lease(${leaseId}, ${instance}, ${account.ownerType}, ${account.ownerId}, ${account.pool},
                                       ${memberId}, ${need}, ${want})`.pipe(
      Effect.map(([row]) => {
        const taken = Number(row!.taken)
        const accountId = row!.account_id
        const key = potKey(account, userId)
        const own = ledger.pots.get(key)
        const ownLeased = own?.leased ?? 0
        const ownFree = own?.free ?? 0
        if (taken > 0 && accountId !== null) {
          const pot = own ?? { accountId, month: null, free: 0, leased: 0, leases: [] }
          pot.free += taken
          pot.leased += taken
          pot.leases.push(leaseId)
          // The database's month: what the member's spending from this pot counts in.
          pot.month = memberId === null ? null : new Date(row!.month_start)
          ledger.pots.set(key, pot)
          ledger.work.unsafeOpen()
        }
        const memberLeased = Number(row!.member_leased_before)
        const cap = row!.cap_amount === null || row!.cap_period === null ? null : {
          amount: Number(row!.cap_amount),
          period: row!.cap_period,
          // What the member could still take: less what was charged, held, or earmarked elsewhere.
          remaining: Math.max(0, Number(row!.cap_amount) - Number(row!.cap_used ?? 0) - memberLeased + ownFree)
        }
        // What was short, and whether what others hold of it comes back: earmarks come back within
        // a tick (other instances', this instance's for other members or from failed batches);
        // reservations held elsewhere as they close. The cap only by the member's own earmarks.
        const capped = row!.room !== null && Number(row!.room) < need
        const short: Short = {
          _tag: "Short",
          elsewhere: capped
            ? memberLeased - ownLeased > 0
            : row!.held_elsewhere || Number(row!.leased_before) - ownLeased > 0,
          cap
        }
        return { taken, short }
      })
    ))
}
