/** An audit event said as a sentence, from its type and the details the service recorded with it. */
import { credits } from "../../format.js"
import type { AuditEvent } from "./wire.js"

export const eventTypeNames: Record<AuditEvent["event_type"], string> = {
  "org.created": "Organization created",
  "org.deleted": "Organization deleted",
  "member.invited": "Member invited",
  "member.joined": "Member joined",
  "member.role_changed": "Role changed",
  "member.removed": "Member removed",
  "member.left": "Member left",
  "policy.updated": "Policies changed",
  "preferences.updated": "Default preferences changed",
  "credits.granted": "Credits granted",
  "credits.cap_changed": "Spending cap changed",
  "credits.denied": "Request refused for credits",
  "api_key.created": "API key created",
  "api_key.revoked": "API key revoked",
  "auth.login_failed": "Failed log-in",
  "auth.password_changed": "Password changed",
  "auth.password_reset_issued": "Password reset issued",
  "auth.password_reset": "Password reset",
  "workspace.created": "Workspace created",
  "workspace.deleted": "Workspace deleted",
  "repository.connected": "Repository connected",
  "repository.disconnected": "Repository disconnected"
}

const text = (value: unknown): string | null => typeof value === "string" ? value : null
const amount = (value: unknown): string | null => typeof value === "number" ? credits(value) : null

const capText = (value: unknown): string => {
  if (value === null || typeof value !== "object") return "no cap"
  const cap = value as { readonly amount?: unknown; readonly period?: unknown }
  return `${amount(cap.amount) ?? "?"} ${cap.period === "total" ? "in total" : "a month"}`
}

/** What changed between two settings records: "model_tier: premium → standard". */
const changes = (before: unknown, after: unknown): string => {
  const was = (before ?? {}) as Record<string, unknown>
  const now = (after ?? {}) as Record<string, unknown>
  const keys = [...new Set([...Object.keys(was), ...Object.keys(now)])].filter((key) => was[key] !== now[key])
  if (keys.length === 0) return "no change"
  return keys.map((key) => `${key.replace(/_/g, " ")}: ${String(was[key] ?? "unset")} → ${String(now[key] ?? "unset")}`).join(", ")
}

/** The event's particulars, beyond its type: who, what, how much. */
export const describe = (event: AuditEvent): string => {
  const d = event.details
  const who = text(d.email) ?? event.target ?? ""
  switch (event.event_type) {
    case "org.created":
    case "org.deleted":
      return text(d.name) ?? ""
    case "member.invited":
      return `${who} as ${text(d.role) ?? "member"}`
    case "member.joined":
    case "member.left":
      return who
    case "member.removed":
      return `${who}${d.status === "pending" ? " (invitation withdrawn)" : ""}`
    case "member.role_changed":
      return `${who}: ${text(d.from) ?? "?"} → ${text(d.to) ?? "?"}`
    case "policy.updated":
    case "preferences.updated":
      return changes(d.before, d.after)
    case "credits.granted":
      return `${amount(d.amount) ?? ""} to the ${text(d.pool) ?? ""} pool${text(d.reason) === null ? "" : `: ${text(d.reason)}`}`
    case "credits.cap_changed":
      return `${who}: ${capText(d.from)} → ${capText(d.to)}`
    case "credits.denied":
      return `${amount(d.amount) ?? ""} asked${typeof d.cap === "number" ? `, over a cap of ${capText({ amount: d.cap, period: d.cap_period })}` : ""}`
    default:
      return text(d.name) ?? event.target ?? ""
  }
}

/** Who acted: the reader, the operator, Huddle itself, or a user by their id. */
export const actor = (event: AuditEvent, you: string): string =>
  event.actor_id === you
    ? "You"
    : event.actor_id === null
    ? (event.details.by === "operator" ? "The operator" : "Huddle")
    : event.actor_email ?? `User ${event.actor_id}`
