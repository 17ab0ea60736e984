/**
 * A login does the same work whether its email has an account or not (decision 0040): an unknown
 * email is verified once against a decoy hash of the same parameters, and the audit of a failed
 * login of a real account is written after the answer, not before it. Checked on the code path
 * (a counting hasher, a membership lookup held back), not by timing.
 */
import * as Engine from "@huddle/adapters/Engine"
import * as ScryptPasswordHasher from "@huddle/adapters/crypto/ScryptPasswordHasher"
import * as AccountsService from "@huddle/domain/accounts/Accounts"
import { Accounts } from "@huddle/domain/accounts/Accounts"
import { AccountSettings } from "@huddle/domain/accounts/AccountSettings"
import { PasswordHasher } from "@huddle/domain/accounts/PasswordHasher"
import { EmailInput } from "@huddle/domain/identity/User"
import { MembershipRepository } from "@huddle/domain/orgs/MembershipRepository"
import { TestDatabase } from "@huddle/testkit"
import { Deferred, Effect, Either, Layer, Redacted, Schema } from "effect"
import { expect, it } from "vitest"

it("verifies an unknown email once against a decoy of the same parameters, and answers a failed login before auditing it", async () => {
  const database = await TestDatabase.fresh("pglite")
  const verified: Array<string> = []
  const hasher = Layer.succeed(PasswordHasher, {
    hash: ScryptPasswordHasher.make.hash,
    verify: (password, stored) => Effect.suspend(() => {
      verified.push(stored)
      return ScryptPasswordHasher.make.verify(password, stored)
    })
  })
  // While held, the membership lookup that the failed-login audit starts with waits.
  const held = Effect.runSync(Deferred.make<void>())
  let hold = false
  const memberships = Layer.effect(
    MembershipRepository,
    Effect.map(MembershipRepository, (real) => ({
      ...real,
      listForUser: (userId: string) => hold ? Effect.zipRight(Deferred.await(held), real.listForUser(userId)) : real.listForUser(userId)
    }))
  )
  const engine = Engine.layer({ storage: database.engine })
  // A layer of its own: `Accounts.layer` itself is the engine's, already built with the engine's hasher.
  const layer = Layer.effect(Accounts, AccountsService.make).pipe(
    Layer.provide(Layer.merge(engine, Layer.merge(hasher, memberships).pipe(Layer.provide(engine)))),
    Layer.provide(Layer.succeed(AccountSettings, AccountSettings.defaults))
  )

  const program = Effect.gen(function*() {
    const accounts = yield* Accounts
    const email = Schema.decodeSync(EmailInput)("known@example.com")
    yield* accounts.signup({ email, password: Redacted.make("the right password") })

    verified.length = 0
    yield* Effect.either(accounts.login({ email, password: Redacted.make("the right password") }))
    const [real] = verified

    verified.length = 0
    const unknown = yield* Effect.either(accounts.login({ email: Schema.decodeSync(EmailInput)("nobody@example.com"), password: Redacted.make("a guess") }))
    expect(Either.isLeft(unknown) && unknown.left._tag).toBe("Unauthorized")
    expect(verified).toHaveLength(1)
    // scrypt$N$r$p: the decoy costs what a real hash costs.
    expect(verified[0]!.split("$").slice(0, 4)).toEqual(real!.split("$").slice(0, 4))
    expect(verified[0]).not.toBe(real)

    verified.length = 0
    hold = true
    const known = yield* Effect.either(accounts.login({ email, password: Redacted.make("a guess") })).pipe(
      Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("the failed login waited for its audit") })
    )
    expect(Either.isLeft(known) && known.left._tag).toBe("Unauthorized")
    expect(verified).toEqual([real])
    yield* Deferred.succeed(held, undefined)
  })

  await Effect.runPromise(Effect.provide(program, layer).pipe(Effect.scoped))
}, 60_000)
