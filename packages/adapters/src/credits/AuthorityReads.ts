/**
 * The revocation rule's read (decision 0015) for reservations from a lease, batched: the checks
 * asked while a read is in flight go together in the next one, one round trip for all of them
 * (the same check asked twice in a batch is read once). Unloaded, a check is read at once, as
 * before; under load the database sees one read per round trip instead of one per request.
 *
 * The rule still holds: a check is only ever answered by a read that started after it was asked,
 * so a credential revoked or a membership removed before a reservation asked is seen by its read.
 *
 * The same read says whether the personal account (the first to pay) is **settled**: no credits
 * earmarked on any instance and no reservation held, so its balance is all it can pay with until
 * someone grants more. A settled balance below the amount means the lease would take nothing,
 * and the reservation goes to the next source without the lease's transaction (an org member
 * with no credits of their own, paid for by the pool, costs no lock on their empty account).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { NewReservation } from "@huddle/domain/credits/CreditStore"
import { Deferred, Effect, Exit, FiberId, Queue } from "effect"
import { credentialOk, memberOk } from "./AuthorityChecks.js"

export interface Authority {
  readonly credentialOk: boolean
  readonly memberOk: boolean
  /**
   * The personal account's balance when it is settled and below the amount of the check that was
   * read (0 when there is no account); undefined otherwise.
   */
  readonly settledBalance: number | undefined
}

interface Pending {
  readonly reservation: NewReservation
  readonly key: string
  readonly answer: Deferred.Deferred<Authority, SqlError>
}

/** At most this many distinct checks in one statement (each one binds a few parameters). */
const maxPerRead = 200

/** What makes two checks the same: the credential, the actor, the payer, the org context and the first account. */
const keyOf = (reservation: NewReservation) => {
  const authority = reservation.authority
  const first = reservation.accounts[0]
  return `${authority?.via ?? "-"}\u0000${authority?.credentialId ?? ""}\u0000${authority?.actorId ?? ""}\u0000${reservation.userId}\u0000${
    reservation.orgId ?? ""
  }\u0000${first?.ownerType ?? ""}\u0000${first?.ownerId ?? ""}\u0000${first?.pool ?? ""}`
}

/**
 * A settled account's balance when it is below the amount, -1 otherwise (NULL: no account). Its
 * held reservations are looked for (by account, migration 0015) only then.
 */
const settledOf = (sql: SqlClient.SqlClient, reservation: NewReservation) => {
  const first = reservation.accounts[0]
  if (first === undefined) return sql`-1`
  return sql`(SELECT CASE WHEN a.leased <> 0 OR a.balance >= ${reservation.amount} THEN -1
                          WHEN EXISTS (SELECT 1 FROM credit_reservations r WHERE r.account_id = a.id AND r.status = 'held') THEN -1
                          ELSE a.balance END
               FROM credit_accounts a WHERE a.owner_type = ${first.ownerType} AND a.owner_id = ${first.ownerId} AND a.pool = ${first.pool})`
}

const balanceOf = (value: unknown): number | undefined => {
  if (value === null || value === undefined) return 0
  const n = Number(value)
  return n < 0 ? undefined : n
}

/** `check(reservation)` answers whether its credential and memberships still stand; one reader per scope. */
export const make = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<Pending>()

    const read = (batch: ReadonlyArray<Pending>) => {
      const distinct = new Map<string, NewReservation>()
      for (const pending of batch) if (!distinct.has(pending.key)) distinct.set(pending.key, pending.reservation)
      const checks = [...distinct.values()]
      const columns = checks.map((reservation, i) =>
        sql`${credentialOk(sql, reservation)} AS ${sql(`c${i}`)}, ${memberOk(sql, reservation)} AS ${sql(`m${i}`)}, ${settledOf(sql, reservation)} AS ${
          sql(`s${i}`)
        }`
      )
      return sql<Record<string, unknown>>`SELECT ${sql.csv(columns)}`.pipe(
        Effect.map(([row]) => {
          const answers = new Map<string, Authority>()
          let i = 0
          for (const key of distinct.keys()) {
            answers.set(key, {
              credentialOk: row![`c${i}`] === true,
              memberOk: row![`m${i}`] === true,
              settledBalance: balanceOf(row![`s${i}`])
            })
            i++
          }
          return answers
        }),
        Effect.exit,
        Effect.map((exit) => {
          for (const pending of batch) {
            Deferred.unsafeDone(
              pending.answer,
              Exit.map(exit, (answers) => answers.get(pending.key)!)
            )
          }
        })
      )
    }

    // One read at a time: what is asked meanwhile waits in the queue for the next one.
    yield* Effect.forkScoped(
      Queue.takeBetween(queue, 1, maxPerRead).pipe(
        Effect.flatMap((batch) => read([...batch])),
        Effect.forever,
        // Stopping: whoever still waits is interrupted rather than left waiting.
        Effect.ensuring(Effect.flatMap(Queue.takeAll(queue), (left) =>
          Effect.forEach(left, (pending) => Deferred.interrupt(pending.answer), { discard: true })))
      )
    )

    return (reservation: NewReservation): Effect.Effect<Authority, SqlError> =>
      Effect.suspend(() => {
        const answer = Deferred.unsafeMake<Authority, SqlError>(FiberId.none)
        return Effect.zipRight(Queue.offer(queue, { reservation, key: keyOf(reservation), answer }), Deferred.await(answer))
      })
  })
