/**
 * The storage contract: the same cases on every engine of `TestDatabase.availableEngines()`
 * (PGlite always; PostgreSQL when `TEST_DATABASE_URL` is set). Each engine gets one fresh,
 * migrated database shared by its cases, so every case makes its own users, owners and orgs.
 */
import { randomBytes } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { type ChangeFeed, Migrations, PgliteChangeFeed, PgliteClient, Storage, UlidIds } from "@huddle/adapters"
import { ApiKey } from "@huddle/domain/identity/ApiKey"
import { Conflict } from "@huddle/domain/shared/Errors"
import { Ids } from "@huddle/domain/shared/Ids"
import { OrgMembership } from "@huddle/domain/orgs/Membership"
import * as Page from "@huddle/domain/shared/Page"
import { Preferences } from "@huddle/domain/settings/Preferences"
import { ApiKeyRepository } from "@huddle/domain/identity/ApiKeyRepository"
import { type CreditAccountRef, CreditStore } from "@huddle/domain/credits/CreditStore"
import { MembershipRepository } from "@huddle/domain/orgs/MembershipRepository"
import { PreferenceRepository } from "@huddle/domain/settings/PreferenceRepository"
import { UserRepository } from "@huddle/domain/accounts/UserRepository"
import { WebSessionRepository } from "@huddle/domain/accounts/WebSessionRepository"
import { Email, User, UserId } from "@huddle/domain/identity/User"
import { TestDatabase } from "@huddle/testkit"
import { addEqualityTesters, describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Layer, Option, Schema } from "effect"

addEqualityTesters()

const storageOver = <E>(database: Layer.Layer<SqlClient.SqlClient | ChangeFeed.ChangeFeed, E>) =>
  Storage.layer.pipe(Layer.provideMerge(UlidIds.layer), Layer.provideMerge(database))

const unique = (label: string) => `${label}-${randomBytes(5).toString("hex")}`

/** A time with whole milliseconds, as timestamptz round-trips it. */
const at = (iso: string) => DateTime.unsafeMake(iso)

const sqlState = (error: SqlError): unknown => {
  const cause = error.cause
  return typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined
}

const newUser = (label = "user") =>
  Effect.gen(function*() {
    const ids = yield* Ids
    return new User({
      id: UserId.make(yield* ids.next("usr")),
      email: Email.make(`${unique(label)}@example.com`),
      created_at: at("2025-03-01T10:00:00.123Z")
    })
  })

const createdUser = (label = "user") =>
  Effect.gen(function*() {
    const user = yield* newUser(label)
    yield* (yield* UserRepository).create(user, `hash-of-${user.id}`)
    return user
  })

const newApiKey = (userId: string, name: string, createdAt: DateTime.Utc) =>
  Effect.gen(function*() {
    const id = yield* (yield* Ids).next("key")
    const prefix = `hk_${randomBytes(6).toString("hex")}`
    const key = new ApiKey({ id, name, prefix, last_four: "abcd", org_id: null, created_at: createdAt, last_used_at: null })
    yield* (yield* ApiKeyRepository).create({ key, userId, tokenHash: `hash-of-${prefix}` })
    return key
  })

for (const engine of TestDatabase.availableEngines()) {
  layer(storageOver(TestDatabase.layer(engine)), { excludeTestServices: true })(`storage contract on ${engine}`, (it) => {
    describe("migrations", () => {
      it.effect("running them again on a migrated database applies nothing", () =>
        Effect.gen(function*() {
          expect(yield* Migrations.run).toEqual([])
          const sql = yield* SqlClient.SqlClient
          const tables = yield* sql<{ name: string }>`
            SELECT table_name AS name FROM information_schema.tables
            WHERE table_schema = 'public' AND table_name IN ('users', 'api_keys', 'credit_ledger')
            ORDER BY table_name`
          expect(tables.map((t) => t.name)).toEqual(["api_keys", "credit_ledger", "users"])
        }))
    })

    describe("UserRepository", () => {
      it.effect("creates a user and finds it by email and by id", () =>
        Effect.gen(function*() {
          const users = yield* UserRepository
          const user = yield* newUser()
          yield* users.create(user, "stored-password-hash")

          const byEmail = yield* users.findByEmail(user.email)
          expect(byEmail).toEqual(Option.some({ user, passwordHash: "stored-password-hash" }))
          expect(yield* users.findById(user.id)).toEqual(Option.some(user))
          expect(Option.map(yield* users.findById(user.id), (found) => DateTime.toEpochMillis(found.created_at)))
            .toEqual(Option.some(DateTime.toEpochMillis(user.created_at)))
        }))

      it.effect("finds nothing for an unknown email or id", () =>
        Effect.gen(function*() {
          const users = yield* UserRepository
          expect(yield* users.findByEmail(Email.make(`${unique("nobody")}@example.com`))).toEqual(Option.none())
          expect(yield* users.findById(UserId.make("usr_unknown"))).toEqual(Option.none())
        }))

      it.effect("refuses a second user with the same email with Conflict, and keeps the first", () =>
        Effect.gen(function*() {
          const users = yield* UserRepository
          const first = yield* createdUser()
          const second = new User({ ...first, id: UserId.make(yield* (yield* Ids).next("usr")) })

          const error = yield* Effect.flip(users.create(second, "another-hash"))
          expect(error).toBeInstanceOf(Conflict)
          expect(error._tag).toBe("Conflict")
          expect(yield* users.findById(second.id)).toEqual(Option.none())
          expect(Option.map(yield* users.findByEmail(first.email), (found) => found.user.id)).toEqual(Option.some(first.id))
        }))
    })

    describe("WebSessionRepository", () => {
      const createdAt = at("2025-03-01T12:00:00.000Z")
      const expiresAt = at("2025-03-02T12:00:00.000Z")

      const newSession = Effect.gen(function*() {
        const user = yield* createdUser("session")
        const session = {
          id: yield* (yield* Ids).next("ses"),
          userId: user.id,
          prefix: `hs_${randomBytes(6).toString("hex")}`,
          tokenHash: randomBytes(32).toString("hex"),
          createdAt,
          expiresAt
        }
        yield* (yield* WebSessionRepository).create(session)
        return { user, session }
      })

      it.effect("finds an active session with its user", () =>
        Effect.gen(function*() {
          const sessions = yield* WebSessionRepository
          const { session, user } = yield* newSession
          const found = yield* sessions.findActive(session.prefix, at("2025-03-01T13:00:00.000Z"))
          expect(found).toEqual(Option.some({ id: session.id, tokenHash: session.tokenHash, user }))
        }))

      it.effect("does not find a revoked session", () =>
        Effect.gen(function*() {
          const sessions = yield* WebSessionRepository
          const { session } = yield* newSession
          const now = at("2025-03-01T13:00:00.000Z")
          expect(Option.isSome(yield* sessions.findActive(session.prefix, now))).toBe(true)
          yield* sessions.revoke(session.id, now)
          expect(yield* sessions.findActive(session.prefix, now)).toEqual(Option.none())
          expect(yield* sessions.findActive(session.prefix, at("2025-03-01T12:30:00.000Z"))).toEqual(Option.none())
        }))

      it.effect("does not find a session that has expired by `now`", () =>
        Effect.gen(function*() {
          const sessions = yield* WebSessionRepository
          const { session } = yield* newSession
          expect(Option.isSome(yield* sessions.findActive(session.prefix, DateTime.subtract(expiresAt, { millis: 1 }))))
            .toBe(true)
          expect(yield* sessions.findActive(session.prefix, expiresAt)).toEqual(Option.none())
          expect(yield* sessions.findActive(session.prefix, DateTime.add(expiresAt, { seconds: 1 }))).toEqual(Option.none())
        }))

      it.effect("finds nothing for an unknown prefix", () =>
        Effect.gen(function*() {
          const sessions = yield* WebSessionRepository
          yield* newSession
          expect(yield* sessions.findActive(`hs_${randomBytes(6).toString("hex")}`, createdAt)).toEqual(Option.none())
        }))
    })

    describe("ApiKeyRepository", () => {
      const createdAt = at("2025-04-01T09:00:00.000Z")

      it.effect("lists a user's keys newest first, page by page with the last id as cursor", () =>
        Effect.gen(function*() {
          const keys = yield* ApiKeyRepository
          const user = yield* createdUser("keys")
          const other = yield* createdUser("other")
          yield* newApiKey(other.id, "someone else's", createdAt)
          const created: Array<ApiKey> = []
          for (const n of [1, 2, 3, 4, 5]) created.push(yield* newApiKey(user.id, `key ${n}`, createdAt))
          const newestFirst = created.map((key) => key.id).reverse()

          const firstRows = yield* keys.listForUser(user.id, { limit: 2 })
          expect(firstRows.map((key) => key.id)).toEqual(newestFirst.slice(0, 3))
          const first = Page.fromRows(firstRows, 2)
          expect(first.data.map((key) => key.id)).toEqual(newestFirst.slice(0, 2))
          expect(first.next_cursor).toBe(newestFirst[1])

          const second = Page.fromRows(yield* keys.listForUser(user.id, { limit: 2, cursor: first.next_cursor! }), 2)
          expect(second.data.map((key) => key.id)).toEqual(newestFirst.slice(2, 4))
          expect(second.next_cursor).toBe(newestFirst[3])

          const third = Page.fromRows(yield* keys.listForUser(user.id, { limit: 2, cursor: second.next_cursor! }), 2)
          expect(third.data.map((key) => key.id)).toEqual(newestFirst.slice(4))
          expect(third.next_cursor).toBeNull()

          expect(third.data[0]).toEqual(created[0])
          expect((yield* keys.listForUser(user.id, { limit: 10 })).map((key) => key.id)).toEqual(newestFirst)
        }))

      it.effect("finds an active key by prefix with its user", () =>
        Effect.gen(function*() {
          const keys = yield* ApiKeyRepository
          const user = yield* createdUser("keys")
          const key = yield* newApiKey(user.id, "ci", createdAt)
          expect(yield* keys.findActive(key.prefix)).toEqual(
            Option.some({ id: key.id, orgId: null, tokenHash: `hash-of-${key.prefix}`, user })
          )
          expect(yield* keys.findActive(`hk_${randomBytes(6).toString("hex")}`)).toEqual(Option.none())
        }))

      it.effect("revokes once: revoked keys are neither listed nor found", () =>
        Effect.gen(function*() {
          const keys = yield* ApiKeyRepository
          const user = yield* createdUser("keys")
          const kept = yield* newApiKey(user.id, "kept", createdAt)
          const revoked = yield* newApiKey(user.id, "revoked", createdAt)
          const now = at("2025-04-02T09:00:00.000Z")

          expect(yield* keys.revoke(user.id, revoked.id, now)).toEqual(Option.some(revoked))
          expect(yield* keys.revoke(user.id, revoked.id, now)).toEqual(Option.none())
          expect((yield* keys.listForUser(user.id, { limit: 10 })).map((key) => key.id)).toEqual([kept.id])
          expect(yield* keys.findActive(revoked.prefix)).toEqual(Option.none())
          expect(Option.isSome(yield* keys.findActive(kept.prefix))).toBe(true)
        }))

      it.effect("does not revoke another user's key", () =>
        Effect.gen(function*() {
          const keys = yield* ApiKeyRepository
          const owner = yield* createdUser("owner")
          const intruder = yield* createdUser("intruder")
          const key = yield* newApiKey(owner.id, "mine", createdAt)

          expect(yield* keys.revoke(intruder.id, key.id, at("2025-04-02T09:00:00.000Z"))).toEqual(Option.none())
          expect((yield* keys.listForUser(owner.id, { limit: 10 })).map((k) => k.id)).toEqual([key.id])
          expect(Option.isSome(yield* keys.findActive(key.prefix))).toBe(true)
        }))

      it.effect("touch records last use, at most once a minute", () =>
        Effect.gen(function*() {
          const keys = yield* ApiKeyRepository
          const user = yield* createdUser("keys")
          const key = yield* newApiKey(user.id, "busy", createdAt)
          const lastUsed = Effect.map(keys.listForUser(user.id, { limit: 1 }), ([row]) => {
            expect(row?.id).toBe(key.id)
            return row?.last_used_at ? DateTime.formatIso(row.last_used_at) : null
          })
          expect(yield* lastUsed).toBeNull()

          const firstUse = at("2025-04-01T10:00:00.000Z")
          yield* keys.touch(key.id, firstUse)
          expect(yield* lastUsed).toBe(DateTime.formatIso(firstUse))

          yield* keys.touch(key.id, DateTime.add(firstUse, { seconds: 30 }))
          expect(yield* lastUsed).toBe(DateTime.formatIso(firstUse))
          yield* keys.touch(key.id, DateTime.add(firstUse, { seconds: 59 }))
          expect(yield* lastUsed).toBe(DateTime.formatIso(firstUse))

          const later = DateTime.add(firstUse, { seconds: 61 })
          yield* keys.touch(key.id, later)
          expect(yield* lastUsed).toBe(DateTime.formatIso(later))
        }))
    })

    describe("CreditStore", () => {
      const account = (): CreditAccountRef => ({ ownerType: "user", ownerId: unique("owner"), pool: "personal" })

      it.effect("grant creates the account and returns the new balance; grants add up", () =>
        Effect.gen(function*() {
          const credits = yield* CreditStore
          const ref = account()
          expect(yield* credits.grant({ account: ref, amount: 100, reason: "starter", actorId: null })).toBe(100)
          expect(yield* credits.grant({ account: ref, amount: 25, reason: "top-up", actorId: "usr_admin" })).toBe(125)
          expect(yield* credits.balance(ref)).toBe(125)
          expect(yield* credits.ledgerTotal(ref)).toBe(125)
        }))

      it.effect("keeps accounts apart by owner type, owner and pool", () =>
        Effect.gen(function*() {
          const credits = yield* CreditStore
          const ref = account()
          const subscription: CreditAccountRef = { ...ref, pool: "subscription" }
          const asOrg: CreditAccountRef = { ...ref, ownerType: "org" }
          yield* credits.grant({ account: ref, amount: 7, reason: "personal", actorId: null })
          yield* credits.grant({ account: subscription, amount: 11, reason: "subscription", actorId: null })
          expect(yield* credits.balance(ref)).toBe(7)
          expect(yield* credits.balance(subscription)).toBe(11)
          expect(yield* credits.ledgerTotal(subscription)).toBe(11)
          expect(yield* credits.balance(asOrg)).toBe(0)
        }))

      it.effect("an unknown account has balance 0 and ledger total 0", () =>
        Effect.gen(function*() {
          const credits = yield* CreditStore
          const ref = account()
          expect(yield* credits.balance(ref)).toBe(0)
          expect(yield* credits.ledgerTotal(ref)).toBe(0)
        }))

      it.effect("20 concurrent grants on one account sum exactly", () =>
        Effect.gen(function*() {
          const credits = yield* CreditStore
          const ref = account()
          const amounts = Array.from({ length: 20 }, (_, i) => i + 1)
          const balances = yield* Effect.all(
            amounts.map((amount) => credits.grant({ account: ref, amount, reason: "concurrent", actorId: null })),
            { concurrency: "unbounded" }
          )
          const total = amounts.reduce((sum, amount) => sum + amount, 0)
          // Each grant saw the balance its predecessors left: 20 distinct running totals, the last the sum.
          expect(new Set(balances).size).toBe(20)
          expect(Math.max(...balances)).toBe(total)
          expect(yield* credits.balance(ref)).toBe(total)
          expect(yield* credits.ledgerTotal(ref)).toBe(total)

          const sql = yield* SqlClient.SqlClient
          const [ledger] = yield* sql<{ rows: number }>`
            SELECT COUNT(*)::bigint AS rows FROM credit_ledger l JOIN credit_accounts a ON a.id = l.account_id
            WHERE a.owner_type = ${ref.ownerType} AND a.owner_id = ${ref.ownerId} AND a.pool = ${ref.pool}`
          expect(ledger?.rows).toBe(20)
        }), 60_000)

      it.effect("reserve takes credits only when the balance covers them; settle and release return the rest once", () =>
        Effect.gen(function*() {
          const credits = yield* CreditStore
          const ref = account()
          const reservation = (amount: number) => ({ accounts: [ref], amount, userId: ref.ownerId, orgId: null, purpose: "test" })
          const reserved = (amount: number) =>
            Effect.map(credits.reserve(reservation(amount)), (held) => held._tag === "Held" ? held.id : expect.fail(`not held: ${held._tag}`))
          expect(yield* credits.reserve(reservation(10))).toEqual({ _tag: "Insufficient", cap: null })
          yield* credits.grant({ account: ref, amount: 100, reason: "starter", actorId: null })

          expect(yield* credits.reserve(reservation(101))).toEqual({ _tag: "Insufficient", cap: null })
          expect(yield* credits.balance(ref)).toBe(100)

          const settled = yield* reserved(30)
          expect(yield* credits.balance(ref)).toBe(70)
          expect(yield* credits.settle(settled, 12)).toEqual(Option.some({ charged: 12 }))
          expect(yield* credits.balance(ref)).toBe(88)
          expect(yield* credits.settle(settled, 12)).toEqual(Option.none())
          expect(yield* credits.release(settled)).toBe(false)

          const released = yield* reserved(50)
          expect(yield* credits.balance(ref)).toBe(38)
          expect(yield* credits.release(released)).toBe(true)
          expect(yield* credits.release(released)).toBe(false)
          expect(yield* credits.settle(released, 1)).toEqual(Option.none())

          const overrun = yield* reserved(10)
          expect(yield* credits.settle(overrun, 25)).toEqual(Option.some({ charged: 10 }))

          const whole = yield* reserved(78)
          expect(yield* credits.balance(ref)).toBe(0)
          expect(yield* credits.settle(whole, 78)).toEqual(Option.some({ charged: 78 }))
          expect(yield* credits.balance(ref)).toBe(0)
          expect(yield* credits.ledgerTotal(ref)).toBe(0)
        }))

      it.effect("concurrent reservations never overdraw, and the ledger still adds up", () =>
        Effect.gen(function*() {
          const credits = yield* CreditStore
          const ref = account()
          yield* credits.grant({ account: ref, amount: 100, reason: "starter", actorId: null })
          const held = yield* Effect.all(
            Array.from({ length: 30 }, () => credits.reserve({ accounts: [ref], amount: 7, userId: ref.ownerId, orgId: null, purpose: "race" })),
            { concurrency: "unbounded" }
          )
          const granted = held.flatMap((reservation) => reservation._tag === "Held" ? [reservation.id] : [])
          expect(granted.length).toBe(14)
          expect(yield* credits.balance(ref)).toBe(2)
          expect(yield* credits.ledgerTotal(ref)).toBe(2)

          const released = yield* Effect.all(granted.map((id) => credits.release(id)), { concurrency: "unbounded" })
          expect(released.every((ok) => ok)).toBe(true)
          expect(yield* credits.balance(ref)).toBe(100)
          expect(yield* credits.ledgerTotal(ref)).toBe(100)
        }), 60_000)

      it.effect("the database refuses a negative balance", () =>
        Effect.gen(function*() {
          const credits = yield* CreditStore
          const sql = yield* SqlClient.SqlClient
          const ref = account()
          yield* credits.grant({ account: ref, amount: 5, reason: "starter", actorId: null })

          const error = yield* Effect.flip(sql`UPDATE credit_accounts SET balance = -1 WHERE owner_id = ${ref.ownerId}`)
          expect(error._tag).toBe("SqlError")
          expect(sqlState(error)).toBe("23514") // check_violation
          expect(yield* credits.balance(ref)).toBe(5)
        }))

      it.effect("the database refuses to rewrite a ledger row", () =>
        Effect.gen(function*() {
          const credits = yield* CreditStore
          const sql = yield* SqlClient.SqlClient
          const ref = account()
          yield* credits.grant({ account: ref, amount: 5, reason: "starter", actorId: null })

          const error = yield* Effect.flip(sql`
            UPDATE credit_ledger SET delta = 500
            WHERE account_id IN (SELECT id FROM credit_accounts WHERE owner_id = ${ref.ownerId})`)
          expect(error._tag).toBe("SqlError")
          expect(sqlState(error)).toBe("P0001") // raise_exception, from the append-only trigger
          expect(String(error.cause)).toContain("append-only")
          expect(yield* credits.ledgerTotal(ref)).toBe(5)
        }))

      it.effect("the database refuses to delete ledger rows or accounts outside an org deletion", () =>
        Effect.gen(function*() {
          const credits = yield* CreditStore
          const sql = yield* SqlClient.SqlClient
          const ref = account()
          yield* credits.grant({ account: ref, amount: 9, reason: "starter", actorId: null })
          const ledger = yield* Effect.flip(sql`
            DELETE FROM credit_ledger
            WHERE account_id IN (SELECT id FROM credit_accounts WHERE owner_id = ${ref.ownerId})`)
          expect(sqlState(ledger)).toBe("P0001")
          const accountRow = yield* Effect.flip(sql`DELETE FROM credit_accounts WHERE owner_id = ${ref.ownerId}`)
          expect(sqlState(accountRow)).toBe("P0001")
          expect(yield* credits.balance(ref)).toBe(9)
          expect(yield* credits.ledgerTotal(ref)).toBe(9)
        }))
    })

    describe("MembershipRepository", () => {
      const insertOrg = (name: string, createdBy: string) =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const id = yield* (yield* Ids).next("org")
          const slug = unique(name.toLowerCase())
          yield* sql`INSERT INTO organizations (id, name, slug, created_by, created_at)
                     VALUES (${id}, ${name}, ${slug}, ${createdBy}, ${new Date("2025-05-01T00:00:00Z")})`
          return { id, name, slug }
        })

      it.effect("lists the active memberships, oldest first, with their roles; pending ones are not listed", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const memberships = yield* MembershipRepository
          const user = yield* createdUser("member")
          const stranger = yield* createdUser("stranger")
          const later = yield* insertOrg("Later", user.id)
          const earlier = yield* insertOrg("Earlier", stranger.id)
          const invited = yield* insertOrg("Invited", stranger.id)
          const created = new Date("2025-05-01T00:00:00Z")

          yield* sql`INSERT INTO memberships (org_id, email, user_id, role, status, invited_by, created_at, joined_at) VALUES
            (${later.id}, ${user.email}, ${user.id}, 'admin', 'active', NULL, ${created}, ${new Date("2025-05-03T00:00:00Z")}),
            (${earlier.id}, ${user.email}, ${user.id}, 'member', 'active', ${stranger.id}, ${created}, ${new Date("2025-05-02T00:00:00Z")}),
            (${earlier.id}, ${stranger.email}, ${stranger.id}, 'admin', 'active', NULL, ${created}, ${created}),
            (${invited.id}, ${user.email}, NULL, 'admin', 'pending', ${stranger.id}, ${created}, NULL)`

          expect(yield* memberships.listForUser(user.id)).toEqual([
            new OrgMembership({ ...earlier, role: "member" }),
            new OrgMembership({ ...later, role: "admin" })
          ])
          expect(yield* memberships.roleOf(user.id, later.id)).toEqual(Option.some("admin"))
          expect(yield* memberships.roleOf(user.id, earlier.id)).toEqual(Option.some("member"))
          expect(yield* memberships.roleOf(user.id, invited.id)).toEqual(Option.none())
          expect(yield* memberships.roleOf(stranger.id, later.id)).toEqual(Option.none())
          expect(yield* memberships.roleOf(stranger.id, earlier.id)).toEqual(Option.some("admin"))
        }))

      it.effect("a user without memberships has none", () =>
        Effect.gen(function*() {
          const memberships = yield* MembershipRepository
          const loner = yield* createdUser("loner")
          expect(yield* memberships.listForUser(loner.id)).toEqual([])
          expect(yield* memberships.roleOf(loner.id, "org_unknown")).toEqual(Option.none())
        }))
    })

    describe("PreferenceRepository", () => {
      const encode = Schema.encodeSync(Preferences)

      it.effect("a new user has empty preferences", () =>
        Effect.gen(function*() {
          const user = yield* createdUser("prefs")
          const preferences = yield* (yield* PreferenceRepository).get(user.id)
          expect(preferences).toBeInstanceOf(Preferences)
          expect(encode(preferences)).toStrictEqual({})
        }))

      it.effect("put then get round-trips, and put replaces the whole set", () =>
        Effect.gen(function*() {
          const repository = yield* PreferenceRepository
          const user = yield* createdUser("prefs")
          const other = yield* createdUser("prefs")
          const everything = new Preferences({ model_tier: "premium", risk_tolerance: "low", auto_execute: false, mode: "multi" })
          yield* repository.put(user.id, everything)
          expect(yield* repository.get(user.id)).toEqual(everything)
          expect(encode(yield* repository.get(user.id)))
            .toStrictEqual({ model_tier: "premium", risk_tolerance: "low", auto_execute: false, mode: "multi" })

          yield* repository.put(user.id, new Preferences({ model_tier: "economy" }))
          expect(encode(yield* repository.get(user.id))).toStrictEqual({ model_tier: "economy" })
          expect(encode(yield* repository.get(other.id))).toStrictEqual({})
        }))
    })

    if (engine === "pglite") {
      describe("persistence", () => {
        it.scoped("a PGlite data directory keeps its data across a close and a reopen", () =>
          Effect.gen(function*() {
            const dataDir = yield* Effect.acquireRelease(
              Effect.promise(() => mkdtemp(join(tmpdir(), "huddle-persist-"))),
              (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
            )
            const onDisk = storageOver(PgliteChangeFeed.layer.pipe(Layer.provideMerge(PgliteClient.layer({ dataDir }))))
            const user = yield* newUser("persisted").pipe(Effect.provide(UlidIds.layer))

            yield* Effect.gen(function*() {
              expect((yield* Migrations.run).length).toBeGreaterThan(0)
              yield* (yield* UserRepository).create(user, "persisted-hash")
            }).pipe(Effect.provide(onDisk))

            const reopened = yield* Effect.gen(function*() {
              const applied = yield* Migrations.run
              const found = yield* (yield* UserRepository).findByEmail(user.email)
              return { applied, found }
            }).pipe(Effect.provide(onDisk))
            expect(reopened.applied).toEqual([])
            expect(reopened.found).toEqual(Option.some({ user, passwordHash: "persisted-hash" }))
          }), 60_000)
      })
    }
  })
}
