import { Context, type DateTime, type Effect, type Option } from "effect"
import type { HuddleMessage, HuddleSession } from "./Huddle.js"
import type { Intent } from "./Intent.js"
import type { PageRequest } from "../shared/Page.js"

/**
 * A huddle's question, written with its intent's first row: the message, in the intent's session,
 * and the session itself when the question starts it (owned by the intent's owner).
 */
export interface Question {
  readonly message: HuddleMessage
  readonly newSession?: HuddleSession | undefined
}

export interface Service {
  /** Writes the intent (and, for a huddle's turn, its question) in one statement. */
  readonly insert: (intent: Intent, owner: { readonly userId: string; readonly workspaceId: string | null }, question?: Question) => Effect.Effect<void>
  /**
   * Writes the intent's current state (status, plan, output, usage …); with `answer`, adds that
   * message to the intent's session (and marks the session updated) in the same statement.
   * Returns whether it was written, with the answer: not when the intent (or its session, which
   * takes the intent with it) was deleted meanwhile.
   */
  readonly update: (intent: Intent, reviewedBy?: string, answer?: HuddleMessage) => Effect.Effect<boolean>
  /**
   * Moves an intent from one status to another only if it is still in the first: the guard that
   * makes approve and reject happen once. Returns whether it moved.
   */
  readonly transition: (id: string, from: Intent["status"], to: Intent["status"], reviewedBy: string) => Effect.Effect<boolean>
  readonly find: (id: string) => Effect.Effect<Option.Option<{ readonly intent: Intent; readonly userId: string; readonly workspaceId: string | null }>>
  /** Fails every intent still running on these (lost) instances; returns how many. */
  readonly failRunningOn: (instanceIds: ReadonlyArray<string>, error: { readonly error: string; readonly message: string }) => Effect.Effect<number>
  /**
   * Fails every intent still running (on any instance) whose last change is older than `before`:
   * runs no request can still be making (see IntentExpiry); returns how many.
   */
  readonly failRunningBefore: (before: DateTime.Utc, error: { readonly error: string; readonly message: string }) => Effect.Effect<number>
  /**
   * The user's intents, newest first, up to `limit + 1`; with `inOrgs`, only their personal ones
   * and those of these orgs (the ones they are still in).
   */
  readonly listForUser: (
    userId: string,
    page: PageRequest & {
      readonly status?: Intent["status"] | undefined
      readonly orgId?: string | undefined
      readonly inOrgs?: ReadonlyArray<string> | undefined
    }
  ) => Effect.Effect<ReadonlyArray<Intent>>
  /** The org's intents, every member's, newest first, up to `limit + 1`, each with its submitter. */
  readonly listForOrg: (
    orgId: string,
    page: PageRequest & { readonly status?: Intent["status"] | undefined }
  ) => Effect.Effect<ReadonlyArray<{ readonly intent: Intent; readonly submitter: { readonly userId: string; readonly email: string } }>>
}

export class IntentRepository extends Context.Tag("@huddle/domain/IntentRepository")<IntentRepository, Service>() {}
