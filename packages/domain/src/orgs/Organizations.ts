/**
 * Organizations and their members: creation (web session only), listing, deletion, invitations,
 * roles, removal and leaving. An organization always keeps at least one admin. Every change is
 * recorded in the audit log.
 */
import { Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { AuditEvent } from "../audit/Audit.js"
import { Conflict, type Forbidden, NotFound, SessionRequired } from "../shared/Errors.js"
import { Ids } from "../shared/Ids.js"
import { OrgMembership, type Role } from "./Membership.js"
import { type Member, Organization, slugify } from "./Organization.js"
import { fromRows, type Page, type PageRequest } from "../shared/Page.js"
import { OrgPolicies } from "../settings/Policy.js"
import type { Principal } from "../identity/Principal.js"
import { AuditLog, type AuditQuery } from "../audit/AuditLog.js"
import { CreditStore } from "../credits/CreditStore.js"
import { MembershipRepository } from "./MembershipRepository.js"
import { OrganizationRepository, type Service as OrganizationRepositoryService } from "./OrganizationRepository.js"
import { OrgSettingsRepository } from "./OrgSettingsRepository.js"
import { ApiKeyRepository } from "../identity/ApiKeyRepository.js"
import { Transactor } from "../shared/Transactor.js"
import { OrgAccess, orgNotFound, reaches } from "./OrgAccess.js"
import { traced } from "../observability/Traced.js"

export class CreditPoolView extends Schema.Class<CreditPoolView>("CreditPool")({
  subscription_balance: Schema.Int,
  addon_balance: Schema.Int
}) {}

export class Dashboard extends Schema.Class<Dashboard>("Dashboard")({
  organization: Organization,
  members: Schema.Struct({ active: Schema.Int, pending: Schema.Int }),
  credits: CreditPoolView,
  usage: Schema.Struct({ period_start: Schema.DateTimeUtc, credits_used: Schema.Int }),
  policies: OrgPolicies,
  recent_audit_events: Schema.Array(AuditEvent)
}) {}

export interface Service {
  readonly create: (principal: Principal, name: string) => Effect.Effect<Organization, SessionRequired>
  readonly list: (principal: Principal) => Effect.Effect<ReadonlyArray<OrgMembership>>
  readonly remove: (principal: Principal, orgId: string) => Effect.Effect<void, NotFound | Forbidden>
  readonly invite: (
    principal: Principal,
    orgId: string,
    input: { readonly email: string; readonly role: Role }
  ) => Effect.Effect<Member, NotFound | Forbidden | Conflict>
  readonly members: (principal: Principal, orgId: string, page: PageRequest) => Effect.Effect<Page<Member>, NotFound | Forbidden>
  readonly setRole: (principal: Principal, orgId: string, member: string, role: Role) => Effect.Effect<Member, NotFound | Forbidden | Conflict>
  readonly removeMember: (principal: Principal, orgId: string, member: string) => Effect.Effect<void, NotFound | Forbidden | Conflict>
  readonly leave: (principal: Principal, orgId: string) => Effect.Effect<void, NotFound | Conflict>
  readonly dashboard: (principal: Principal, orgId: string) => Effect.Effect<Dashboard, NotFound | Forbidden>
  readonly auditLog: (
    principal: Principal,
    orgId: string,
    query: Omit<AuditQuery, "orgId">
  ) => Effect.Effect<Page<AuditEvent>, NotFound | Forbidden>
  /** Called when a user signs up or logs in: pending invitations for their email become memberships. */
  readonly joinInvitations: (userId: string, email: string) => Effect.Effect<void>
}

export class Organizations extends Context.Tag("@huddle/domain/Organizations")<Organizations, Service>() {}

const lastAdmin = new Conflict({ message: "An organization must keep at least one admin" })

/** The first moment of the current calendar month (UTC): the period usage is reported for. */
export const periodStart = (now: DateTime.Utc): DateTime.Utc => DateTime.startOf(now, "month")

/** A member (or pending invitation) by user id or email, or `NotFound`. */
export const memberOf = (orgs: OrganizationRepositoryService) => (orgId: string, member: string) =>
  orgs.findMember(orgId, member).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(new NotFound({ message: "Member not found" })),
      onSome: Effect.succeed
    }))
  )

/** What changing a membership takes. */
interface MemberChanges {
  readonly orgs: OrganizationRepositoryService
  readonly access: Context.Tag.Service<typeof OrgAccess>
  readonly audit: Context.Tag.Service<typeof AuditLog>
  readonly tx: Context.Tag.Service<typeof Transactor>
  readonly keys: Context.Tag.Service<typeof ApiKeyRepository>
}

/** What an org's dashboard reads. */
interface DashboardReads {
  readonly orgs: OrganizationRepositoryService
  readonly access: Context.Tag.Service<typeof OrgAccess>
  readonly audit: Context.Tag.Service<typeof AuditLog>
  readonly credits: Context.Tag.Service<typeof CreditStore>
  readonly settings: Context.Tag.Service<typeof OrgSettingsRepository>
}

/**
 * A member leaving (removed, or by their own choice) takes their keys bound to the org with
 * them: invited back, they make new ones, rather than an old key coming back to life.
 */
const revokeBoundKeys = ({ audit, keys }: MemberChanges, orgId: string, userId: string | null, actorId: string, cause: "member.removed" | "member.left") =>
  userId === null ? Effect.void : Effect.gen(function*() {
    const revoked = yield* keys.revokeBoundTo(userId, orgId, yield* DateTime.now)
    yield* Effect.forEach(revoked, (key) =>
      audit.record({
        orgId,
        eventType: "api_key.revoked",
        actorId,
        target: key.id,
        details: { by: cause, user_id: userId, name: key.name, prefix: key.prefix }
      }), { discard: true })
  })

/** Fails when the change would leave the org without an active admin. */
const keepAnAdmin = ({ orgs }: MemberChanges, orgId: string, member: Member, nextRole: Role | null) =>
  member.status === "active" && member.role === "admin" && nextRole !== "admin"
    ? orgs.lockAdmins(orgId).pipe(Effect.filterOrFail((admins) => admins > 1, () => lastAdmin), Effect.asVoid)
    : Effect.void

const setRole = (changes: MemberChanges): Service["setRole"] => (principal, orgId, memberRef, role) =>
  Effect.gen(function*() {
    const { access, audit, orgs, tx } = changes
    const findMember = memberOf(orgs)
    yield* access.admin(principal, orgId)
    yield* tx.atomically(Effect.gen(function*() {
      const member = yield* findMember(orgId, memberRef)
      if (member.role === role) return
      yield* keepAnAdmin(changes, orgId, member, role)
      yield* orgs.setRole(orgId, member.email, role)
      yield* audit.record({
        orgId,
        eventType: "member.role_changed",
        actorId: principal.user.id,
        target: member.user_id ?? member.email,
        details: { email: member.email, from: member.role, to: role }
      })
    }))
    return yield* findMember(orgId, memberRef)
  })

const removeMember = (changes: MemberChanges): Service["removeMember"] => (principal, orgId, memberRef) =>
  Effect.gen(function*() {
    const { access, audit, orgs, tx } = changes
    const findMember = memberOf(orgs)
    yield* access.admin(principal, orgId)
    yield* tx.atomically(Effect.gen(function*() {
      const member = yield* findMember(orgId, memberRef)
      yield* keepAnAdmin(changes, orgId, member, null)
      yield* orgs.removeMember(orgId, member.email)
      yield* revokeBoundKeys(changes, orgId, member.user_id, principal.user.id, "member.removed")
      yield* audit.record({
        orgId,
        eventType: "member.removed",
        actorId: principal.user.id,
        target: member.user_id ?? member.email,
        details: { email: member.email, role: member.role, status: member.status }
      })
    }))
  })

const leave = (changes: MemberChanges): Service["leave"] => (principal, orgId) =>
  Effect.gen(function*() {
    const { access, audit, orgs, tx } = changes
    const findMember = memberOf(orgs)
    yield* access.member(principal, orgId)
    yield* tx.atomically(Effect.gen(function*() {
      const member = yield* findMember(orgId, principal.user.id)
      yield* keepAnAdmin(changes, orgId, member, null)
      yield* orgs.removeMember(orgId, member.email)
      yield* revokeBoundKeys(changes, orgId, principal.user.id, principal.user.id, "member.left")
      yield* audit.record({
        orgId,
        eventType: "member.left",
        actorId: principal.user.id,
        target: principal.user.id,
        details: { email: member.email, role: member.role }
      })
    }))
  })

const poolOf = (credits: Context.Tag.Service<typeof CreditStore>, orgId: string) =>
  Effect.all({
    subscription_balance: credits.balance({ ownerType: "org", ownerId: orgId, pool: "subscription" }),
    addon_balance: credits.balance({ ownerType: "org", ownerId: orgId, pool: "addon" })
  }).pipe(Effect.map((balances) => new CreditPoolView(balances)))

const dashboard = ({ access, audit, credits, orgs, settings }: DashboardReads): Service["dashboard"] => (principal, orgId) =>
  Effect.gen(function*() {
    yield* access.admin(principal, orgId)
    const organization = yield* orgs.findById(orgId).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.fail(orgNotFound), onSome: Effect.succeed }))
    )
    const period_start = periodStart(yield* DateTime.now)
    const { counts, credits_used, policies, poolView, recent } = yield* Effect.all({
      counts: orgs.counts(orgId),
      credits_used: credits.orgUsageSince(orgId, period_start),
      policies: settings.policies(orgId),
      poolView: poolOf(credits, orgId),
      recent: audit.list({ orgId, limit: 10 })
    })
    return new Dashboard({
      organization,
      members: { active: counts.members, pending: counts.pending },
      credits: poolView,
      usage: { period_start, credits_used },
      policies,
      recent_audit_events: recent.slice(0, 10)
    })
  })

export const make = Effect.gen(function*() {
  const ids = yield* Ids
  const orgs = yield* OrganizationRepository
  const memberships = yield* MembershipRepository
  const settings = yield* OrgSettingsRepository
  const credits = yield* CreditStore
  const audit = yield* AuditLog
  const access = yield* OrgAccess
  const tx = yield* Transactor
  const keys = yield* ApiKeyRepository

  const findMember = memberOf(orgs)

  const create: Service["create"] = (principal, name) =>
    Effect.gen(function*() {
      if (principal.via !== "session") {
        return yield* new SessionRequired({ message: "Creating an organization needs a web session, not an API key" })
      }
      const id = yield* ids.next("org")
      const base = slugify(name)
      const created_at = yield* DateTime.now
      // A taken slug gets a short suffix from the id; the id is unique, so this ends.
      const candidates = [base, `${base}-${id.slice(-4)}`, `${base}-${id.slice(-8)}`, `${base}-${id.slice(4)}`]
      for (const slug of candidates) {
        const org = new Organization({ id, name, slug, created_at })
        const done = yield* tx.atomically(
          orgs.create(org, { userId: principal.user.id, email: principal.user.email }).pipe(
            Effect.zipRight(audit.record({
              orgId: id,
              eventType: "org.created",
              actorId: principal.user.id,
              target: id,
              details: { name, slug }
            })),
            Effect.as(true)
          )
        ).pipe(Effect.catchTag("Conflict", () => Effect.succeed(false)))
        if (done) return org
      }
      return yield* Effect.dieMessage("could not allocate an organization slug")
    })

  const list: Service["list"] = (principal) =>
    memberships.listForUser(principal.user.id).pipe(
      Effect.map((all) => all.filter((org) => reaches(principal, org.id)))
    )

  const remove: Service["remove"] = (principal, orgId) =>
    Effect.gen(function*() {
      yield* access.admin(principal, orgId)
      const org = yield* orgs.findById(orgId).pipe(Effect.flatMap(Option.match({
        onNone: () => Effect.fail(orgNotFound),
        onSome: Effect.succeed
      })))
      yield* tx.atomically(
        orgs.delete(orgId).pipe(
          Effect.zipRight(audit.record({
            orgId: null,
            eventType: "org.deleted",
            actorId: principal.user.id,
            target: orgId,
            details: { name: org.name, slug: org.slug }
          }))
        )
      )
    })

  const invite: Service["invite"] = (principal, orgId, { email, role }) =>
    Effect.gen(function*() {
      yield* access.admin(principal, orgId)
      const at = yield* DateTime.now
      yield* tx.atomically(
        orgs.invite({ orgId, email, role, invitedBy: principal.user.id, at }).pipe(
          Effect.zipRight(audit.record({
            orgId,
            eventType: "member.invited",
            actorId: principal.user.id,
            target: email,
            details: { role }
          }))
        )
      )
      return yield* findMember(orgId, email)
    })

  const members: Service["members"] = (principal, orgId, page) =>
    access.admin(principal, orgId).pipe(
      // What members spent, with every charge this instance has answered for.
      Effect.zipRight(credits.flush),
      Effect.zipRight(orgs.members(orgId, page)),
      Effect.map((rows) => {
        const result = fromRows(rows.map((member) => ({ id: member.email, member })), page.limit)
        return { data: result.data.map((_) => _.member), next_cursor: result.next_cursor }
      })
    )

  const auditLog: Service["auditLog"] = (principal, orgId, query) =>
    access.admin(principal, orgId).pipe(
      Effect.zipRight(audit.list({ ...query, orgId })),
      Effect.map((rows) => fromRows(rows, query.limit))
    )

  const joinInvitations: Service["joinInvitations"] = (userId, email) =>
    Effect.gen(function*() {
      const at = yield* DateTime.now
      yield* tx.atomically(
        orgs.activateInvitations(email, userId, at).pipe(
          Effect.flatMap((joined) =>
            Effect.forEach(joined, (orgId) =>
              audit.record({ orgId, eventType: "member.joined", actorId: userId, target: userId, details: { email } }))
          )
        )
      )
    })

  const changes: MemberChanges = { orgs, access, audit, tx, keys }

  return Organizations.of(traced("Organizations", {
    create,
    list,
    remove,
    invite,
    members,
    setRole: setRole(changes),
    removeMember: removeMember(changes),
    leave: leave(changes),
    dashboard: dashboard({ orgs, access, audit, credits, settings }),
    auditLog,
    joinInvitations
  }))
})

export const layer = Layer.effect(Organizations, make)
