/**
 * The server instances sharing one database, each known by a heartbeat. What an instance holds
 * (credit reservations, running intents) is recorded with its id, so that when its heartbeat
 * stops (the process was killed, the machine lost) another instance can give it back.
 */
import { Context, type Duration, type Effect } from "effect"

export interface Service {
  /** This instance's id. */
  readonly id: string
  /** Records that this instance is alive (registering it again if it had been given up). */
  readonly heartbeat: Effect.Effect<void>
  /** Instances, never this one, whose last heartbeat is older than `staleAfter`. */
  readonly lost: (staleAfter: Duration.Duration) => Effect.Effect<ReadonlyArray<string>>
  /** Forgets instances whose holdings were given back. */
  readonly forget: (ids: ReadonlyArray<string>) => Effect.Effect<void>
}

export class Instances extends Context.Tag("@huddle/domain/Instances")<Instances, Service>() {}
