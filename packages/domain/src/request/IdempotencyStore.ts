/**
 * Idempotency keys: the first outcome of a request sent with a client's key, kept so that a
 * retry gets that outcome again instead of running (and charging) twice. A key is claimed
 * before the request runs; the claim holds a lock that expires, so that a claim left by a
 * crashed process frees the key again. Records older than the retention window count as absent.
 *
 * The outcome is opaque bytes to the store (the HTTP edge seals it before handing it over).
 */
import { Context, type DateTime, type Effect } from "effect"

/** A claim this caller holds: only its holder may renew, complete or release it. */
export interface Claim {
  /** Whose keys: a namespace chosen by the caller (the server uses the credential's id). */
  readonly scope: string
  readonly key: string
  readonly token: string
}

export interface ClaimRequest {
  readonly scope: string
  readonly key: string
  /** What the request was (a digest); the same key with another fingerprint is a misuse. */
  readonly fingerprint: string
  readonly now: DateTime.Utc
  /** Until when the claim holds unless renewed. */
  readonly lockedUntil: DateTime.Utc
  /** Records created before this are expired: ignored and replaced. */
  readonly expiredBefore: DateTime.Utc
}

export type ClaimResult =
  /** The key was free (or expired, or its claim's lock had lapsed): the caller runs the request. */
  | { readonly _tag: "Claimed"; readonly claim: Claim }
  /** Another request holds the key and has not finished. */
  | { readonly _tag: "InProgress"; readonly fingerprint: string; readonly lockedUntil: DateTime.Utc }
  /** The key's request finished; this is its recorded outcome. */
  | { readonly _tag: "Completed"; readonly fingerprint: string; readonly outcome: Uint8Array }

export interface Service {
  /** Claims the key, or tells who has it; atomic across connections and instances. */
  readonly claim: (request: ClaimRequest) => Effect.Effect<ClaimResult>
  /** Extends the lock of a claim still held; false when it is no longer this caller's. */
  readonly renew: (claim: Claim, lockedUntil: DateTime.Utc) => Effect.Effect<boolean>
  /** Records the outcome of a claim still held; false when it is no longer this caller's. */
  readonly complete: (claim: Claim, outcome: Uint8Array) => Effect.Effect<boolean>
  /** Gives the key up without an outcome (the request failed in a way worth retrying). */
  readonly release: (claim: Claim) => Effect.Effect<void>
  /** Deletes records created before `createdBefore` whose lock has lapsed by `now`; how many. */
  readonly purge: (createdBefore: DateTime.Utc, now: DateTime.Utc) => Effect.Effect<number>
}

export class IdempotencyStore extends Context.Tag("@huddle/domain/IdempotencyStore")<IdempotencyStore, Service>() {}
