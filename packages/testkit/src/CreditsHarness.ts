/**
 * The domain's `Credits` service over real storage, for tests of money: property tests,
 * concurrency within one process, and `bin/reserveMany` for concurrency across processes.
 */
import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import { type ChangeFeed, Storage, UlidIds } from "@huddle/adapters"
import type { Authority } from "@huddle/domain/credits/CreditStore"
import * as Credits from "@huddle/domain/credits/Credits"
import { Effect, Layer } from "effect"

/** `Credits` plus every storage port (`CreditStore`, `AuditLog`, …), over the given database layer (see `Database.layer`). */
export const layer = <E, R>(database: Layer.Layer<import("@effect/sql").SqlClient.SqlClient | ChangeFeed.ChangeFeed, E, R>) =>
  Credits.layer.pipe(
    Layer.provideMerge(Storage.layer),
    Layer.provideMerge(UlidIds.layer),
    Layer.provideMerge(database)
  )

const unique = (label: string) => `${label}_${randomBytes(6).toString("hex")}`

export interface Payer {
  readonly userId: string
  /** An API key of the user, valid until revoked. */
  readonly authority: Authority
}

/** An organization row (the audit log and spending rows refer to it). */
export const makeOrg = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const id = unique("org")
  yield* sql`INSERT INTO organizations (id, name, slug, created_at) VALUES (${id}, ${id}, ${id}, now())`
  return id
}).pipe(Effect.orDie)

/**
 * A user with an API key and, given an org, an active membership in it: what a reservation
 * checks as it takes credits. Rows are written directly, so that money tests need no HTTP.
 */
export const makePayer = (orgId: string | null, userId = unique("usr")) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const email = `${userId}@example.com`
    yield* sql`INSERT INTO users (id, email, password_hash, created_at) VALUES (${userId}, ${email}, 'not-a-hash', now())
               ON CONFLICT (id) DO NOTHING`
    if (orgId !== null) {
      yield* sql`INSERT INTO memberships (org_id, email, user_id, role, status, created_at, joined_at)
                 VALUES (${orgId}, ${email}, ${userId}, 'member', 'active', now(), now()) ON CONFLICT DO NOTHING`
    }
    const keyId = unique("key")
    yield* sql`INSERT INTO api_keys (id, user_id, name, prefix, last_four, token_hash, created_at)
               VALUES (${keyId}, ${userId}, 'test', ${keyId}, 'abcd', 'not-a-hash', now())`
    return { userId, authority: { via: "api_key", credentialId: keyId, actorId: userId } } satisfies Payer
  }).pipe(Effect.orDie)
