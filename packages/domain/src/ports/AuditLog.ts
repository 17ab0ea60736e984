import { Context, type DateTime, type Effect } from "effect"
import type { AuditEvent, AuditEventType, NewAuditEvent } from "../Audit.js"
import type { PageRequest } from "../Page.js"

export interface AuditQuery extends PageRequest {
  readonly orgId: string
  readonly eventType?: AuditEventType | undefined
  /** Only events at or after this time. */
  readonly startAt?: DateTime.Utc | undefined
}

export interface Service {
  /** Appends an event; entries are never changed afterwards. */
  readonly record: (event: NewAuditEvent) => Effect.Effect<void>
  /** An org's events, newest first, up to `limit + 1` of them. */
  readonly list: (query: AuditQuery) => Effect.Effect<ReadonlyArray<AuditEvent>>
}

export class AuditLog extends Context.Tag("@huddle/domain/AuditLog")<AuditLog, Service>() {}
