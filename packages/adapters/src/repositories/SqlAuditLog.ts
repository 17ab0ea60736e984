import * as SqlClient from "@effect/sql/SqlClient"
import { AuditEvent, type AuditEventType } from "@huddle/domain/audit/Audit"
import { Ids } from "@huddle/domain/shared/Ids"
import { AuditLog } from "@huddle/domain/audit/AuditLog"
import { DateTime, Effect, Layer } from "effect"
import { toDate, utc } from "./Rows.js"

interface AuditRow {
  readonly id: string
  readonly org_id: string | null
  readonly actor_id: string | null
  readonly actor_email: string | null
  readonly event_type: AuditEventType
  readonly target: string | null
  readonly details: Record<string, unknown> | string
  readonly created_at: Date
}

const fromRow = (row: AuditRow) =>
  new AuditEvent({
    id: row.id,
    org_id: row.org_id,
    actor_id: row.actor_id,
    actor_email: row.actor_email,
    event_type: row.event_type,
    target: row.target,
    details: typeof row.details === "string" ? JSON.parse(row.details) : row.details,
    created_at: utc(row.created_at)
  }, { disableValidation: true })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const ids = yield* Ids

  return AuditLog.of({
    record: (event) =>
      Effect.gen(function*() {
        const id = yield* ids.next("aud")
        const at = yield* DateTime.now
        yield* sql`INSERT INTO audit_events (id, org_id, actor_id, event_type, target, details, created_at)
                   VALUES (${id}, ${event.orgId}, ${event.actorId}, ${event.eventType}, ${event.target},
                           ${JSON.stringify(event.details ?? {})}::jsonb, ${toDate(at)})`
      }).pipe(Effect.orDie),
    list: ({ cursor, eventType, limit, orgId, startAt, userId }) =>
      sql<AuditRow>`
        SELECT id, org_id, actor_id, (SELECT email FROM users WHERE users.id = audit_events.actor_id) AS actor_email,
               event_type, target, details, created_at
        FROM audit_events
        WHERE ${
        orgId === null
          ? sql`org_id IS NULL AND (actor_id = ${userId ?? ""} OR target = ${userId ?? ""})`
          : sql`org_id = ${orgId}`
      }
        ${eventType === undefined ? sql`` : sql`AND event_type = ${eventType}`}
        ${startAt === undefined ? sql`` : sql`AND created_at >= ${toDate(startAt)}`}
        ${cursor === undefined ? sql`` : sql`AND id < ${cursor}`}
        ORDER BY id DESC LIMIT ${limit + 1}`.pipe(
        Effect.map((rows) => rows.map(fromRow)),
        Effect.orDie
      )
  })
})

export const layer = Layer.effect(AuditLog, make)
