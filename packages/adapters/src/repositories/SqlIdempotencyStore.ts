import { randomUUID } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import { IdempotencyStore, type ClaimResult } from "@huddle/domain/request/IdempotencyStore"
import { Effect, Layer } from "effect"
import { toDate, utc } from "./Rows.js"

interface KeyRow {
  readonly fingerprint: string
  readonly state: "in_progress" | "completed"
  readonly locked_until: Date
  readonly outcome: Uint8Array | null
}

/**
 * How often `claim` tries again when the key changes hands between its two statements (the
 * holder released it just then): after that it reports the key busy, and the client retries.
 */
const attempts = 3

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  return IdempotencyStore.of({
    claim: (request) =>
      Effect.gen(function*() {
        for (let attempt = 0; attempt < attempts; attempt++) {
          const token = randomUUID()
          // One statement, so that of two concurrent claims exactly one wins, on PGlite and on
          // PostgreSQL alike: the insert, or the takeover of an expired record or a lapsed lock.
          const claimed = yield* sql<{ token: string }>`
            INSERT INTO idempotency_keys AS k (scope, key, fingerprint, token, state, locked_until, created_at)
            VALUES (${request.scope}, ${request.key}, ${request.fingerprint}, ${token}, 'in_progress',
                    ${toDate(request.lockedUntil)}, ${toDate(request.now)})
            ON CONFLICT (scope, key) DO UPDATE
              SET fingerprint = EXCLUDED.fingerprint, token = EXCLUDED.token, state = 'in_progress',
                  locked_until = EXCLUDED.locked_until, outcome = NULL, created_at = EXCLUDED.created_at
              WHERE k.created_at < ${toDate(request.expiredBefore)}
                 OR (k.state = 'in_progress' AND k.locked_until < ${toDate(request.now)})
            RETURNING token`
          if (claimed.length > 0) {
            return { _tag: "Claimed", claim: { scope: request.scope, key: request.key, token } } satisfies ClaimResult
          }
          const rows = yield* sql<KeyRow>`
            SELECT fingerprint, state, locked_until, outcome FROM idempotency_keys
            WHERE scope = ${request.scope} AND key = ${request.key}`
          const row = rows[0]
          if (row === undefined) continue
          return row.state === "completed" && row.outcome !== null
            ? { _tag: "Completed", fingerprint: row.fingerprint, outcome: new Uint8Array(row.outcome) } satisfies ClaimResult
            : { _tag: "InProgress", fingerprint: row.fingerprint, lockedUntil: utc(row.locked_until) } satisfies ClaimResult
        }
        return { _tag: "InProgress", fingerprint: request.fingerprint, lockedUntil: request.lockedUntil } satisfies ClaimResult
      }).pipe(Effect.orDie),
    renew: (claim, lockedUntil) =>
      sql`UPDATE idempotency_keys SET locked_until = ${toDate(lockedUntil)}
          WHERE scope = ${claim.scope} AND key = ${claim.key} AND token = ${claim.token} AND state = 'in_progress'
          RETURNING token`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
    complete: (claim, outcome) =>
      sql`UPDATE idempotency_keys SET state = 'completed', outcome = ${Buffer.from(outcome)}
          WHERE scope = ${claim.scope} AND key = ${claim.key} AND token = ${claim.token} AND state = 'in_progress'
          RETURNING token`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
    release: (claim) =>
      sql`DELETE FROM idempotency_keys
          WHERE scope = ${claim.scope} AND key = ${claim.key} AND token = ${claim.token} AND state = 'in_progress'`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),
    purge: (createdBefore, now) =>
      sql<{ purged: number }>`
        WITH purged AS (
          DELETE FROM idempotency_keys
          WHERE created_at < ${toDate(createdBefore)} AND (state = 'completed' OR locked_until < ${toDate(now)})
          RETURNING 1)
        SELECT count(*) AS purged FROM purged`.pipe(Effect.map((rows) => Number(rows[0]?.purged ?? 0)), Effect.orDie)
  })
})

export const layer = Layer.effect(IdempotencyStore, make)
