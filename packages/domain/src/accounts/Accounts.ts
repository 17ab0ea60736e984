/**
 * Sign-up, login, logout and the caller's own profile.
 */
import { Context, DateTime, Effect, Layer, Option, Redacted, Schema } from "effect"
import { Conflict, Forbidden, type NotFound, SessionRequired, Unauthorized } from "../shared/Errors.js"
import { Ids } from "../shared/Ids.js"
import { OrgMembership } from "../orgs/Membership.js"
import { Preferences } from "../settings/Preferences.js"
import type { Principal } from "../identity/Principal.js"
import { CreditStore } from "../credits/CreditStore.js"
import { MembershipRepository } from "../orgs/MembershipRepository.js"
import { PasswordHasher } from "./PasswordHasher.js"
import { PreferenceRepository } from "../settings/PreferenceRepository.js"
import { SecretTokens } from "./SecretTokens.js"
import { Transactor } from "../shared/Transactor.js"
import { UserRepository } from "./UserRepository.js"
import { WebSessionRepository } from "./WebSessionRepository.js"
import { PasswordResetRepository } from "./PasswordResetRepository.js"
import { type Email, User, type UserId } from "../identity/User.js"
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

/** A one-time password-reset token: shown once, to the operator who issued it. */
export class PasswordReset extends Schema.Class<PasswordReset>("PasswordReset")({
  user_id: Schema.String,
  token: Schema.String,
  expires_at: Schema.DateTimeUtc
}) {}

export interface PasswordChange {
  readonly current_password: Redacted.Redacted<string>
  readonly new_password: Redacted.Redacted<string>
}

export interface ResetRedemption {
  readonly token: Redacted.Redacted<string>
  readonly new_password: Redacted.Redacted<string>
}

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
   * Changes the caller's password (a web session only), ends their other web sessions and keeps
   * this one. A wrong current password is `Forbidden`: the session itself is fine.
   */
  readonly changePassword: (principal: Principal, change: PasswordChange) => Effect.Effect<void, SessionRequired | Forbidden>
  /** Issues a one-time reset token for the user, replacing any earlier unused one. */
  readonly issuePasswordReset: (user: User, details: Record<string, unknown>) => Effect.Effect<PasswordReset>
  /** Redeems a reset token: sets the password and ends every web session of its user. */
  readonly resetPassword: (redemption: ResetRedemption) => Effect.Effect<void, Unauthorized>
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

/** What the password operations take: the ports, the settings, and the hash verified against when the account is unknown. */
interface Passwords {
  readonly ids: Context.Tag.Service<typeof Ids>
  readonly users: Context.Tag.Service<typeof UserRepository>
  readonly sessions: Context.Tag.Service<typeof WebSessionRepository>
  readonly resets: Context.Tag.Service<typeof PasswordResetRepository>
  readonly hasher: Context.Tag.Service<typeof PasswordHasher>
  readonly tokens: Context.Tag.Service<typeof SecretTokens>
  readonly tx: Context.Tag.Service<typeof Transactor>
  readonly audit: Context.Tag.Service<typeof AuditLog>
  readonly settings: Context.Tag.Service<typeof AccountSettings>
  readonly decoyHash: string
}

const invalidReset = new Unauthorized({ message: "Invalid, used or expired reset token" })

const changePassword = ({ audit, decoyHash, hasher, sessions, tx, users }: Passwords): Service["changePassword"] => (principal, change) =>
  Effect.gen(function*() {
    if (principal.via !== "session") {
      return yield* new SessionRequired({ message: "Changing the password needs a web session, not an API key" })
    }
    const found = yield* users.findByEmail(principal.user.email)
    const ok = yield* hasher.verify(change.current_password, Option.match(found, { onNone: () => decoyHash, onSome: (_) => _.passwordHash }))
    if (Option.isNone(found) || !ok) return yield* new Forbidden({ message: "The current password is wrong" })
    const passwordHash = yield* hasher.hash(change.new_password)
    const now = yield* DateTime.now
    yield* tx.atomically(Effect.gen(function*() {
      yield* users.setPasswordHash(principal.user.id, passwordHash)
      const ended = yield* sessions.revokeAllForUser(principal.user.id, now, principal.credential_id)
      yield* audit.record({
        orgId: null,
        eventType: "auth.password_changed",
        actorId: principal.user.id,
        target: principal.user.id,
        details: { sessions_ended: ended }
      })
    }))
  })

const issuePasswordReset = ({ audit, ids, resets, settings, tokens, tx }: Passwords): Service["issuePasswordReset"] => (user, details) =>
  Effect.gen(function*() {
    const issued = yield* tokens.issue("hr")
    const now = yield* DateTime.now
    const expiresAt = DateTime.addDuration(now, settings.passwordResetTtl)
    yield* tx.atomically(Effect.zipRight(
      resets.create({ id: yield* ids.next("pwr"), userId: user.id, prefix: issued.prefix, tokenHash: issued.hash, createdAt: now, expiresAt }),
      audit.record({
        orgId: null,
        eventType: "auth.password_reset_issued",
        actorId: null,
        target: user.id,
        details: { ...details, prefix: issued.prefix, expires_at: DateTime.formatIso(expiresAt) }
      })
    ))
    return new PasswordReset({ user_id: user.id, token: issued.token, expires_at: expiresAt })
  })

const resetPassword = ({ audit, hasher, resets, sessions, tokens, tx, users }: Passwords): Service["resetPassword"] => ({ new_password, token }) =>
  Effect.gen(function*() {
    const now = yield* DateTime.now
    const prefix = tokens.prefixOf("hr", Redacted.value(token))
    if (Option.isNone(prefix)) return yield* invalidReset
    const found = yield* resets.findPending(prefix.value, now)
    if (Option.isNone(found) || !(yield* tokens.matches(Redacted.value(token), found.value.tokenHash))) return yield* invalidReset
    const reset = found.value
    const passwordHash = yield* hasher.hash(new_password)
    yield* tx.atomically(Effect.gen(function*() {
      // Only one redemption of a token wins, even when two arrive at once.
      if (!(yield* resets.consume(reset.id, now))) return yield* invalidReset
      yield* users.setPasswordHash(reset.userId, passwordHash)
      const ended = yield* sessions.revokeAllForUser(reset.userId, now)
      yield* audit.record({
        orgId: null,
        eventType: "auth.password_reset",
        actorId: reset.userId,
        target: reset.userId,
        details: { prefix: prefix.value, sessions_ended: ended }
      })
    }))
  })

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
  const resets = yield* PasswordResetRepository
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
        // Written after the answer: waiting for it would make a known email answer slower than
        // an unknown one (decision 0040).
        yield* Effect.forkDaemon(recordFailedLogin(user))
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

  const passwords: Passwords = { ids, users, sessions, resets, hasher, tokens, tx, audit, settings, decoyHash }

  return Accounts.of(traced("Accounts", {
    signup,
    login,
    logout,
    changePassword: changePassword(passwords),
    issuePasswordReset: issuePasswordReset(passwords),
    resetPassword: resetPassword(passwords),
    profile,
    setPreferences,
    auditLog,
    ledger
  }))
})

export const layer = Layer.effect(Accounts, make)
