/**
 * Spend from the ledger (decision 0022): the reservation rows of the range (`SpendRows`) grouped
 * by the query's keys (`SpendKeys`), one page of groups in key order and the totals of every
 * group (`SpendGroups`), made window by window where the groups are many (`SpendWindows`), all
 * read from one snapshot.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type SpendPage, SpendRow, SpendTotals } from "@huddle/domain/spend/SpendQuery"
import { type Service, SpendRepository } from "@huddle/domain/spend/SpendRepository"
import { Effect, Layer } from "effect"
import { groupsIn, type Row, totalsOf } from "./SpendGroups.js"
import { isTime } from "./SpendKeys.js"
import { fewFirst, memberFirst, timeFirst } from "./SpendWindows.js"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const query: Service["query"] = (scope, q, tiers) =>
    Effect.gen(function*() {
      // The totals and every window read one snapshot of the ledger.
      yield* sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`
      // JIT compiling costs ~0.1 s per query here and gains nothing on one pass over the rows.
      yield* sql`SET LOCAL jit = off`
      const unit = q.groupBy[0]
      // Where the member or a period first comes (after keys of few values, or first).
      const lead = q.groupBy.findIndex((key) => key === "member" || isTime(key))
      const { groups, totals } = unit !== undefined && isTime(unit)
        ? yield* timeFirst(sql, scope, q, unit, tiers)
        : unit === "member" && q.groupBy.some(isTime)
        ? yield* memberFirst(sql, scope, q, tiers)
        : lead > 0 && q.groupBy.includes("member") && q.groupBy.some(isTime)
        ? yield* fewFirst(sql, scope, q, lead, tiers)
        : yield* groupsIn(sql, scope, q, q.from, q.to, q.limit + 1, tiers).pipe(
          Effect.map(({ first, groups }) => ({ groups, totals: totalsOf(first) }))
        )
      const toRow = (row: Row) => {
        const fields: Record<string, unknown> = {
          credits: Number(row.credits),
          calls: Number(row.calls),
          input_tokens: Number(row.input_tokens),
          output_tokens: Number(row.output_tokens)
        }
        q.groupBy.forEach((key, i) => {
          const value = row.keys![i + 1]!
          if (isTime(key)) fields["period"] = value
          else if (key === "model" || key === "tier") fields[key] = value === "" ? null : value
          else fields[key] = value
        })
        return new SpendRow(fields as SpendRow, { disableValidation: true })
      }
      const more = groups.length > q.limit
      const shown = groups.slice(0, q.limit)
      return {
        rows: shown.map(toRow),
        totals: new SpendTotals(totals, { disableValidation: true }),
        next: more ? shown[shown.length - 1]!.keys! : null
      } satisfies SpendPage
    }).pipe(sql.withTransaction, Effect.orDie)

  return SpendRepository.of({ query })
})

export const layer = Layer.effect(SpendRepository, make)
