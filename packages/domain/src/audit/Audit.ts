import { Schema } from "effect"

/** Everything the audit log records. Org events are visible to that org's admins. */
export const AuditEventType = Schema.Literal(
  "org.created",
  "org.deleted",
  "member.invited",
  "member.joined",
  "member.role_changed",
  "member.removed",
  "member.left",
  "policy.updated",
  "preferences.updated",
  "credits.granted",
  "credits.cap_changed",
  "credits.denied",
  "api_key.created",
  "api_key.revoked",
  "auth.login_failed",
  "auth.password_changed",
  "auth.password_reset_issued",
  "auth.password_reset",
  "workspace.created",
  "workspace.deleted",
  "repository.connected",
  "repository.disconnected"
)
export type AuditEventType = typeof AuditEventType.Type

export class AuditEvent extends Schema.Class<AuditEvent>("AuditEvent")({
  id: Schema.String,
  org_id: Schema.NullOr(Schema.String),
  event_type: AuditEventType,
  /** The user who acted; null when the service acted on its own. */
  actor_id: Schema.NullOr(Schema.String),
  /** The acting user's email as it is now (what a reader of the log knows them by); null with no actor. */
  actor_email: Schema.NullOr(Schema.String),
  /** What was acted on (a user id, an email, a key id …). */
  target: Schema.NullOr(Schema.String),
  details: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  created_at: Schema.DateTimeUtc
}) {}

export interface NewAuditEvent {
  readonly orgId: string | null
  readonly eventType: AuditEventType
  readonly actorId: string | null
  readonly target: string | null
  readonly details?: Record<string, unknown>
}
