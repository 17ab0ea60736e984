import { Engine } from "@huddle/adapters"
import { Accounts } from "@huddle/domain/accounts/Accounts"
import { Authentication } from "@huddle/domain/accounts/Authentication"
import { Huddles, replyOf } from "@huddle/domain/huddle/Huddles"
import { outcomeOf } from "@huddle/domain/huddle/PipelineEvent"
import { Intents } from "@huddle/domain/huddle/Intents"
import { RequestScopes } from "@huddle/domain/request/RequestScope"
import { EmailInput } from "@huddle/domain/identity/User"
import { Effect, Redacted, Schema, Stream } from "effect"

export const program = Effect.gen(function*() {
  const accounts = yield* Accounts
  const authentication = yield* Authentication
  const huddles = yield* Huddles
  const intents = yield* Intents
  const scopes = yield* RequestScopes

  // A user of the embedding service, and a principal to act as them.
  const email = Schema.decodeSync(EmailInput)("ada@example.com")
  const password = Redacted.make("correct horse battery")
  yield* accounts.signup({ email, password })
  const { token } = yield* accounts.login({ email, password })
  const principal = yield* authentication.authenticate(token)
  // Where their requests run: here their personal context (an org id would select one of theirs).
  const scope = yield* scopes.resolve(principal, {})

  // A huddle is a stream of events; here following its progress as it happens.
  const stages: Array<string> = []
  const reply = yield* huddles.start(scope, { input: "What can you help our team with?" }).pipe(
    Stream.tap((event) => Effect.sync(() => event._tag === "Stage" && stages.push(`${event.stage}:${event.status}`))),
    replyOf
  )

  // An intent, as JSON-RPC's intent.submit would run it, events unread.
  const { intent } = yield* outcomeOf(intents.submit({ scope, sessionId: null, input: "Summarise our open questions" }))

  const profile = yield* accounts.profile(principal)
  return { reply, stages, intent, balance: profile.credits.balance }
})

/** Runs the program on an embedded database (in memory when no directory is given). */
export const main = (dataDir?: string) =>
  Effect.runPromise(Effect.provide(program, Engine.layer({ storage: { _tag: "Pglite", dataDir } })))
