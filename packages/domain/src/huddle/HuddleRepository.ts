import { Context, type Effect, type Option } from "effect"
import type { HuddleMessage, HuddleSession } from "./Huddle.js"
import type { PageRequest } from "../shared/Page.js"

/** Sessions and their messages; a turn's question and answer are written with its intent (IntentRepository). */
export interface Service {
  /** The session if this user owns it, with its last `limit` messages, oldest first (one read). */
  readonly findSession: (
    userId: string,
    id: string,
    limit: number
  ) => Effect.Effect<Option.Option<{ readonly session: HuddleSession; readonly messages: ReadonlyArray<HuddleMessage> }>>
  /** This user's sessions of the contexts the caller may see (personal ones, those of `orgIds`), newest first. */
  readonly listSessions: (
    userId: string,
    contexts: { readonly personal: boolean; readonly orgIds: ReadonlyArray<string> },
    page: PageRequest
  ) => Effect.Effect<ReadonlyArray<HuddleSession>>
  readonly renameSession: (userId: string, id: string, title: string) => Effect.Effect<Option.Option<HuddleSession>>
  readonly deleteSession: (userId: string, id: string) => Effect.Effect<boolean>
}

export class HuddleRepository extends Context.Tag("@huddle/domain/HuddleRepository")<HuddleRepository, Service>() {}
