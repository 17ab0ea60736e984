/**
 * In-memory layers for the domain's small ports, for tests that run domain services without a
 * database. Each keeps its state in the layer: a test that builds the layer anew starts empty.
 */
import { AuditEvent } from "@huddle/domain/audit/Audit"
import { AuditLog } from "@huddle/domain/audit/AuditLog"
import { Preferences } from "@huddle/domain/settings/Preferences"
import { PreferenceRepository } from "@huddle/domain/settings/PreferenceRepository"
import type { Workspace } from "@huddle/domain/accounts/Workspace"
import { WorkspaceRepository } from "@huddle/domain/accounts/WorkspaceRepository"
import { OrgPolicies } from "@huddle/domain/settings/Policy"
import { OrgSettingsRepository } from "@huddle/domain/orgs/OrgSettingsRepository"
import { type IdKind, Ids } from "@huddle/domain/shared/Ids"
import { Transactor } from "@huddle/domain/shared/Transactor"
import { DateTime, Effect, Layer, Option } from "effect"

/** The one instance that the in-memory stores record as running every reservation and intent. */
export const instanceId = "ins_memory"

/** Ids that sort in the order they were made: `<kind>_<counter>`, zero-padded. */
export const ids = Layer.sync(Ids, () => {
  let next = 0
  return Ids.of({ next: (kind: IdKind) => Effect.sync(() => `${kind}_${String(++next).padStart(10, "0")}`) })
})

/**
 * Runs the unit of work as it is. Nothing is rolled back when it fails: the tests that use it
 * do not depend on atomicity (that belongs to the SQL adapter's tests).
 */
export const transactor = Layer.succeed(Transactor, Transactor.of({ atomically: (effect) => effect }))

/** The in-memory world's users are known by id alone; this is the address each is given. */
export const emailOf = (userId: string): string => `${userId}@example.com`

export const auditLog = Layer.effect(
  AuditLog,
  Effect.map(Ids, (ids) => {
    const events: Array<AuditEvent> = []
    return AuditLog.of({
      record: (event) =>
        Effect.gen(function*() {
          const id = yield* ids.next("aud")
          const at = yield* DateTime.now
          events.push(
            new AuditEvent({
              id,
              org_id: event.orgId,
              actor_id: event.actorId,
              actor_email: event.actorId === null ? null : emailOf(event.actorId),
              event_type: event.eventType,
              target: event.target,
              details: event.details ?? {},
              created_at: at
            }, { disableValidation: true })
          )
        }),
      list: ({ cursor, eventType, limit, orgId, startAt, userId }) =>
        Effect.sync(() =>
          events
            .filter((event) =>
              (orgId === null
                ? event.org_id === null && (event.actor_id === (userId ?? "") || event.target === (userId ?? ""))
                : event.org_id === orgId) &&
              (eventType === undefined || event.event_type === eventType) &&
              (startAt === undefined || DateTime.greaterThanOrEqualTo(event.created_at, startAt)) &&
              (cursor === undefined || event.id < cursor)
            )
            .sort((a, b) => (a.id < b.id ? 1 : -1))
            .slice(0, limit + 1)
        )
    })
  })
)

export const preferences = Layer.sync(PreferenceRepository, () => {
  const byUser = new Map<string, Preferences>()
  return PreferenceRepository.of({
    get: (userId) => Effect.sync(() => byUser.get(userId) ?? new Preferences({})),
    put: (userId, next) => Effect.sync(() => void byUser.set(userId, next))
  })
})

/** Workspaces, starting with `initial`. */
export const workspaces = (initial: ReadonlyArray<Workspace> = []) =>
  Layer.sync(WorkspaceRepository, () => {
    const byId = new Map(initial.map((workspace) => [workspace.id, workspace]))
    const findPersonal = (ownerId: string) =>
      Option.fromNullable([...byId.values()].find((workspace) => workspace.owner_id === ownerId && workspace.personal))
    return WorkspaceRepository.of({
      findById: (id) => Effect.sync(() => Option.fromNullable(byId.get(id))),
      findPersonal: (ownerId) => Effect.sync(() => findPersonal(ownerId)),
      ensurePersonal: (candidate) =>
        Effect.sync(() =>
          Option.getOrElse(findPersonal(candidate.owner_id ?? ""), () => {
            byId.set(candidate.id, candidate)
            return candidate
          })
        ),
      createForOrg: (workspace) =>
        Effect.sync(() => {
          const taken = [...byId.values()].some((other) =>
            other.org_id === workspace.org_id && other.name.toLowerCase() === workspace.name.toLowerCase()
          )
          if (!taken) byId.set(workspace.id, workspace)
          return !taken
        }),
      delete: (id) => Effect.sync(() => byId.delete(id)),
      list: ({ orgIds, ownerId }, { cursor, limit }) =>
        Effect.sync(() =>
          [...byId.values()]
            .filter((workspace) => (ownerId !== null && workspace.owner_id === ownerId) || (workspace.org_id !== null && orgIds.includes(workspace.org_id)))
            .filter((workspace) => cursor === undefined || workspace.id < cursor)
            .sort((a, b) => (a.id < b.id ? 1 : -1))
            .slice(0, limit + 1)
        )
    })
  })

/** Org policies and default preferences; an org never written has the empty ones. */
export const orgSettings = Layer.sync(OrgSettingsRepository, () => {
  const policies = new Map<string, OrgPolicies>()
  const defaults = new Map<string, Preferences>()
  return OrgSettingsRepository.of({
    policies: (orgId) => Effect.sync(() => policies.get(orgId) ?? new OrgPolicies({})),
    putPolicies: (orgId, next) => Effect.sync(() => void policies.set(orgId, next)),
    defaults: (orgId) => Effect.sync(() => defaults.get(orgId) ?? new Preferences({})),
    putDefaults: (orgId, next) => Effect.sync(() => void defaults.set(orgId, next))
  })
})
