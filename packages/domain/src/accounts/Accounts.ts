/**
 * Sign-up, login, logout and the caller's own profile.
 */
import { Context, DateTime, Effect, Layer, Option, Redacted, Schema } from "effect"
import { Conflict, type NotFound, SessionRequired, Unauthorized } from "../shared/Errors.js"
import { Ids } from "../shared/Ids.js"
import { OrgMembership } from "../orgs/Membership.js"
import { Preferences } from "./Preferences.js"
import type { Principal } from "./Principal.js"
import { CreditStore } from "../credits/CreditStore.js"
import { MembershipRepository } from "../orgs/MembershipRepository.js"
import { PasswordHasher } from "./PasswordHasher.js"
import { PreferenceRepository } from "./PreferenceRepository.js"
import { SecretTokens } from "./SecretTokens.js"
import { Transactor } from "../shared/Transactor.js"
import { UserRepository } from "./UserRepository.js"
import { WebSessionRepository } from "./WebSessionRepository.js"
import { type Email, User, type UserId } from "./User.js"
import { AccountSettings } from "./AccountSettings.js"
import { Organizations } from "../orgs/Organizations.js"
import { personalContext, reaches } from "../orgs/OrgAccess.js"
import { AuditLog } from "../audit/AuditLog.js"
import type { AuditEvent } from "../audit/Audit.js"
import { fromRows, type Page, type PageRequest } from "../shared/Page.js"
import { LedgerEntry } from "../credits/LedgerEntry.js"
import { traced } from "../observability/Traced.js"

export class LoginResult extends Schema.Class<LoginResult>("LoginResult")({
  token: Schema.String,
  expires_at: Schema.DateTimeUtc,
  user: User
}) {}

export class Profile extends Schema.Class<Profile>("Profile")({
  user: User,
  credits: Schema.Struct({ balance: Schema.Int }),
  preferences: Preferences,
  orgs: Schema.Array(OrgMembership)
}) {}

export interface Credentials {
  readonly email: Email
  readonly password: Redacted.Redacted<string>
}

export interface Service {
  readonly signup: (credentials: Credentials) => Effect.Effect<User, Conflict>
  /** The same `Unauthorized` for an unknown email and a wrong password. */
  readonly login: (credentials: Credentials) => Effect.Effect<LoginResult, Unauthorized>
  readonly logout: (principal: Principal) => Effect.Effect<void, SessionRequired>
  /**
   * The user, their personal balance, preferences and orgs. A key bound to an org sees that org
   * only, and the balance and preferences (its requests are paid from that balance first, and run
   * with those preferences below the org's), not the personal ledger, audit log or a change of
   * preferences: those answer as for the personal context it lacks (`personalContext`).
   */
  readonly profile: (principal: Principal) => Effect.Effect<Profile>
  readonly setPreferences: (principal: Principal, preferences: Preferences) => Effect.Effect<Preferences, NotFound>
  /** Account-level audit events the user took part in (API keys, deleted organizations), newest first. */
  readonly auditLog: (principal: Principal, page: PageRequest) => Effect.Effect<Page<AuditEvent>, NotFound>
  /**
   * The caller's personal credit ledger, newest first, with the balance now: what their requests
   * were charged and what they were granted. Only their own account; org pools are the admins'.
   */
  readonly ledger: (principal: Principal, page: PageRequest) => Effect.Effect<Page<LedgerEntry> & { readonly balance: number }, NotFound>
}

export class Accounts extends Context.Tag("@huddle/domain/Accounts")<Accounts, Service>() {}

const invalidLogin = new Unauthorized({ message: "Invalid email or password" })

export const make = Effect.gen(function*() {
  const ids = yield* Ids
  const users = yield* UserRepository
  const sessions = yield* WebSessionRepository
  const hasher = yield* PasswordHasher
  const tokens = yield* SecretTokens
  const credits = yield* CreditStore
  const memberships = yield* MembershipRepository
  const preferences = yield* PreferenceRepository
  const tx = yield* Transactor
  const settings = yield* AccountSettings
  const organizations = yield* Organizations
  const audit = yield* AuditLog
  // Verified against when the email is unknown, so that both failures cost the same time.
  const decoyHash = yield* hasher.hash(Redacted.make("decoy password, never accepted"))

  const signup: Service["signup"] = ({ email, password }) =>
    Effect.gen(function*() {
      const passwordHash = yield* hasher.hash(password)
      const user = new User({
        id: (yield* ids.next("usr")) as UserId,
        email,
        created_at: yield* DateTime.now
      })
      yield* tx.atomically(
        Effect.gen(function*() {
          yield* users.create(user, passwordHash)
          if (settings.starterCredits > 0) {
            yield* credits.grant({
              account: { ownerType: "user", ownerId: user.id, pool: "personal" },
              amount: settings.starterCredits,
              reason: "starter grant",
              actorId: null
            })
          }
        })
      )
      yield* organizations.joinInvitations(user.id, user.email)
      return user
    })

  /** A failed login against a real account is a security event for each org it belongs to. */
  const recordFailedLogin = (user: User) =>
    memberships.listForUser(user.id).pipe(
      Effect.flatMap((orgs) =>
        Effect.forEach(orgs, (org) =>
          audit.record({ orgId: org.id, eventType: "auth.login_failed", actorId: null, target: user.id, details: { email: user.email } }))
      )
    )

  const login: Service["login"] = ({ email, password }) =>
    Effect.gen(function*() {
      const found = yield* users.findByEmail(email)
      const ok = yield* hasher.verify(
        password,
        Option.match(found, { onNone: () => decoyHash, onSome: (_) => _.passwordHash })
      )
      if (Option.isNone(found)) return yield* invalidLogin
      const user = found.value.user
      if (!ok) {
        yield* recordFailedLogin(user)
        return yield* invalidLogin
      }
      yield* organizations.joinInvitations(user.id, user.email)
      const issued = yield* tokens.issue("hs")
      const now = yield* DateTime.now
      const expiresAt = DateTime.addDuration(now, settings.sessionTtl)
      yield* sessions.create({
        id: yield* ids.next("ses"),
        userId: user.id,
        prefix: issued.prefix,
        tokenHash: issued.hash,
        createdAt: now,
        expiresAt
      })
      return new LoginResult({ token: issued.token, expires_at: expiresAt, user })
    })

  const logout: Service["logout"] = (principal) =>
    principal.via === "session"
      ? Effect.flatMap(DateTime.now, (now) => sessions.revoke(principal.credential_id, now))
      : Effect.fail(new SessionRequired({ message: "Logging out needs a web session, not an API key" }))

  const profile: Service["profile"] = (principal) =>
    Effect.all({
      balance: credits.balance({ ownerType: "user", ownerId: principal.user.id, pool: "personal" }),
      preferences: preferences.get(principal.user.id),
      orgs: memberships.listForUser(principal.user.id)
    }, { concurrency: "unbounded" }).pipe(
      Effect.map(({ balance, orgs, preferences }) =>
        new Profile({ user: principal.user, credits: { balance }, preferences, orgs: orgs.filter((org) => reaches(principal, org.id)) })
      )
    )

  const setPreferences: Service["setPreferences"] = (principal, next) =>
    personalContext(principal).pipe(Effect.zipRight(preferences.put(principal.user.id, next)), Effect.as(next))

  const auditLog: Service["auditLog"] = (principal, page) =>
    personalContext(principal).pipe(
      Effect.zipRight(audit.list({ orgId: null, userId: principal.user.id, limit: page.limit, cursor: page.cursor })),
      Effect.map((rows) => fromRows(rows, page.limit))
    )

  const ledger: Service["ledger"] = (principal, page) => {
    const account = { ownerType: "user", ownerId: principal.user.id, pool: "personal" } as const
    return personalContext(principal).pipe(
      Effect.zipRight(Effect.all({
        rows: credits.ledger(account, page),
        balance: credits.balance(account)
      }, { concurrency: "unbounded" })),
      Effect.map(({ balance, rows }) => ({
        ...fromRows(rows.map((row) => new LedgerEntry(row, { disableValidation: true })), page.limit),
        balance
      }))
    )
  }

  return Accounts.of(traced("Accounts", { signup, login, logout, profile, setPreferences, auditLog, ledger }))
})

export const layer = Layer.effect(Accounts, make)
