import { randomUUID } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { IdempotencyStore, type ClaimResult } from "@huddle/domain/request/IdempotencyStore"
import { Effect, Layer, Schema } from "effect"
import { Int8, Timestamp, toDate } from "./Rows.js"

/**
 * A `bytea` column: a `Buffer` from `pg`, a `Uint8Array` from PGlite; read as a `Uint8Array` of
 * its own (not a view into the driver's buffer).
 */
const Bytes = Schema.transform(Schema.Uint8ArrayFromSelf, Schema.Uint8ArrayFromSelf, {
  strict: true,
  decode: (bytes) => new Uint8Array(bytes),
  encode: (bytes) => bytes
})

/** A claim as written: the key with this claim's token, in progress until its lock lapses. */
const Claiming = Schema.Struct({
  scope: Schema.String,
  key: Schema.String,
  fingerprint: Schema.String,
  token: Schema.String,
  now: Timestamp,
  lockedUntil: Timestamp,
  expiredBefore: Timestamp
})

/** A row of `idempotency_keys` as a claim that did not win finds it. */
const KeyRow = Schema.Struct({
  fingerprint: Schema.String,
  state: Schema.Literal("in_progress", "completed"),
  locked_until: Timestamp,
  outcome: Schema.NullOr(Bytes)
})

/**
 * How often `claim` tries again when the key changes hands between its two statements (the
 * holder released it just then): after that it reports the key busy, and the client retries.
 */
const attempts = 3

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // One statement, so that of two concurrent claims exactly one wins, on PGlite and on
  // PostgreSQL alike: the insert, or the takeover of an expired record or a lapsed lock.
  const tryClaim = SqlSchema.findOne({
    Request: Claiming,
    Result: Schema.Struct({ token: Schema.String }),
    execute: (claim) =>
      sql`INSERT INTO idempotency_keys AS k (scope, key, fingerprint, token, state, locked_until, created_at)
          VALUES (${claim.scope}, ${claim.key}, ${claim.fingerprint}, ${claim.token}, 'in_progress',
                  ${claim.lockedUntil}, ${claim.now})
          ON CONFLICT (scope, key) DO UPDATE
            SET fingerprint = EXCLUDED.fingerprint, token = EXCLUDED.token, state = 'in_progress',
                locked_until = EXCLUDED.locked_until, outcome = NULL, created_at = EXCLUDED.created_at
            WHERE k.created_at < ${claim.expiredBefore}
               OR (k.state = 'in_progress' AND k.locked_until < ${claim.now})
          RETURNING token`
  })
  const findKey = SqlSchema.findOne({
    Request: Schema.Struct({ scope: Schema.String, key: Schema.String }),
    Result: KeyRow,
    execute: ({ key, scope }) =>
      sql`SELECT fingerprint, state, locked_until, outcome FROM idempotency_keys WHERE scope = ${scope} AND key = ${key}`
  })
  const purge = SqlSchema.single({
    Request: Schema.Struct({ createdBefore: Timestamp, now: Timestamp }),
    Result: Schema.Struct({ purged: Int8 }),
    execute: ({ createdBefore, now }) =>
      sql`WITH purged AS (
            DELETE FROM idempotency_keys
            WHERE created_at < ${createdBefore} AND (state = 'completed' OR locked_until < ${now})
            RETURNING 1)
          SELECT count(*) AS purged FROM purged`
  })

  return IdempotencyStore.of({
    claim: (request) =>
      Effect.gen(function*() {
        for (let attempt = 0; attempt < attempts; attempt++) {
          const token = randomUUID()
          const claimed = yield* tryClaim({ ...request, token })
          if (claimed._tag === "Some") {
            return { _tag: "Claimed", claim: { scope: request.scope, key: request.key, token } } satisfies ClaimResult
          }
          const found = yield* findKey(request)
          if (found._tag === "None") continue
          const row = found.value
          return row.state === "completed" && row.outcome !== null
            ? { _tag: "Completed", fingerprint: row.fingerprint, outcome: row.outcome } satisfies ClaimResult
            : { _tag: "InProgress", fingerprint: row.fingerprint, lockedUntil: row.locked_until } satisfies ClaimResult
        }
        return { _tag: "InProgress", fingerprint: request.fingerprint, lockedUntil: request.lockedUntil } satisfies ClaimResult
      }).pipe(Effect.orDie),
    // Whether the claim was still this caller's: nothing read but that a row matched.
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
    purge: (createdBefore, now) => purge({ createdBefore, now }).pipe(Effect.map((row) => row.purged), Effect.orDie)
  })
})

export const layer = Layer.effect(IdempotencyStore, make)
