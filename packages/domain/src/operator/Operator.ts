/**
 * What only the operator of a deployment may do: mint credits (to a user's personal balance or
 * an org's subscription or add-on balance, always with a reason), read any account's ledger,
 * create users and revoke a user's keys. The operator is not a user: it acts through the
 * operator API (`HUDDLE_OPERATOR_TOKEN`) or the command line on the server, and every mint is a
 * ledger row and an audit event that says so.
 */
import { Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { type Conflict, NotFound } from "../shared/Errors.js"
import { fromRows, type Page, type PageRequest } from "../shared/Page.js"
import { AuditLog } from "../audit/AuditLog.js"
import { ApiKeyRepository } from "../identity/ApiKeyRepository.js"
import { type CreditAccountRef, CreditStore } from "../credits/CreditStore.js"
import { LedgerEntry } from "../credits/LedgerEntry.js"
import { OrganizationRepository } from "../orgs/OrganizationRepository.js"
import { Transactor } from "../shared/Transactor.js"
import { UserRepository } from "../accounts/UserRepository.js"
import { type Email, type User, type UserId } from "../identity/User.js"
import { Accounts, type Credentials, type PasswordReset } from "../accounts/Accounts.js"
import { traced } from "../observability/Traced.js"

export const OrgBalance = Schema.Literal("subscription", "addon")

/** The account credits go to: a user's personal balance, or one balance of an org's pool. */
export const CreditTarget = Schema.Union(
  Schema.Struct({ user_id: Schema.String.pipe(Schema.maxLength(64)) }),
  Schema.Struct({ org_id: Schema.String.pipe(Schema.maxLength(64)), balance: OrgBalance })
)
export type CreditTarget = typeof CreditTarget.Type

export const CreditAccount = Schema.Struct({
  owner_type: Schema.Literal("user", "org"),
  owner_id: Schema.String,
  pool: Schema.Literal("personal", "subscription", "addon")
})

export class GrantResult extends Schema.Class<GrantResult>("CreditGrant")({
  account: CreditAccount,
  amount: Schema.Int,
  reason: Schema.String,
  /** The account's balance after the grant. */
  balance: Schema.Int
}) {}

export { LedgerEntry }

/** Where an operator's action came from, for the audit log. */
export type Channel = "api" | "cli"

export interface GrantInput {
  readonly target: CreditTarget
  readonly amount: number
  readonly reason: string
}

export interface Service {
  readonly grant: (input: GrantInput, via: Channel) => Effect.Effect<GrantResult, NotFound>
  readonly ledger: (target: CreditTarget, page: PageRequest) => Effect.Effect<Page<LedgerEntry> & { readonly balance: number }, NotFound>
  /** A user by id or email. */
  readonly findUser: (ref: string) => Effect.Effect<User, NotFound>
  readonly createUser: (credentials: Credentials) => Effect.Effect<User, Conflict>
  /** Revokes every key of the user (by id or email); returns how many. */
  readonly revokeKeys: (userRef: string, via: Channel) => Effect.Effect<number, NotFound>
  /** A one-time password-reset token for the user (by id or email), to hand over out of band. */
  readonly issuePasswordReset: (userRef: string, via: Channel) => Effect.Effect<PasswordReset, NotFound>
}

export class Operator extends Context.Tag("@huddle/domain/Operator")<Operator, Service>() {}

export const make = Effect.gen(function*() {
  const store = yield* CreditStore
  const users = yield* UserRepository
  const orgs = yield* OrganizationRepository
  const keys = yield* ApiKeyRepository
  const audit = yield* AuditLog
  const tx = yield* Transactor
  const accounts = yield* Accounts

  const findUser: Service["findUser"] = (ref) =>
    (ref.includes("@")
      ? Effect.map(users.findByEmail(ref.trim().toLowerCase() as Email), Option.map((found) => found.user))
      : users.findById(ref as UserId)).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new NotFound({ message: `User not found: ${ref}` })),
          onSome: Effect.succeed
        }))
      )

  /**
   * The account of an existing user or org (an account row itself is created by its first grant).
   * A user given by email is their account by id: the email only finds them.
   */
  const accountOf = (target: CreditTarget): Effect.Effect<CreditAccountRef & { readonly orgId: string | null }, NotFound> =>
    "user_id" in target
      ? Effect.map(findUser(target.user_id), (user) => ({ ownerType: "user", ownerId: user.id, pool: "personal", orgId: null } as const))
      : orgs.findById(target.org_id).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new NotFound({ message: `Organization not found: ${target.org_id}` })),
          onSome: () => Effect.succeed({ ownerType: "org", ownerId: target.org_id, pool: target.balance, orgId: target.org_id } as const)
        }))
      )

  const wire = (account: CreditAccountRef) => ({ owner_type: account.ownerType, owner_id: account.ownerId, pool: account.pool })

  const grant: Service["grant"] = ({ amount, reason, target }, via) =>
    Effect.gen(function*() {
      const account = yield* accountOf(target)
      const balance = yield* tx.atomically(
        store.grant({ account, amount, reason, actorId: null }).pipe(
          Effect.tap(() =>
            audit.record({
              orgId: account.orgId,
              eventType: "credits.granted",
              actorId: null,
              target: account.ownerId,
              details: { by: "operator", via, pool: account.pool, amount, reason }
            })
          )
        )
      )
      yield* Effect.logInfo("credits granted by the operator").pipe(
        Effect.annotateLogs({ owner: account.ownerId, pool: account.pool, amount, via })
      )
      return new GrantResult({ account: wire(account), amount, reason, balance })
    })

  const ledger: Service["ledger"] = (target, page) =>
    Effect.gen(function*() {
      const account = yield* accountOf(target)
      const rows = yield* store.ledger(account, page)
      const balance = yield* store.balance(account)
      return { ...fromRows(rows.map((row) => new LedgerEntry(row, { disableValidation: true })), page.limit), balance }
    })

  const revokeKeys: Service["revokeKeys"] = (userRef, via) =>
    Effect.gen(function*() {
      const user = yield* findUser(userRef)
      const revoked = yield* tx.atomically(Effect.gen(function*() {
        const done = yield* keys.revokeAll(user.id, yield* DateTime.now)
        yield* Effect.forEach(done, (key) =>
          audit.record({
            orgId: key.org_id,
            eventType: "api_key.revoked",
            actorId: null,
            target: key.id,
            details: { by: "operator", via, user_id: user.id, name: key.name, prefix: key.prefix }
          }))
        return done.length
      }))
      return revoked
    })

  const issuePasswordReset: Service["issuePasswordReset"] = (userRef, via) =>
    Effect.flatMap(findUser(userRef), (user) => accounts.issuePasswordReset(user, { by: "operator", via })).pipe(
      Effect.tap((reset) => Effect.logInfo("password reset issued by the operator").pipe(Effect.annotateLogs({ user: reset.user_id, via })))
    )

  return Operator.of(traced("Operator", { grant, ledger, findUser, createUser: accounts.signup, revokeKeys, issuePasswordReset }))
})

export const layer = Layer.effect(Operator, make)
