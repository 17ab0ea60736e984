import { Engine } from "@huddle/adapters"
import { Accounts } from "@huddle/domain/services/Accounts"
import { Authentication } from "@huddle/domain/services/Authentication"
import { Huddles } from "@huddle/domain/services/Huddles"
import { Intents } from "@huddle/domain/services/Intents"
import { EmailInput } from "@huddle/domain/User"
import { Effect, Redacted, Schema } from "effect"

export const program = Effect.gen(function*() {
  const accounts = yield* Accounts
  const authentication = yield* Authentication
  const huddles = yield* Huddles
  const intents = yield* Intents

  // A user of the embedding service, and a principal to act as them.
  const email = Schema.decodeSync(EmailInput)("ada@example.com")
  const password = Redacted.make("correct horse battery")
  yield* accounts.signup({ email, password })
  const { token } = yield* accounts.login({ email, password })
  const principal = yield* authentication.authenticate(token)

  // A huddle, following its progress as it happens.
  const stages: Array<string> = []
  const reply = yield* huddles.start(
    principal,
    { input: "What can you help our team with?", orgId: null, workspaceId: null },
    (event) => Effect.sync(() => event._tag === "Stage" && stages.push(`${event.stage}:${event.status}`))
  )

  // An intent, as JSON-RPC's intent.submit would run it.
  const { intent } = yield* intents.submit(
    { principal, orgId: null, workspaceId: null, sessionId: null, input: "Summarise our open questions" },
    () => Effect.void
  )

  const profile = yield* accounts.profile(principal)
  return { reply, stages, intent, balance: profile.credits.balance }
})

/** Runs the program on an embedded database (in memory when no directory is given). */
export const main = (dataDir?: string) =>
  Effect.runPromise(Effect.provide(program, Engine.layer({ storage: { _tag: "Pglite", dataDir } })))
