import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { AuditEvent, AuditEventType } from "@huddle/domain/audit/Audit"
import { Ids } from "@huddle/domain/shared/Ids"
import { AuditLog } from "@huddle/domain/audit/AuditLog"
import { DateTime, Effect, Layer, Schema } from "effect"
import { Jsonb, pageFields, tableRow, Timestamp } from "./Rows.js"

const Details = AuditEvent.fields.details

/** A row of `audit_events`, with its actor's email as it is now. */
const AuditRow = tableRow(AuditEvent, { details: Jsonb(Details), created_at: Timestamp })

/** An event to append: its details written as a JSON document. */
const NewEvent = Schema.Struct({
  id: Schema.String,
  orgId: Schema.NullOr(Schema.String),
  actorId: Schema.NullOr(Schema.String),
  eventType: AuditEventType,
  target: Schema.NullOr(Schema.String),
  details: Schema.parseJson(Details),
  at: Timestamp
})

const Query = Schema.Struct({
  orgId: Schema.NullOr(Schema.String),
  userId: Schema.optional(Schema.String),
  eventType: Schema.optional(AuditEventType),
  startAt: Schema.optional(Timestamp),
  ...pageFields
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const ids = yield* Ids

  const insert = SqlSchema.void({
    Request: NewEvent,
    execute: (event) =>
      sql`INSERT INTO audit_events (id, org_id, actor_id, event_type, target, details, created_at)
          VALUES (${event.id}, ${event.orgId}, ${event.actorId}, ${event.eventType}, ${event.target},
                  ${event.details}::jsonb, ${event.at})`
  })
  const list = SqlSchema.findAll({
    Request: Query,
    Result: AuditRow,
    execute: ({ cursor, eventType, limit, orgId, startAt, userId }) =>
      sql`SELECT id, org_id, actor_id, (SELECT email FROM users WHERE users.id = audit_events.actor_id) AS actor_email,
                 event_type, target, details, created_at
          FROM audit_events
          WHERE ${
        orgId === null
          ? sql`org_id IS NULL AND (actor_id = ${userId ?? ""} OR target = ${userId ?? ""})`
          : sql`org_id = ${orgId}`
      }
          ${eventType === undefined ? sql`` : sql`AND event_type = ${eventType}`}
          ${startAt === undefined ? sql`` : sql`AND created_at >= ${startAt}`}
          ${cursor === undefined ? sql`` : sql`AND id < ${cursor}`}
          ORDER BY id DESC LIMIT ${limit + 1}`
  })

  return AuditLog.of({
    record: (event) =>
      Effect.gen(function*() {
        const id = yield* ids.next("aud")
        const at = yield* DateTime.now
        yield* insert({ ...event, id, details: event.details ?? {}, at })
      }).pipe(Effect.orDie),
    list: (query) => Effect.orDie(list(query))
  })
})

export const layer = Layer.effect(AuditLog, make)
