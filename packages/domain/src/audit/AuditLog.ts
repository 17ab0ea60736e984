import { Context, type DateTime, type Effect } from "effect"
import type { AuditEvent, AuditEventType, NewAuditEvent } from "./Audit.js"
import type { PageRequest } from "../shared/Page.js"

export interface AuditQuery extends PageRequest {
  /** An org's events, or (null) account-level events that a user took part in. */
  readonly orgId: string | null
  /** With `orgId: null`: the user whose account events to list. */
  readonly userId?: string | undefined
  readonly eventType?: AuditEventType | undefined
  /** Only events at or after this time. */
  readonly startAt?: DateTime.Utc | undefined
}

export interface Service {
  /** Appends an event; entries are never changed afterwards. */
  readonly record: (event: NewAuditEvent) => Effect.Effect<void>
  /** Events newest first, up to `limit + 1` of them. */
  readonly list: (query: AuditQuery) => Effect.Effect<ReadonlyArray<AuditEvent>>
}

export class AuditLog extends Context.Tag("@huddle/domain/AuditLog")<AuditLog, Service>() {}
