import { Context, type Effect, type Option } from "effect"
import type { HuddleMessage, HuddleSession } from "./Huddle.js"
import type { PageRequest } from "../shared/Page.js"

export interface Service {
  /** A new session with its first message, written together (one statement: a turn's writes are few). */
  readonly createSession: (session: HuddleSession, userId: string, first: HuddleMessage) => Effect.Effect<void>
  /** The session if this user owns it. */
  readonly findSession: (userId: string, id: string) => Effect.Effect<Option.Option<HuddleSession>>
  readonly listSessions: (userId: string, page: PageRequest) => Effect.Effect<ReadonlyArray<HuddleSession>>
  readonly renameSession: (userId: string, id: string, title: string) => Effect.Effect<Option.Option<HuddleSession>>
  readonly deleteSession: (userId: string, id: string) => Effect.Effect<boolean>
  /** Adds a message to the session and marks the session updated at its time, together. */
  readonly addMessage: (sessionId: string, message: HuddleMessage) => Effect.Effect<void>
  /** The session's messages, oldest first (at most the last `limit`). */
  readonly messages: (sessionId: string, limit: number) => Effect.Effect<ReadonlyArray<HuddleMessage>>
}

export class HuddleRepository extends Context.Tag("@huddle/domain/HuddleRepository")<HuddleRepository, Service>() {}
