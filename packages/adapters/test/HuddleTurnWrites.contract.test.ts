/**
 * What a single-mode huddle turn costs the database, counted statement by statement (through
 * `@effect/sql`'s statement transformer, so on both engines alike): the writes of a turn are
 * few and batched, and what it writes is what the session shows afterwards.
 */
import { SqlClient, Statement } from "@effect/sql"
import { Engine, LeasedCreditStore } from "@huddle/adapters"
import { Accounts } from "@huddle/domain/accounts/Accounts"
import { Authentication } from "@huddle/domain/accounts/Authentication"
import { EmailInput } from "@huddle/domain/identity/User"
import { Huddles, replyOf } from "@huddle/domain/huddle/Huddles"
import { IntentRepository } from "@huddle/domain/huddle/IntentRepository"
import { answerIn } from "@huddle/domain/huddle/IntentRecords"
import { Ids } from "@huddle/domain/shared/Ids"
import { RequestScopes } from "@huddle/domain/request/RequestScope"
import { TestDatabase } from "@huddle/testkit"
import { Context, Deferred, Effect, Fiber, FiberRef, FiberRefs, Layer, Option, Redacted, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

interface Executed {
  readonly sql: string
  readonly write: boolean
  /** The transaction's connection, when it ran in one. */
  readonly transaction: unknown
}

const isWrite = (sql: string) => /^\s*(INSERT|UPDATE|DELETE)\b/i.test(sql) || /^\s*WITH\b[\s\S]*\b(INSERT\s+INTO|UPDATE\s+\w+\s+(\w+\s+)?SET|DELETE\s+FROM)\b/i.test(sql)

/** Runs `effect`, recording every statement it (and whatever it forks) executes. */
const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const executed: Array<Executed> = []
    const result = yield* Statement.withTransformer(effect, (statement, _sql, refs) =>
      Effect.sync(() => {
        const [sql] = statement.compile()
        const context = FiberRefs.getOrDefault(refs, FiberRef.currentContext)
        const transaction = Option.getOrUndefined(Context.getOption(context, SqlClient.TransactionConnection))?.[0]
        executed.push({ sql, write: isWrite(sql), transaction })
        return statement
      }))
    return { result, executed }
  })

const summary = (executed: ReadonlyArray<Executed>) => {
  const writes = executed.filter((statement) => statement.write)
  return {
    statements: executed.length,
    writes: writes.length,
    transactions: new Set(writes.flatMap((statement) => statement.transaction === undefined ? [] : [statement.transaction])).size,
    writesOutsideTransactions: writes.filter((statement) => statement.transaction === undefined).length
  }
}

const maxWrites = 4
/**
 * A turn's statements: its writes and its reads — a first turn's two (the workspace, the
 * memories), a next turn's one (the session with its recent messages; its context is cached).
 */
const maxStatements = { first: 6, next: 5 }

/** A new account's principal, signed in with a web session. */
const signedUp = (address: string) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const email = Schema.decodeSync(EmailInput)(address)
    const password = Redacted.make("correct horse battery")
    yield* accounts.signup({ email, password })
    const { token } = yield* accounts.login({ email, password })
    return yield* (yield* Authentication).authenticate(token)
  })

describe.each(TestDatabase.availableEngines())("a single-mode huddle turn's writes (%s)", (engine) => {
  let database: TestDatabase.FreshDatabase
  beforeAll(async () => {
    database = await TestDatabase.fresh(engine)
  }, 60_000)
  afterAll(() => database.drop())

  it("writes no more than four statements a turn, and the session shows every turn", async () => {
    const program = Effect.gen(function*() {
      const principal = yield* signedUp("turns@example.com")
      const scope = yield* (yield* RequestScopes).resolve(principal, {})
      const huddles = yield* Huddles

      const first = yield* counted(replyOf(huddles.start(scope, { input: "What is a huddle?" })))
      const second = yield* counted(replyOf(huddles.reply(principal, first.result.session_id, { input: "And a council?" })))
      const session = yield* huddles.get(principal, first.result.session_id)
      return { first, second, session }
    })
    // Credits written directly (no leases): with leases a turn's reserve and settle are written in
    // the instance's batch for many requests (decision 0021), so they are not a turn's own.
    const direct = Layer.succeed(LeasedCreditStore.CreditLeases, { ...LeasedCreditStore.defaults, enabled: false })
    const { first, second, session } = await Effect.runPromise(
      Effect.provide(program, Engine.layer({ storage: database.engine }).pipe(Layer.provide(direct)))
    )

    // Before: 9 writes for a turn that starts a session, 8 for a turn that continues one (each
    // message and the session's updated_at were two statements; a new session one more).
    // Then 6: the credits' reserve and settle, the question (with the session, or its
    // updated_at), the intent as it starts and as it ends, the answer with the session's updated_at.
    // Now 4: the reserve and settle, the intent as it starts with the question (and the session),
    // the intent as it ends with the answer (and the session's updated_at).
    for (const [turn, most] of [[first, maxStatements.first], [second, maxStatements.next]] as const) {
      const counts = summary(turn.executed)
      const statements = turn.executed.map((statement) => statement.sql.slice(0, 60)).join("\n")
      expect(counts.writes, statements).toBeLessThanOrEqual(maxWrites)
      expect(counts.statements, statements).toBeLessThanOrEqual(most)
    }
    expect(session.messages.map((message) => [message.role, message.intent_id])).toEqual([
      ["user", null],
      ["assistant", first.result.intent_id],
      ["user", null],
      ["assistant", second.result.intent_id]
    ])
    expect(session.messages.map((message) => message.content)).toEqual(["What is a huddle?", first.result.output, "And a council?", second.result.output])
    // What a session shows as updated: its last message's time.
    expect(session.updated_at).toEqual(session.messages.at(-1)!.created_at)
    expect(session.messages[1]!.credits_charged).toBe(first.result.credits_charged)
  }, 60_000)

  // Two connections at once: PostgreSQL only (PGlite has one).
  it.skipIf(engine !== "postgres")("writes no answer, and fails nothing, when the session is being deleted as the turn ends", async () => {
    const program = Effect.gen(function*() {
      const principal = yield* signedUp("deleted-mid-turn@example.com")
      const huddles = yield* Huddles
      const turn = yield* replyOf(huddles.start(yield* (yield* RequestScopes).resolve(principal, {}), { input: "Soon gone" }))
      const intents = yield* IntentRepository
      const { intent } = Option.getOrThrow(yield* intents.find(turn.intent_id))
      const answer = yield* answerIn(yield* Ids)(intent)

      // The owner's delete holds the session's row, not yet committed, as the turn's last statement starts.
      const sql = yield* SqlClient.SqlClient
      const deleting = yield* Deferred.make<void>()
      const deleter = yield* sql.withTransaction(
        sql`DELETE FROM huddle_sessions WHERE id = ${turn.session_id}`.pipe(
          Effect.zipRight(Deferred.succeed(deleting, undefined)),
          Effect.zipRight(Effect.sleep("300 millis"))
        )
      ).pipe(Effect.fork)
      yield* Deferred.await(deleting)
      const written = yield* intents.update(intent, undefined, answer)
      yield* Fiber.join(deleter)
      const messages = yield* sql<{ n: string }>`SELECT count(*) AS n FROM huddle_messages WHERE session_id = ${turn.session_id}`
      return { written, messages: Number(messages[0]!.n) }
    })
    const result = await Effect.runPromise(Effect.provide(program, Engine.layer({ storage: database.engine })).pipe(Effect.orDie))
    expect(result).toEqual({ written: false, messages: 0 })
  }, 60_000)
})
