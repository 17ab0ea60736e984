/**
 * A huddle session's read (`HuddleRepository.findSession`, one statement) on every engine of
 * `TestDatabase.availableEngines()`: the session with its last messages, oldest first, decoded as
 * they were written; nothing for another user's session; a session without messages has none.
 */
import { randomBytes } from "node:crypto"
import { Storage, UlidIds } from "@huddle/adapters"
import { Ids } from "@huddle/domain/shared/Ids"
import { HuddleMessage, HuddleSession } from "@huddle/domain/huddle/Huddle"
import { HuddleRepository } from "@huddle/domain/huddle/HuddleRepository"
import { UserRepository } from "@huddle/domain/accounts/UserRepository"
import { Email, User, UserId } from "@huddle/domain/identity/User"
import { TestDatabase } from "@huddle/testkit"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import { addingMessage } from "../src/repositories/HuddleWrites.js"

addEqualityTesters()

const at = (iso: string) => DateTime.unsafeMake(iso)

const createdUser = Effect.gen(function*() {
  const user = new User({
    id: UserId.make(yield* (yield* Ids).next("usr")),
    email: Email.make(`huddler-${randomBytes(5).toString("hex")}@example.com`),
    created_at: at("2025-03-01T10:00:00.123Z")
  })
  yield* (yield* UserRepository).create(user, "hash")
  return user
})

const decodeMessage = Schema.decodeUnknownSync(HuddleMessage)

for (const engine of TestDatabase.availableEngines()) {
  layer(Storage.layer.pipe(Layer.provideMerge(UlidIds.layer), Layer.provideMerge(TestDatabase.layer(engine))), {
    excludeTestServices: true
  })(`huddle sessions in storage on ${engine}`, (it) => {
    it.effect("reads a session with its last messages, oldest first, as they were written", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const huddles = yield* HuddleRepository
        const ids = yield* Ids
        const owner = yield* createdUser
        const session = new HuddleSession({
          id: yield* ids.next("hud"),
          title: "Huddle",
          org_id: null,
          workspace_id: null,
          created_at: at("2025-03-02T10:00:00.000Z"),
          updated_at: at("2025-03-02T10:00:03.000Z")
        })
        // Decoded from the wire's form, so that nested values are their classes (Usage, Reference …).
        const message = (n: number, fields: Record<string, unknown>) =>
          Effect.map(ids.next("msg"), (id) =>
            decodeMessage({
              id,
              role: "user",
              content: `message ${n}`,
              mode: null,
              intent_id: null,
              models: [],
              usage: null,
              credits_charged: 0,
              references: [],
              created_at: `2025-03-02T10:00:0${n}.${n}00Z`,
              ...fields
            }))
        const question = yield* message(1, {})
        const answer = yield* message(2, {
          role: "assistant",
          mode: "multi",
          models: ["model-a", "model-b"],
          usage: { input_tokens: 12, output_tokens: 34 },
          credits_charged: 12_345_678_901,
          references: [{ path: "src/a.ts", start_line: 1, end_line: 9, why: "defines it" }],
          consensus: {
            text: "Both agree.",
            position: "Agreed",
            agreement_ratio: 1,
            participants: [],
            dissents: [],
            dropped: [{ seat: 2, model: "model-b", round: "critique", reason: "timeout" }],
            rounds: 4,
            chair: { seat: 1, model: "model-a", replaced: [] },
            degraded: true,
            degraded_reasons: ["a participant dropped"],
            planned_participants: 2
          }
        })
        const last = yield* message(3, { content: "the last" })
        yield* sql`WITH ${yield* addingMessage(sql, session.id, question, { session, userId: owner.id })} SELECT 1`
        for (const next of [answer, last]) yield* sql`WITH ${yield* addingMessage(sql, session.id, next)} SELECT 1`
        const written = new HuddleSession({ ...session, updated_at: last.created_at })

        expect(yield* huddles.findSession(owner.id, session.id, 10)).toEqual(
          Option.some({ session: written, messages: [question, answer, last] })
        )
        expect(yield* huddles.findSession(owner.id, session.id, 2)).toEqual(
          Option.some({ session: written, messages: [answer, last] })
        )
        const stranger = yield* createdUser
        expect(yield* huddles.findSession(stranger.id, session.id, 10)).toEqual(Option.none())

        yield* sql`DELETE FROM huddle_messages WHERE session_id = ${session.id}`
        expect(yield* huddles.findSession(owner.id, session.id, 10)).toEqual(Option.some({ session: written, messages: [] }))
      }))
  })
}
